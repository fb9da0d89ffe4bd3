// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Section 6): V-shape
// placement (device i holds stages i and 2p−1−i), split backward, and per device i:
//   warm-up    2(p−i)−1 first-chunk forwards, i pairs (second-chunk F, first-chunk F), then
//              p−i triples (second-chunk F, B, W);
//   steady     (F, B, W) on the first chunk then (F, B, W) on the second, until every
//              forward has run;
//   cool-down  i pairs of B (first chunk, then second), p−i pairs (first-chunk B, oldest
//              first-chunk W), then the remaining W's, second chunk first.
// The counts are those of the paper's Fig. 7 (and of PyTorch's ScheduleZBVZeroBubble). Each
// device holds at most 2p chunk activations, i.e. p full-stage microbatches (1F1B's peak),
// and with F = B = W and no communication no device idles within its own span once m ≥ 2p.
// The order is built for max(m, 2p−1) microbatches and the surplus ones are dropped, which
// keeps it valid (dependencies never cross microbatches) for small m.
#include <algorithm>

#include "generators.hpp"
#include "schedules/placement.hpp"
#include "v_order.hpp"
#include "v_plan.hpp"

namespace pipesim::detail {

Schedule zb_v_order(const GeneratorOptions& o, int peak) {
    const int p = o.devices;
    const int m = o.microbatches;
    const int n = std::max(m, 2 * p - 1);  // microbatches of the full pattern
    Schedule s = make_empty_schedule("zb-v", p, m, 2, vshape_placement(p, 2));
    // Before its first backward device i runs second[i] second-chunk forwards (the last one
    // in the first F, B, W triple below) and first[i] first-chunk ones: i + 1 and 2p − 1 − i
    // for ZB-V's peak of 2p chunks. For a lower peak the later devices run fewer second-chunk
    // forwards, and each device at least one first-chunk forward more than the next (which
    // waits for them).
    const int chunks = peak > 0 ? peak : 2 * p;
    std::vector<int> first(static_cast<std::size_t>(p));
    std::vector<int> second(first.size());
    for (int i = p - 1; i >= 0; --i) {
        second[i] = std::max(1, std::min(i + 1, chunks / 2));
        first[i] = std::max(second[i], chunks - second[i]);
        if (i < p - 1 && first[i] <= first[i + 1]) {
            first[i] = first[i + 1] + 1;
            second[i] = std::max(1, std::min(second[i], chunks - first[i]));
        }
    }
    for (int i = 0; i < p; ++i) {
        auto& ops = s.device_ops[i];
        ops.reserve(static_cast<std::size_t>(6 * m));
        VDeviceOrder d(ops, i, 2 * p - 1 - i, m);
        // The pattern runs n ≥ 2p − 1 microbatches and drops those past m: with few of them
        // each device stops once it has written all of its ops (at p = 512, m = 1 the rest
        // was 99.9 % of the loops).
        for (int k = 0; k < first[i] - (second[i] - 1) && !d.complete(); ++k)
            d.f(0);
        for (int k = 0; k < second[i] - 1 && !d.complete(); ++k) {
            d.f(1);
            d.f(0);
        }
        for (int k = 0; k < p - i && !d.complete(); ++k)
            d.fbw(1);
        while ((d.count(Pass::F, 0) < n || d.count(Pass::F, 1) < d.count(Pass::F, 0)) &&
               !d.complete()) {
            if (d.count(Pass::F, 0) < n) d.f(0);
            d.b(0);
            d.w(0);
            d.fbw(1);
        }
        for (int k = 0; k < i && !d.complete(); ++k) {
            d.b(0);
            d.b(1);
        }
        for (int k = 0; k < p - i && !d.complete(); ++k) {
            d.b(0);
            d.w(0);
        }
        for (int chunk : {1, 0})
            while (d.count(Pass::W, chunk) < n && !d.complete())
                d.w(chunk);
    }
    return s;
}

Schedule generate_zb_v(const GeneratorOptions& o) {
    std::vector<Schedule> unit_orders;  // moved in: a braced list would copy it
    unit_orders.push_back(zb_v_order(o));
    if (plans_with_costs(o)) unit_orders.push_back(v_zb_order(o));  // a candidate when planning
    return plan_v_schedule(o, std::move(unit_orders), {4, 3, 2}, "zb-v",
                           Preselect::small_uncompacted);
}

}  // namespace pipesim::detail
