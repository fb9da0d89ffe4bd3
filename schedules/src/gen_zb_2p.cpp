// ZB-2P (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): the paper's automatic
// schedule under a memory cap of 2p·M_B, planned with the given pass times and latency
// (generate_zb_capped in gen_zb_1p.cpp).
#include "generators.hpp"

namespace pipesim::detail {

Schedule generate_zb_2p(const GeneratorOptions& o) {
    return generate_zb_capped(o, "zb-2p", 2);
}

}  // namespace pipesim::detail
