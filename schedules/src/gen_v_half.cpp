// V-Half (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024): the
// V-shape block whose first-chunk forwards and second-chunk backwards advance two slots per
// device (v_half_block). Peak activation ⌊(p+2)/2⌋ full-stage microbatches, the paper's, for
// every p; bubble about half of 1F1B's with F = B = W.
//   Odd p: the offset-2 block, repeated, squeezed and reordered.
//   Even p: the offset-2 block alone holds p/2 + 1.5 (odd devices' first-chunk lifespans end
//   just past a multiple of the interval), so the turn of the V waits half an interval, as in
//   the authors' V-Half pattern: device i's first-chunk stage then lives 6(p − ⌊(i−1)/2⌋)
//   slots and its second-chunk stage rounds up to ⌈i/2⌉ + 1 intervals, p + 2 chunks together.
//   The delay would lengthen the warm-up, so the repeated block is filled
//   (BlockScheduleOptions::fill_idle) within that bound instead of reordered. Measured with
//   unit costs and no communication, for p ≥ 4 and m ≥ p − 1: peak p/2 + 1 and bubble
//   (3p − 7)/2 stage times (1F1B: 3(p − 1)), below the offset-2 block's (p = 4: 2.5 against
//   4.5; p = 16: 20.5 against 24; p = 64: 92.5 against 102); p = 2: zero bubble for m ≥ 3.
#include "block_timing.hpp"
#include "generators.hpp"
#include "schedules/block_catalog.hpp"
#include "v_plan.hpp"

namespace pipesim::detail {

Schedule generate_v_half(const GeneratorOptions& o) {
    const bool even = o.devices % 2 == 0;
    std::vector<UnitOrder> unit_orders;  // moved in: a braced list would copy it
    // The unit orders come with the figures their fill or reorder saw: planning with unit
    // costs and no latency need not time them again.
    auto unit_order = [&](const BlockScheduleOptions& options) {
        return schedule_from_block_seen(v_half_block(o.devices), o.microbatches, options);
    };
    unit_orders.push_back(unit_order(BlockScheduleOptions{.reorder = true, .fill_idle = even}));
    // With a latency, the filled warm-up leaves no slack for it: the order only reordered, as
    // odd p has it, is a candidate too (p = 32, latency 3 of a 3-unit F: 17.9 % bubble against
    // the filled order's 27.8 %).
    if (even && plans_with_costs(o) && o.planning.comm_latency > 0)
        unit_orders.push_back(unit_order(BlockScheduleOptions{.reorder = true}));
    // Orders of a block that passed check_block, repeated and filled or reordered within
    // their devices: their structure holds.
    return plan_v_schedule(o, std::move(unit_orders), {2, 1}, "v-half", Preselect::mid_sized,
                           BestPlan::Structure::known);
}

}  // namespace pipesim::detail
