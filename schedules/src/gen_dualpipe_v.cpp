// DualPipeV (DeepSeek, the "cut-in-half" DualPipe of github.com/deepseek-ai/DualPipe): V-shape
// placement (device i holds stages i and 2p−1−i), every microbatch through all 2p stages.
// Device i runs DualPipe's eight-step order (append_dualpipe_order in v_order.hpp) as rank i
// of p ranks, with chunk 0 its first stage and chunk 1 its second. Its "F&B" pairs are kept
// as overlapped pairs (Schedule::fb_pairs): F and a full backward BW started together once
// both inputs are there, lasting F + B + W of a chunk less what the replay's overlap option
// hides (DeepSeek's table counts the pair as one op). The order is written for max(m, 2p)
// microbatches; ops of the surplus ones are dropped (see v_order.hpp).
#include <algorithm>

#include "generators.hpp"
#include "schedules/placement.hpp"
#include "v_order.hpp"

namespace pipesim::detail {

Schedule generate_dualpipe_v(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    Schedule s = make_empty_schedule("dualpipe-v", p, m, 2, vshape_placement(p, 2));
    s.fb_pairs.resize(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(6 * m));
        VDeviceOrder d(ops, i, 2 * p - 1 - i, m);
        d.record_pairs(s.fb_pairs[static_cast<std::size_t>(i)]);
        append_dualpipe_order(d, p, i, std::max(m, 2 * p));
    }
    return s;
}

}  // namespace pipesim::detail
