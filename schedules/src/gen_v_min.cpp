// V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024): the
// V-shape block whose first-chunk forwards and second-chunk backwards advance one slot per
// device, repeated every 6 slots, squeezed and reordered. Peak activation ⌊(p+4)/3⌋ full-stage
// microbatches (about 1/3 of 1F1B's p); bubble about 2/3 of 1F1B's with F = B = W.
#include "generators.hpp"
#include "schedules/block_catalog.hpp"
#include "v_plan.hpp"

namespace pipesim::detail {

Schedule generate_v_min(const GeneratorOptions& o) {
    std::vector<Schedule> unit_orders;  // moved in: a braced list would copy it
    unit_orders.push_back(schedule_from_block(vshape_block(o.devices, 1), o.microbatches));
    return plan_v_schedule(o, std::move(unit_orders), {1}, "v-min", Preselect::mid_sized);
}

}  // namespace pipesim::detail
