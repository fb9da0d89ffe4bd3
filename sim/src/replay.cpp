#include "sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

Timeline replay(const Schedule& schedule, const StageCosts& costs, const ReplayOptions& options) {
    // Structure first; the timed walk below checks order and deadlock (one walk, not two).
    if (auto issue = validate_structure(schedule))
        throw InvalidSchedule(
            fmt::format("schedule '{}' is invalid: {}", schedule.name, issue->message));
    check_stage_costs(costs, schedule.stages());
    if (!std::isfinite(options.comm_latency) || options.comm_latency < 0)
        throw std::invalid_argument(fmt::format(
            "communication latency must be a finite number ≥ 0, got {}", options.comm_latency));

    const std::vector<double> duration = pass_durations(costs);

    Timeline timeline = empty_timeline(schedule, "unit");
    std::vector<double> end_time;
    const double latency = options.comm_latency;
    // Each F, B or BW has at most one input from another device; W has none.
    if (options.record_transfers) timeline.transfers.reserve(schedule.op_count());
    auto issue = asap_walk(
        schedule, duration, latency, end_time,
        [&](int device, int, const Op& op, const Predecessors& preds, double start, double end) {
            // Each device's ops are visited in its order, so position == size here.
            timeline.device_ops[device].push_back(TimedOp{op, start, end});
            if (!options.record_transfers) return;
            for (int k = 0; k < preds.count; ++k) {
                if (preds.device[k] == device) continue;
                const double sent = end_time[preds.slot[k]];
                timeline.transfers.push_back(Transfer{preds.device[k], device, preds.op[k], op,
                                                      options.message_bytes, sent, sent + latency});
            }
        });
    if (issue)
        throw InvalidSchedule(
            fmt::format("schedule '{}' is invalid: {}", schedule.name, issue->message));
    return timeline;
}

}  // namespace pipesim
