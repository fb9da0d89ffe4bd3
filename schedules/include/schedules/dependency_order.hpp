#pragma once
// Walks a schedule's ops in an order that respects every device's order and every
// dependency: the common core of validation and of every timed engine.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/op_dependencies.hpp"
#include "schedules/schedule.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

/// Per (microbatch, stage), 1 if the schedule splits that backward into B and W, 0 if it
/// runs a fused BW: which op a stage's backward input is.
std::vector<std::uint8_t> split_backward_flags(const Schedule& schedule);

/// The ops an op waits for (at most two), with their output slots and devices.
struct Predecessors {
    int count = 0;
    std::array<Op, 2> op{};
    std::array<std::size_t, 2> slot{};
    std::array<int, 2> device{};
};

/// Runs the devices' op lists as a dataflow: a device advances while the inputs of its next
/// op are done. Ops are visited in a dependency-respecting order, in linear time (a device
/// that blocks is parked on the output it waits for and woken when that output is done).
///
/// Precondition: validate_structure(schedule) found nothing (shapes, ranges, every op exactly
/// once). run() reports what remains: an op before its input on the same device, or a
/// deadlock across devices, with validate()'s messages.
class DependencyWalker {
  public:
    explicit DependencyWalker(const Schedule& schedule);

    /// Visits every op as `visit(device, position, op, predecessors)`; returns the problem
    /// if the schedule cannot run to completion (nothing visited after that point counts).
    template <class Visit>
    std::optional<ValidationIssue> run(Visit&& visit);

  private:
    Predecessors predecessors_of(const Op& op) const;
    int first_stage(int microbatch) const {
        return routed_ ? schedule_.microbatch_stages[static_cast<std::size_t>(microbatch)].first
                       : 0;
    }
    int last_stage(int microbatch) const {
        return routed_ ? schedule_.microbatch_stages[static_cast<std::size_t>(microbatch)].last
                       : stages_ - 1;
    }
    ValidationIssue same_device_issue(int device, int position, const Op& op, const Op& pred) const;
    ValidationIssue deadlock_issue() const;

    const Schedule& schedule_;
    int stages_;
    bool routed_;                       ///< microbatches have their own stage ranges
    std::vector<std::uint8_t> split_;   ///< per (microbatch, stage): backward split into B, W
    std::vector<std::uint8_t> done_;    ///< per output slot
    std::vector<std::int32_t> waiter_;  ///< per output slot: parked device or −1
    std::vector<std::size_t> cursor_;
    std::vector<int> ready_;
};

template <class Visit>
std::optional<ValidationIssue> DependencyWalker::run(Visit&& visit) {
    const int devices = schedule_.devices;
    for (int d = devices - 1; d >= 0; --d)
        ready_.push_back(d);
    while (!ready_.empty()) {
        const int d = ready_.back();
        ready_.pop_back();
        const std::vector<Op>& ops = schedule_.device_ops[d];
        std::size_t pos = cursor_[d];
        while (pos < ops.size()) {
            const Op& op = ops[pos];
            const Predecessors preds = predecessors_of(op);
            int waiting = -1;
            for (int k = 0; k < preds.count; ++k) {
                if (!done_[preds.slot[k]]) {
                    waiting = k;
                    break;
                }
            }
            if (waiting >= 0) {
                if (preds.device[waiting] == d) {
                    cursor_[d] = pos;
                    return same_device_issue(d, static_cast<int>(pos), op, preds.op[waiting]);
                }
                waiter_[preds.slot[waiting]] = d;
                break;
            }
            visit(d, static_cast<int>(pos), op, preds);
            if (op.pass != Pass::W) {
                const std::size_t slot = output_slot(op, stages_);
                done_[slot] = 1;
                if (waiter_[slot] >= 0) {
                    ready_.push_back(waiter_[slot]);
                    waiter_[slot] = -1;
                }
            }
            ++pos;
        }
        cursor_[d] = pos;
    }
    for (int d = 0; d < devices; ++d)
        if (cursor_[d] < schedule_.device_ops[d].size()) return deadlock_issue();
    return std::nullopt;
}

inline Predecessors DependencyWalker::predecessors_of(const Op& op) const {
    const std::size_t row =
        static_cast<std::size_t>(op.microbatch) * static_cast<std::size_t>(stages_);
    const StageRange route{first_stage(op.microbatch), last_stage(op.microbatch)};
    Predecessors preds;
    for_each_predecessor(
        op, route, [&](int stage) { return split_[row + static_cast<std::size_t>(stage)] != 0; },
        [&](const Op& input) {
            const int k = preds.count++;
            preds.op[k] = input;
            preds.slot[k] = output_slot(input, stages_);
            preds.device[k] = schedule_.stage_device[input.stage];
        });
    return preds;
}

/// The as-soon-as-possible timing every engine without a network shares (the replay, the
/// building blocks' slot timing, planned_length): every op starts when its device is free and
/// its inputs are done, plus `latency` for an input from another device, and lasts
/// `duration[stage·pass_count + pass]` (pass_durations), keeping each device's order.
/// `on_op(device, position, op, predecessors, start, finish)` sees every op; `end` is filled
/// per output slot (−1 for ops not run). Returns the problem if the order cannot run.
/// Precondition: as DependencyWalker's.
template <class OnOp>
std::optional<ValidationIssue> asap_walk(const Schedule& schedule,
                                         const std::vector<double>& duration, double latency,
                                         std::vector<double>& end, OnOp&& on_op) {
    const int stages = schedule.stages();
    end.assign(output_slot_count(schedule.microbatches, stages), -1.0);
    std::vector<double> device_free(static_cast<std::size_t>(schedule.devices), 0.0);
    DependencyWalker walker(schedule);
    return walker.run([&](int device, int position, const Op& op, const Predecessors& preds) {
        double start = device_free[device];
        for (int k = 0; k < preds.count; ++k)
            start =
                std::max(start, end[preds.slot[k]] + (preds.device[k] == device ? 0.0 : latency));
        const double finish = start + duration[static_cast<std::size_t>(op.stage) * pass_count +
                                               static_cast<std::size_t>(op.pass)];
        if (op.pass != Pass::W) end[output_slot(op, stages)] = finish;
        device_free[device] = finish;
        on_op(device, position, op, preds, start, finish);
    });
}

}  // namespace pipesim
