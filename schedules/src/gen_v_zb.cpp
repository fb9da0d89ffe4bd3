// V-ZB (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024): the
// V-shape building block whose first-chunk forwards and second-chunk backwards advance four
// pass lengths per device (vshape_block offset 4; the greedy placer makes the other two
// chains advance two). Its lifespan bound is p full-stage microbatches, 1F1B's peak, and its
// steady state is ZB-V's: every device runs F, B and W of both chunks in each interval with
// no idle slot. Repeated, squeezed and reordered by the framework, the warm-up and cool-down
// still idle about p chunk passes per device (the paper removes them with a hand-tuned
// warm-up; zb-v has one with the same steady state). Peak p with F = B = W.
#include "generators.hpp"
#include "schedules/block_catalog.hpp"

namespace pipesim::detail {

Schedule generate_v_zb(const GeneratorOptions& o) {
    Schedule s = schedule_from_block(vshape_block(o.devices, 4, {}, "v-zb"), o.microbatches);
    s.name = "v-zb";
    return s;
}

}  // namespace pipesim::detail
