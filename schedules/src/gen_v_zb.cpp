// V-ZB (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024): the
// V-shape building block whose first-chunk forwards and second-chunk backwards advance four
// pass lengths per device (vshape_block offset 4; the greedy placer makes the other two
// chains advance two). Its lifespan bound is p full-stage microbatches, 1F1B's peak, and its
// steady state is ZB-V's: every device runs F, B and W of both chunks in each interval with
// no idle slot. The block is repeated and squeezed, then filled (BlockScheduleOptions::
// fill_idle): a device waiting in the warm-up runs the next microbatches' first-chunk
// forwards while its memory stays within the bound p, and in the cool-down runs each
// backward as soon as it arrives, deferring its W's into the waits. That gives the warm-up
// of ZB-V (Zero Bubble Pipeline Parallelism, ICLR 2024, §6): device i (from 0) runs 2p−1−i
// first-chunk and i+1 second-chunk forwards (2p chunks, its peak p) before its first backward.
// Measured with F = B = W, no communication: zero bubble and peak p for every m ≥ 2p − 1
// (makespan 3m + (p−1)/2 stage times, ZB-V's); for p ≤ m < 2p − 1 the bubble is (2p−1−m)/2.
#include "generators.hpp"
#include "schedules/block_catalog.hpp"
#include "v_plan.hpp"

namespace pipesim::detail {

Schedule v_zb_order(const GeneratorOptions& o) {
    return schedule_from_block(vshape_block(o.devices, 4, {}, "v-zb"), o.microbatches,
                               BlockScheduleOptions{.reorder = true, .fill_idle = true});
}

Schedule generate_v_zb(const GeneratorOptions& o) {
    std::vector<Schedule> unit_orders;  // moved in: a braced list would copy it
    unit_orders.push_back(v_zb_order(o));
    if (plans_with_costs(o)) unit_orders.push_back(zb_v_order(o));  // a candidate when planning
    return plan_v_schedule(o, std::move(unit_orders), {4, 3, 2}, "v-zb",
                           Preselect::small_uncompacted);
}

}  // namespace pipesim::detail
