// DualPipeV (DeepSeek, the "cut-in-half" DualPipe of github.com/deepseek-ai/DualPipe): V-shape
// placement (device i holds stages i and 2p−1−i), every microbatch through all 2p stages.
// Per device i, with F0/F1 the forwards of its first/second chunk, B the input-gradient
// backward (its W queued), BW a full backward and "F&B" an overlapped pair:
//   1. 2(p−1−i) F0            2. i+1 × (F0, F1)          3. p−1−i × (B1, queued W, F1)
//   4. m−2p+i+1 × (F0&B1, F1&B0)                       5. p−1−i × (B1, F1&B0)
//   6. i+1 × (B1, B0), fused BW until half-way through (odd i: before B1, even i: before B0),
//      split B (W queued) after
//   7. p−1−i × (queued W, B0 split or fused as in 6)   8. i+1 × queued W.
// The IR has no overlapped op: an "F&B" pair is its F followed by its full backward BW, run
// back to back on the device, so F&B := F + B + W of a chunk here (DeepSeek's table counts it
// as one overlapped op). The order is written for max(m, 2p) microbatches; ops of the surplus
// ones are dropped (see v_order.hpp).
#include <algorithm>

#include "generators.hpp"
#include "schedules/placement.hpp"
#include "v_order.hpp"

namespace pipesim::detail {

Schedule generate_dualpipe_v(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    const int n = std::max(m, 2 * p);
    Schedule s = make_empty_schedule("dualpipe-v", p, m, 2, vshape_placement(p, 2));
    for (int i = 0; i < p; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(6 * m));
        VDeviceOrder d(ops, i, 2 * p - 1 - i, m);
        for (int k = 0; k < 2 * (p - 1 - i); ++k)
            d.f(0);
        for (int k = 0; k <= i; ++k) {
            d.f(0);
            d.f(1);
        }
        for (int k = 0; k < p - 1 - i; ++k) {
            d.b(1);
            d.w_pending();
            d.f(1);
        }
        for (int k = 0; k < n - 2 * p + i + 1; ++k) {
            d.f(0);
            d.bw(1);
            d.f(1);
            d.bw(0);
        }
        for (int k = 0; k < p - 1 - i; ++k) {
            d.bw(1);
            d.f(1);
            d.bw(0);
        }
        bool split = false;
        auto backward = [&](int chunk) { split ? d.b(chunk) : d.bw(chunk); };
        for (int k = 0; k <= i; ++k) {
            const bool half_way = k == (i + 1) / 2;
            if (half_way && i % 2 == 1) split = true;
            backward(1);
            if (half_way && i % 2 == 0) split = true;
            backward(0);
        }
        for (int k = 0; k < p - 1 - i; ++k) {
            d.w_pending();
            backward(0);
        }
        for (int k = 0; k <= i; ++k)
            d.w_pending();
    }
    return s;
}

}  // namespace pipesim::detail
