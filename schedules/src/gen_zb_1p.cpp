// ZB-1P (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): the paper's automatic
// schedule under a memory cap of 1p·M_B, built by its greedy heuristic (auto_schedule.hpp)
// with unit pass times F = B = W and no communication.
#include "generators.hpp"
#include "schedules/auto_schedule.hpp"

namespace pipesim::detail {

Schedule generate_zb_capped(const GeneratorOptions& o, const char* name, int cap_per_device) {
    AutoScheduleOptions options;
    options.name = name;
    options.devices = o.devices;
    options.microbatches = o.microbatches;
    options.memory_limit = cap_per_device * o.devices;
    return auto_schedule(options);
}

Schedule generate_zb_1p(const GeneratorOptions& o) {
    return generate_zb_capped(o, "zb-1p", 1);
}

}  // namespace pipesim::detail
