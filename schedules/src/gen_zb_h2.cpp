// ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Fig. 3 bottom): device i
// runs 2(p−1−i)+1 warm-up forwards, filling the wait for its first B, then repeats
// B, W, F with each W delayed by 2i steps, which pushes the W's into the tail and turns
// the trapezoid into a parallelogram. Device i then holds at most 2p−1 microbatches'
// activations; with uniform stages and no communication every device's idle time is
// (p−1)(F+B−2W) when that is ≥ 0 and m ≥ 2p−1 (the paper's Table 2).
#include <algorithm>

#include "generators.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

Schedule generate_zb_h2(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    Schedule s = make_empty_schedule("zb-h2", p, m, 1, looped_placement(p, 1));
    for (int i = 0; i < p; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(3 * m));
        const int warmup = std::min(2 * (p - 1 - i) + 1, m);
        const int w_delay = 2 * i;
        for (int mb = 0; mb < warmup; ++mb)
            ops.push_back({Pass::F, mb, i});
        int next_w = 0;
        for (int mb = 0; mb < m; ++mb) {
            ops.push_back({Pass::B, mb, i});
            if (mb - w_delay >= 0) ops.push_back({Pass::W, next_w++, i});
            if (warmup + mb < m) ops.push_back({Pass::F, warmup + mb, i});
        }
        while (next_w < m)
            ops.push_back({Pass::W, next_w++, i});
    }
    return s;
}

}  // namespace pipesim::detail
