// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Fig. 3 top): the 1F1B
// order with the backward split into B and W, where device i delays each W by i steps.
// Warm-up is 1F1B's (p−1−i forwards), so device i holds at most p microbatches' activations
// (peak p·M_B on every device, as 1F1B's device 0); with uniform stages and no
// communication the bubble is (p−1)(F+B−W) for W ≤ F (the paper's Table 2), (p−1)(F+B−min(F,W))
// in general.
#include <algorithm>

#include "generators.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

Schedule generate_zb_h1(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    Schedule s = make_empty_schedule("zb-h1", p, m, 1, looped_placement(p, 1));
    for (int i = 0; i < p; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(3 * m));
        const int warmup = std::min(p - 1 - i, m);
        const int w_delay = i;
        for (int mb = 0; mb < warmup; ++mb)
            ops.push_back({Pass::F, mb, i});
        int next_w = 0;
        for (int mb = 0; mb < m; ++mb) {
            if (warmup + mb < m) ops.push_back({Pass::F, warmup + mb, i});
            ops.push_back({Pass::B, mb, i});
            if (mb - w_delay >= 0) ops.push_back({Pass::W, next_w++, i});
        }
        while (next_w < m)
            ops.push_back({Pass::W, next_w++, i});
    }
    return s;
}

}  // namespace pipesim::detail
