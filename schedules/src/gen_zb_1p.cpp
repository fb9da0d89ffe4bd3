// ZB-1P (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): the paper's automatic
// schedule under a memory cap of 1p·M_B, built by its greedy heuristic (auto_schedule.hpp)
// with unit pass times F = B = W and no communication.
#include "generators.hpp"
#include "schedules/auto_schedule.hpp"

namespace pipesim::detail {

Schedule generate_zb_1p(const GeneratorOptions& o) {
    AutoScheduleOptions options;
    options.name = "zb-1p";
    options.devices = o.devices;
    options.microbatches = o.microbatches;
    options.memory_limit = 1 * o.devices;
    return auto_schedule(options);
}

}  // namespace pipesim::detail
