#pragma once
// Timelines for the viz tests, made by the analytic replay of generated schedules.

#include <string>

#include "schedules/costs.hpp"
#include "schedules/metrics.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"
#include "sim/replay.hpp"

namespace pipesim::test {

/// The replayed timeline of a generated schedule with F, B, W = 1 per full stage (split over
/// the v chunks) and the given latency, transfers recorded.
inline Timeline replayed(const std::string& name, int p, int m, int v = 0, double comm = 0) {
    const Schedule schedule = generate_schedule(name, GeneratorOptions{p, m, v, 0});
    sim::ReplayOptions options;
    options.comm_latency = comm;
    return sim::replay(schedule, uniform_stage_costs(p, schedule.chunks, 1.0, 1.0, 1.0), options);
}

inline MemoryModel unit_memory(const Timeline& timeline) {
    return unit_memory_model(timeline.devices, timeline.chunks);
}

inline std::size_t op_count(const Timeline& timeline) {
    std::size_t n = 0;
    for (const auto& ops : timeline.device_ops)
        n += ops.size();
    return n;
}

}  // namespace pipesim::test
