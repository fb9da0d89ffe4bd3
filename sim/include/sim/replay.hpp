#pragma once
// The exact analytic engine: replays a schedule with fixed pass durations and latency.

#include <vector>

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
    /// Expert-parallel all-to-all time (dispatch + combine) of each virtual stage's F and of
    /// its input-gradient backward (B or BW), one entry per stage, or empty for none. The
    /// device waits for it: it is added to those ops' durations (and to their busy time),
    /// except what an F&B pair hides (fb_overlap). Entries finite and ≥ 0.
    std::vector<double> all_to_all = {};
    /// Share, 0..1, of an F&B pair's all-to-all time hidden behind the other op's compute
    /// (DeepSeek-V3 report §3.2.1: the forward's dispatch/combine runs during the backward's
    /// computation and the reverse). A pair of F (compute f, all-to-all a_f) and backward
    /// (compute b, all-to-all a_b) lasts f + a_f + b + a_b − fb_overlap·(min(a_f, b) +
    /// min(a_b, f)): never less than its compute f + b. Pipeline (p2p) latency is a delay on
    /// the dependency, never device time, so there is none of it to hide.
    double fb_overlap = 0;
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
/// stage's pass duration (plus its all-to-all time). An F&B pair (Schedule::fb_pairs) starts
/// when both its ops could and lasts as ReplayOptions::fb_overlap says; both outputs leave
/// at its end. Runs in time linear in the number of ops with no per-op allocation
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
    /// Per device, the start of its last weight-gradient op (W or BW; 0 for a device with
    /// none): where an overlapped data-parallel gradient reduction may begin.
    std::vector<double> last_gradient_start;
    /// Per device, the end of its first F (0 for a device with none): what a parameter
    /// all-gather started with the iteration may hide behind.
    std::vector<double> first_forward_end;
};

/// replay() that also computes the metrics while the ops are timed, so that with
/// `record_ops` false no per-op record is kept: besides the schedule (12 bytes per op) the
/// replay then holds 12 bytes per (microbatch, stage, F or backward). Throws as replay(), and
/// std::invalid_argument unless `memory` has one entry per virtual stage.
ReplayResult replay_with_metrics(const Schedule& schedule, const StageCosts& costs,
                                 const MemoryModel& memory, const ReplayOptions& options = {});

}  // namespace pipesim::sim
