// 1F1B (PipeDream-Flush, Narayanan et al., 2021): device i runs min(p−1−i, m) warm-up
// forwards, then alternates one forward and one fused backward, then drains the backwards.
#include <algorithm>

#include "generators.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

Schedule generate_1f1b(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    Schedule s = make_empty_schedule("1f1b", p, m, 1, looped_placement(p, 1));
    for (int i = 0; i < p; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(2 * m));
        const int warmup = std::min(p - 1 - i, m);
        for (int mb = 0; mb < warmup; ++mb)
            ops.push_back({Pass::F, mb, i});
        for (int mb = 0; mb < m; ++mb) {
            if (warmup + mb < m) ops.push_back({Pass::F, warmup + mb, i});
            ops.push_back({Pass::BW, mb, i});
        }
    }
    return s;
}

}  // namespace pipesim::detail
