// V-Half (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024): the
// V-shape block whose first-chunk forwards and second-chunk backwards advance two slots per
// device. Peak activation ⌊(p+2)/2⌋ full-stage microbatches for odd p and p/2 + 1.5 for
// even p (about half of 1F1B's); bubble about half of 1F1B's with F = B = W.
#include "generators.hpp"
#include "schedules/block_catalog.hpp"

namespace pipesim::detail {

Schedule generate_v_half(const GeneratorOptions& o) {
    Schedule s = schedule_from_block(vshape_block(o.devices, 2), o.microbatches);
    s.name = "v-half";
    return s;
}

}  // namespace pipesim::detail
