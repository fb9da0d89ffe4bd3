#include "sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

// An op's input: the output slot it waits for and the device that produces it.
struct Input {
    std::size_t slot = 0;
    int device = 0;
};

[[noreturn]] void throw_invalid(const Schedule& schedule, const std::string& message) {
    throw InvalidSchedule(fmt::format("schedule '{}' is invalid: {}", schedule.name, message));
}

// asap_walk's timing (dependency_order.hpp) over contiguous arrays: the same visiting order as
// DependencyWalker (so transfers come out in the same order) and the same arithmetic (so
// times are bit-identical), with "done" read from the end times (−1 until done) and inputs
// computed from the op's stage instead of looked up. Calls on_op(device, op, inputs, count,
// start, finish) for every op; `end` holds every output's end (−1: never ran). Returns false
// if the schedule cannot run to completion (an input later on the same device, or a
// deadlock); validate() then names the problem.
template <class OnOp>
bool timed_walk(const Schedule& s, const std::vector<double>& duration, double latency,
                std::vector<double>& end, OnOp&& on_op) {
    const int stages = s.stages();
    const int devices = s.devices;
    const int* stage_device = s.stage_device.data();
    const StageRange* ranges = s.microbatch_stages.empty() ? nullptr : s.microbatch_stages.data();
    end.assign(output_slot_count(s.microbatches, stages), -1.0);
    std::vector<std::int32_t> waiter(end.size(), -1);
    std::vector<std::size_t> cursor(static_cast<std::size_t>(devices), 0);
    std::vector<double> device_free(static_cast<std::size_t>(devices), 0.0);
    std::vector<int> ready;
    ready.reserve(static_cast<std::size_t>(devices) * 2);
    for (int d = devices - 1; d >= 0; --d)
        ready.push_back(d);
    while (!ready.empty()) {
        const int d = ready.back();
        ready.pop_back();
        const std::vector<Op>& ops = s.device_ops[d];
        std::size_t pos = cursor[d];
        double free = device_free[d];
        for (; pos < ops.size(); ++pos) {
            const Op op = ops[pos];
            const std::size_t base =
                (static_cast<std::size_t>(op.microbatch) * static_cast<std::size_t>(stages) +
                 static_cast<std::size_t>(op.stage)) *
                2;
            Input in[2];
            int count = 0;
            switch (op.pass) {
                case Pass::F:
                    if (op.stage > (ranges ? ranges[op.microbatch].first : 0))
                        in[count++] = {base - 2, stage_device[op.stage - 1]};
                    break;
                case Pass::B:
                case Pass::BW:
                    in[count++] = {base, d};
                    if (op.stage < (ranges ? ranges[op.microbatch].last : stages - 1))
                        in[count++] = {base + 3, stage_device[op.stage + 1]};
                    break;
                case Pass::W:
                    in[count++] = {base + 1, d};
                    break;
            }
            double start = free;
            int waiting = -1;
            for (int k = 0; k < count; ++k) {
                const double input_end = end[in[k].slot];
                if (input_end < 0) {
                    waiting = k;
                    break;
                }
                start = std::max(start, input_end + (in[k].device == d ? 0.0 : latency));
            }
            if (waiting >= 0) {
                if (in[waiting].device == d) return false;
                waiter[in[waiting].slot] = d;
                break;
            }
            const double finish = start + duration[static_cast<std::size_t>(op.stage) * pass_count +
                                                   static_cast<std::size_t>(op.pass)];
            if (op.pass != Pass::W) {
                const std::size_t slot = base + (op.pass == Pass::F ? 0 : 1);
                end[slot] = finish;
                if (waiter[slot] >= 0) {
                    ready.push_back(waiter[slot]);
                    waiter[slot] = -1;
                }
            }
            free = finish;
            on_op(d, op, in, count, start, finish);
        }
        cursor[d] = pos;
        device_free[d] = free;
    }
    for (int d = 0; d < devices; ++d)
        if (cursor[d] < s.device_ops[d].size()) return false;
    return true;
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
    std::vector<double> end;
    const bool complete = timed_walk(
        schedule, duration, latency, end,
        [&](int device, const Op& op, const Input* in, int count, double start, double finish) {
            also(device, op, start, finish);
            if (options.record_ops)
                timeline.device_ops[device].push_back(TimedOp{op, start, finish});
            if (!options.record_transfers) return;
            for (int k = 0; k < count; ++k) {
                if (in[k].device == device) continue;
                const std::size_t pair = in[k].slot / 2;
                const int stage =
                    static_cast<int>(pair % static_cast<std::size_t>(schedule.stages()));
                const Pass pass = in[k].slot % 2 == 0 ? Pass::F : split[pair] ? Pass::B : Pass::BW;
                const double sent = end[in[k].slot];
                timeline.transfers.push_back(Transfer{in[k].device, device,
                                                      Op{pass, op.microbatch, stage}, op,
                                                      options.message_bytes, sent, sent + latency});
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

}  // namespace pipesim
