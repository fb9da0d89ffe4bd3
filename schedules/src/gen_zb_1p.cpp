// ZB-1P and ZB-2P (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3): the paper's
// automatic schedules under a memory cap of 1p·M_B and 2p·M_B, planned with the pass times
// and latency the user gives (GeneratorOptions::planning; unit times without). Like the paper,
// several candidates are built and the shortest is kept: the paper's round-based heuristic
// under each of its grid-searched choices (zero_bubble_heuristic), a greedy list schedule
// (auto_schedule) and the handcrafted schedule that fits the same cap (ZB-H1 for p·M_B,
// ZB-H2 for 2p·M_B). "Shortest" is the paper's cost: the longest device span, then the
// makespan (planned_length).
#include <fmt/format.h>

#include "generators.hpp"
#include "schedules/auto_schedule.hpp"
#include "schedules/phases.hpp"

namespace pipesim::detail {

Schedule generate_zb_capped(const GeneratorOptions& o, const char* name, int cap_per_device) {
    const PlanningCosts& costs = o.planning;
    const double cap = cap_per_device * o.devices;
    ShortestSchedule shortest;
    offer_zero_bubble_candidates(name, o.devices, o.microbatches, costs, cap, shortest);
    auto add = [&](Schedule s) {
        const PlannedLength length = planned_length(s, costs);
        shortest.offer(PlannedSchedule{std::move(s), length});
    };

    AutoScheduleOptions greedy;
    greedy.name = name;
    greedy.devices = o.devices;
    greedy.microbatches = o.microbatches;
    greedy.costs = costs;
    greedy.memory_limit = cap;
    report_phase(fmt::format("generating {}: the greedy list schedule", name));
    Schedule greedy_schedule = auto_schedule(greedy);
    report_phase(fmt::format("generating {}: timing the greedy list schedule", name));
    add(std::move(greedy_schedule));
    report_phase(fmt::format("generating {}: {}, the handcrafted schedule of its cap", name,
                             cap_per_device == 1 ? "ZB-H1" : "ZB-H2"));
    add(cap_per_device == 1 ? generate_zb_h1(o) : generate_zb_h2(o));
    report_phase(fmt::format("generating {}: keeping the shortest", name));

    Schedule chosen = shortest.take();
    chosen.name = name;
    return chosen;
}

Schedule generate_zb_1p(const GeneratorOptions& o) {
    return generate_zb_capped(o, "zb-1p", 1);
}

}  // namespace pipesim::detail
