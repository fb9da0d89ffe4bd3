// GPipe (Huang et al., 2019): each device runs all forwards, then all fused backwards.
#include "generators.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

Schedule generate_gpipe(const GeneratorOptions& o) {
    Schedule s =
        make_empty_schedule("gpipe", o.devices, o.microbatches, 1, looped_placement(o.devices, 1));
    for (int i = 0; i < o.devices; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(2 * o.microbatches));
        for (int mb = 0; mb < o.microbatches; ++mb)
            ops.push_back({Pass::F, mb, i});
        for (int mb = 0; mb < o.microbatches; ++mb)
            ops.push_back({Pass::BW, mb, i});
    }
    return s;
}

}  // namespace pipesim::detail
