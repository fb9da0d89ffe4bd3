#pragma once
// Memory-capped automatic scheduling: the Zero Bubble paper's heuristic (Qi et al., "Zero
// Bubble Pipeline Parallelism", ICLR 2024, Section 3): a timed list scheduler in which each
// device, whenever it is free, runs a backward B whose inputs have arrived, else a forward
// if its activation memory stays within the cap, else a pending W, else waits.

#include <string>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

/// What auto_schedule is asked for. Times are per virtual stage and pass (F, B, W), in any
/// unit; `memory_limit` is the cap on each device's held activations in full-stage
/// microbatch units (a chunk holds 1/v, W holds M_W = M_B until it runs).
struct AutoScheduleOptions {
    std::string name = "auto";
    int devices = 0;
    int microbatches = 0;
    int chunks = 1;
    std::vector<int> stage_device;  ///< empty: looped placement
    double f = 1, b = 1, w = 1;     ///< one chunk pass's times
    double comm_latency = 0;
    double memory_limit = 0;
};

/// The schedule the heuristic builds (valid, every device's peak ≤ memory_limit). Throws
/// std::invalid_argument when the cap is below one microbatch's activations on some device
/// (no schedule fits), naming the cap and what the smallest feasible one is.
Schedule auto_schedule(const AutoScheduleOptions& options);

}  // namespace pipesim
