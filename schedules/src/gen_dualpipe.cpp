// DualPipe (DeepSeek-V3 technical report §3.2.1; github.com/deepseek-ai/DualPipe): two copies
// of the model fed from opposite ends of the pipeline. With p devices (p even) the model has p
// stages; copy A is virtual stages 0..p−1 on devices 0..p−1, copy B stages p..2p−1 on devices
// p−1..0 (stage p+j holds the same layers as stage j), which is the V-shape placement: device
// i holds stages i and 2p−1−i. Microbatches 0..m/2−1 run through copy A, m/2..m−1 through
// copy B (Schedule::microbatch_stages), so each meets every layer once; m must be even.
//
// Device i is rank i of DeepSeek's order with half-rank h = min(i, p−1−i) in a pipeline of p/2
// half-ranks (append_dualpipe_order, shared with dualpipe-v): its "phase 0" is the copy whose
// first stage is on its own end of the pipeline (copy A for i < p/2, copy B otherwise). Its
// overlapped "F&B" pairs are kept as pairs (Schedule::fb_pairs): an F and a full backward BW
// that start together once both inputs are there and last F + B + W of a chunk, less what
// the replay's overlap option hides.
//
// DeepSeek requires m ≥ 2p; for smaller even m the order is written for 2p microbatches and
// the surplus ones are dropped (valid, but not DeepSeek's order).
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "generators.hpp"
#include "schedules/placement.hpp"
#include "v_order.hpp"

namespace pipesim::detail {

Schedule generate_dualpipe(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    if (p % 2 != 0)
        throw std::invalid_argument(fmt::format(
            "dualpipe needs an even number of devices p (two halves meet in the middle), got "
            "p={}",
            p));
    if (m % 2 != 0)
        throw std::invalid_argument(fmt::format(
            "dualpipe needs an even number of microbatches m (half per model copy), got m={}", m));
    const int half = m / 2;
    Schedule s = make_empty_schedule("dualpipe", p, m, 2, vshape_placement(p, 2));
    s.microbatch_stages.assign(static_cast<std::size_t>(m), StageRange{0, p - 1});
    std::fill(s.microbatch_stages.begin() + half, s.microbatch_stages.end(),
              StageRange{p, 2 * p - 1});
    s.fb_pairs.resize(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) {
        const bool first_half = i < p / 2;
        const int a = i;              // copy A's stage on device i
        const int b = 2 * p - 1 - i;  // copy B's stage on device i
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(3 * m));
        VDeviceOrder d = first_half ? VDeviceOrder(ops, a, b, half, 0, half)
                                    : VDeviceOrder(ops, b, a, half, half, 0);
        d.record_pairs(s.fb_pairs[static_cast<std::size_t>(i)]);
        append_dualpipe_order(d, p / 2, std::min(i, p - 1 - i), std::max(half, p));
    }
    return s;
}

}  // namespace pipesim::detail
