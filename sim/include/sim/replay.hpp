#pragma once
// The exact analytic engine: replays a schedule with fixed pass durations and latency.

#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"
#include "schedules/costs.hpp"

namespace pipesim {

/// Options of the analytic replay.
struct ReplayOptions {
    /// Latency added to every dependency between ops on different devices (time unit of the
    /// costs); dependencies within a device cost nothing. Must be finite and ≥ 0.
    double comm_latency = 0;
    /// Record one Transfer per cross-device dependency in the Timeline.
    bool record_transfers = true;
    /// Bytes carried by each recorded transfer (0: unknown).
    double message_bytes = 0;
};

/// Replays `schedule`: every op starts when its device has finished the previous op and all
/// its inputs have arrived (input end + comm_latency if on another device), and lasts its
/// stage's pass duration. Runs in time linear in the number of ops with no per-op allocation.
///
/// Throws InvalidSchedule if the schedule is invalid, std::invalid_argument for costs that do
/// not match its stages or are negative.
Timeline replay(const Schedule& schedule, const StageCosts& costs,
                const ReplayOptions& options = {});

}  // namespace pipesim
