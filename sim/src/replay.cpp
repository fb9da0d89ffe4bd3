#include "sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"  // split_backward_flags
#include "schedules/validate.hpp"

namespace pipesim::sim {

namespace {

[[noreturn]] void throw_invalid(const Schedule& schedule, const std::string& message) {
    throw InvalidSchedule(fmt::format("schedule '{}' is invalid: {}", schedule.name, message));
}

// What the walk cannot check: the structure (unless validated), the costs, the latency.
void check_replay(const Schedule& schedule, const StageCosts& costs, const ReplayOptions& options) {
    if (!options.validated)
        if (auto issue = validate_structure(schedule)) throw_invalid(schedule, issue->message);
    check_stage_costs(costs, schedule.stages());
    if (!std::isfinite(options.comm_latency) || options.comm_latency < 0)
        throw std::invalid_argument(fmt::format(
            "communication latency must be a finite number ≥ 0, got {}", options.comm_latency));
}

// Walks a checked schedule and fills the timeline as `options` asks, calling
// also(device, op, start, finish) for every op.
template <class Also>
Timeline replay_walk(const Schedule& schedule, const StageCosts& costs,
                     const ReplayOptions& options, Also&& also) {
    const std::vector<double> duration = pass_durations(costs);
    Timeline timeline = empty_timeline(schedule, "unit", options.record_ops);
    // The producer of a backward input is B or BW: known per (microbatch, stage) only when
    // transfers are recorded.
    const std::vector<std::uint8_t> split =
        options.record_transfers ? split_backward_flags(schedule) : std::vector<std::uint8_t>();
    if (options.record_transfers) timeline.transfers.reserve(schedule.op_count());
    const double latency = options.comm_latency;
    const auto microbatches = static_cast<std::size_t>(schedule.microbatches);
    const bool complete = asap_dataflow(
        schedule, duration, latency,
        [&](int device, const Op& op, const DataflowInput* in, int count, double start,
            double finish) {
            also(device, op, start, finish);
            if (options.record_ops)
                timeline.device_ops[device].push_back(TimedOp{op, start, finish});
            if (!options.record_transfers) return;
            for (int k = 0; k < count; ++k) {
                if (in[k].device == device) continue;
                // The input is the previous stage's F or the next stage's backward.
                const int stage = static_cast<int>(in[k].slot / 2 / microbatches);
                const std::size_t pair = static_cast<std::size_t>(op.microbatch) *
                                             static_cast<std::size_t>(schedule.stages()) +
                                         static_cast<std::size_t>(stage);
                const bool forward = in[k].slot % 2 == 0;
                const Pass pass = forward ? Pass::F : split[pair] ? Pass::B : Pass::BW;
                timeline.transfers.push_back(
                    Transfer{in[k].device, device, Op{pass, op.microbatch, stage}, op,
                             options.message_bytes, in[k].end, in[k].end + latency});
            }
        });
    if (!complete) {
        const auto issue = validate(schedule);
        throw_invalid(schedule, issue ? issue->message : "it cannot run to completion");
    }
    return timeline;
}

}  // namespace

Timeline replay(const Schedule& schedule, const StageCosts& costs, const ReplayOptions& options) {
    check_replay(schedule, costs, options);
    return replay_walk(schedule, costs, options, [](int, const Op&, double, double) {});
}

ReplayResult replay_with_metrics(const Schedule& schedule, const StageCosts& costs,
                                 const MemoryModel& memory, const ReplayOptions& options) {
    check_replay(schedule, costs, options);
    MetricsBuilder metrics(schedule.devices, schedule.stages(), schedule.microbatches, memory);
    ReplayResult result;
    result.timeline = replay_walk(schedule, costs, options,
                                  [&](int device, const Op& op, double start, double finish) {
                                      metrics.add(device, op, start, finish);
                                  });
    result.metrics = metrics.finish();
    return result;
}

}  // namespace pipesim::sim
