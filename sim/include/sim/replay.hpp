#pragma once
// The exact analytic engine: replays a schedule with fixed pass durations and latency.

#include "schedules/costs.hpp"
#include "schedules/metrics.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::sim {

/// Options of the analytic replay.
struct ReplayOptions {
    /// Latency added to every dependency between ops on different devices (time unit of the
    /// costs); dependencies within a device cost nothing. Must be finite and ≥ 0.
    double comm_latency = 0;
    /// Record one Transfer per cross-device dependency in the Timeline.
    bool record_transfers = true;
    /// Bytes carried by each recorded transfer (0: unknown).
    double message_bytes = 0;
    /// Record every op with its start and end in Timeline::device_ops. false: the timeline
    /// keeps the schedule's shape and no ops (replay_with_metrics still gives every metric).
    bool record_ops = true;
    /// The schedule passed validate() (generate_schedule's and the schedule files' do), so its
    /// structure is not checked again. Never set it for a schedule that was not validated.
    bool validated = false;
};

/// Replays `schedule`: every op starts when its device has finished the previous op and all
/// its inputs have arrived (input end + comm_latency if on another device), and lasts its
/// stage's pass duration. Runs in time linear in the number of ops with no per-op allocation
/// beyond the records asked for (a TimedOp per op, a Transfer per cross-device input).
///
/// Throws InvalidSchedule if the schedule is invalid (with validate()'s message),
/// std::invalid_argument for costs that do not match its stages or are negative.
Timeline replay(const Schedule& schedule, const StageCosts& costs,
                const ReplayOptions& options = {});

/// A replay's timeline (ops and transfers as ReplayOptions asks) and its metrics.
struct ReplayResult {
    Timeline timeline;
    Metrics metrics;  ///< compute_metrics(timeline with every op, memory)
};

/// replay() that also computes the metrics while the ops are timed, so that with
/// `record_ops` false no per-op record is kept: besides the schedule (12 bytes per op) the
/// replay then holds 12 bytes per (microbatch, stage, F or backward). Throws as replay(), and
/// std::invalid_argument unless `memory` has one entry per virtual stage.
ReplayResult replay_with_metrics(const Schedule& schedule, const StageCosts& costs,
                                 const MemoryModel& memory, const ReplayOptions& options = {});

}  // namespace pipesim::sim
