// ZB-1P and ZB-2P (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3): the paper's
// automatic schedules under a memory cap of 1p·M_B and 2p·M_B. Its heuristic builds several
// candidate schedules (different warm-up choices) and keeps the shortest; here the
// candidates are the greedy list scheduler (auto_schedule.hpp) and the handcrafted schedule
// that fits the same cap (ZB-H1 for p·M_B, ZB-H2 for 2p·M_B: the warm-ups the paper's
// heuristic reduces to with F = B = W), compared with unit pass times and no communication.
#include "block_timing.hpp"
#include "generators.hpp"
#include "schedules/auto_schedule.hpp"

namespace pipesim::detail {

namespace {

double unit_makespan(const Schedule& s) {
    const Timeline t = asap_timeline(s, slot_durations(s.stages(), SlotLengths{1, 1, 1}));
    double end = 0;
    for (const auto& ops : t.device_ops)
        if (!ops.empty()) end = std::max(end, ops.back().end);
    return end;
}

}  // namespace

Schedule generate_zb_capped(const GeneratorOptions& o, const char* name, int cap_per_device) {
    AutoScheduleOptions options;
    options.name = name;
    options.devices = o.devices;
    options.microbatches = o.microbatches;
    options.memory_limit = cap_per_device * o.devices;
    Schedule best = auto_schedule(options);
    Schedule handcrafted = cap_per_device == 1 ? generate_zb_h1(o) : generate_zb_h2(o);
    if (unit_makespan(handcrafted) < unit_makespan(best)) {
        handcrafted.name = name;
        best = std::move(handcrafted);
    }
    return best;
}

Schedule generate_zb_1p(const GeneratorOptions& o) {
    return generate_zb_capped(o, "zb-1p", 1);
}

}  // namespace pipesim::detail
