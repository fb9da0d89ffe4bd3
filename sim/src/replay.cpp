#include "sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"  // split_backward_flags
#include "schedules/phases.hpp"
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
    if (!options.all_to_all.empty() &&
        options.all_to_all.size() != static_cast<std::size_t>(schedule.stages()))
        throw std::invalid_argument(
            fmt::format("all-to-all times are given for {} stages but the schedule has {}",
                        options.all_to_all.size(), schedule.stages()));
    for (const double a : options.all_to_all)
        if (!std::isfinite(a) || a < 0)
            throw std::invalid_argument(
                fmt::format("all-to-all time must be a finite number ≥ 0, got {}", a));
    if (!(options.fb_overlap >= 0 && options.fb_overlap <= 1))
        throw std::invalid_argument(
            fmt::format("the F&B overlap factor must be in 0..1, got {}", options.fb_overlap));
}

// The length of an F&B pair: both ops with their all-to-all, less the hidden share of each
// one's all-to-all, at most the other's compute (ReplayOptions::fb_overlap).
struct OverlappedPair {
    const std::vector<double>& all_to_all;
    double overlap;

    double operator()(const Op& f, const Op& b, double f_length, double b_length) const {
        if (all_to_all.empty()) return f_length + b_length;
        const double a_f = all_to_all[static_cast<std::size_t>(f.stage)];
        const double a_b = all_to_all[static_cast<std::size_t>(b.stage)];
        const double hidden =
            overlap * (std::min(a_f, b_length - a_b) + std::min(a_b, f_length - a_f));
        return f_length + b_length - hidden;
    }
};

// Walks a checked schedule and fills the timeline as `options` asks, calling
// also(device, op, start, finish) for every op.
template <bool record_ops, bool record_transfers, class Also>
Timeline replay_walk_recording(const Schedule& schedule, const StageCosts& costs,
                               const ReplayOptions& options, Also&& also) {
    std::vector<double> duration = pass_durations(costs);
    for (std::size_t s = 0; s < options.all_to_all.size(); ++s)
        for (const Pass pass : {Pass::F, Pass::B, Pass::BW})
            duration[s * pass_count + static_cast<std::size_t>(pass)] += options.all_to_all[s];
    Timeline timeline = empty_timeline(schedule, "unit", record_ops);
    // The producer of a backward input is B or BW: known per (microbatch, stage) only when
    // transfers are recorded.
    const std::vector<std::uint8_t> split =
        record_transfers ? split_backward_flags(schedule) : std::vector<std::uint8_t>();
    if (record_transfers) timeline.transfers.reserve(schedule.op_count());
    const double latency = options.comm_latency;
    const auto stages = static_cast<std::size_t>(schedule.stages());
    // How far a long replay is, every 2^20 ops (tens of milliseconds): the command line's
    // status line shows it, and Python's Ctrl-C is taken there (phases.hpp) instead of at the
    // end of a replay of seconds.
    constexpr std::size_t report_every = std::size_t{1} << 20;
    const std::size_t total = schedule.op_count();
    std::size_t timed = 0;
    const bool complete = asap_dataflow(
        schedule, duration, latency,
        [&](int device, const Op& op, const DataflowInput* in, int count, double start,
            double finish) {
            if ((++timed & (report_every - 1)) == 0 && reporting_phases())
                report_phase(
                    fmt::format("replaying {} ({} ops), {:.0f} %", schedule.name, total,
                                100.0 * static_cast<double>(timed) / static_cast<double>(total)));
            also(device, op, start, finish);
            if constexpr (record_ops)
                timeline.device_ops[device].push_back(TimedOp{op, start, finish});
            if constexpr (record_transfers) {
                for (int k = 0; k < count; ++k) {
                    if (in[k].device == device) continue;
                    // The input is the previous stage's F or the next stage's backward.
                    const std::size_t pair = in[k].slot / 2;  // output_slot()
                    const int stage = static_cast<int>(pair % stages);
                    const bool forward = in[k].slot % 2 == 0;
                    const Pass pass = forward ? Pass::F : split[pair] ? Pass::B : Pass::BW;
                    timeline.transfers.push_back(
                        Transfer{in[k].device, device, Op{pass, op.microbatch, stage}, op,
                                 options.message_bytes, in[k].end, in[k].end + latency});
                }
            }
        },
        OverlappedPair{options.all_to_all, options.fb_overlap});
    if (!complete) {
        const auto issue = validate(schedule);
        throw_invalid(schedule, issue ? issue->message : "it cannot run to completion");
    }
    return timeline;
}

// replay_walk_recording() for the records `options` asks: as template arguments, so that the
// walk without records holds no code for them in its loop.
template <class Also>
Timeline replay_walk(const Schedule& schedule, const StageCosts& costs,
                     const ReplayOptions& options, Also&& also) {
    if (options.record_ops)
        return options.record_transfers
                   ? replay_walk_recording<true, true>(schedule, costs, options, also)
                   : replay_walk_recording<true, false>(schedule, costs, options, also);
    return options.record_transfers
               ? replay_walk_recording<false, true>(schedule, costs, options, also)
               : replay_walk_recording<false, false>(schedule, costs, options, also);
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
    result.last_gradient_start.assign(static_cast<std::size_t>(schedule.devices), 0.0);
    result.first_forward_end.assign(static_cast<std::size_t>(schedule.devices), -1.0);
    result.timeline = replay_walk(schedule, costs, options,
                                  [&](int device, const Op& op, double start, double finish) {
                                      metrics.add(device, op, start, finish);
                                      // A device times its ops in its order: the last seen is its
                                      // last, the first its first.
                                      const auto d = static_cast<std::size_t>(device);
                                      if (op.pass == Pass::W || op.pass == Pass::BW)
                                          result.last_gradient_start[d] = start;
                                      if (op.pass == Pass::F && result.first_forward_end[d] < 0)
                                          result.first_forward_end[d] = finish;
                                  });
    for (double& end : result.first_forward_end)
        end = std::max(end, 0.0);
    result.metrics = metrics.finish();
    return result;
}

}  // namespace pipesim::sim
