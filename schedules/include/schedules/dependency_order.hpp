#pragma once
// Walks a schedule's ops in an order that respects every device's order and every
// dependency: the common core of validation and of every timed engine.

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/schedule.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

/// The ops an op waits for (at most two), with their dense indices and devices.
struct Predecessors {
    int count = 0;
    std::array<Op, 2> op{};
    std::array<std::size_t, 2> index{};
    std::array<int, 2> device{};
};

/// Runs the devices' op lists as a dataflow: a device advances while the inputs of its next
/// op are done. Ops are visited in a dependency-respecting order, in linear time (a device
/// that blocks is parked on the op it waits for and woken when that op is done).
///
/// Precondition: every op's microbatch and stage are in range and no op appears twice (the
/// first checks of validate()). Missing ops, wrong order and deadlocks are reported by run().
class DependencyWalker {
  public:
    explicit DependencyWalker(const Schedule& schedule);

    /// Visits every op as `visit(device, position, op, predecessors)`; returns the problem
    /// if the schedule cannot run to completion (nothing visited after that point counts).
    template <class Visit>
    std::optional<ValidationIssue> run(Visit&& visit);

  private:
    static constexpr std::uint8_t present_bit = 1;
    static constexpr std::uint8_t done_bit = 2;

    Predecessors predecessors_of(const Op& op) const;
    void add_predecessor(Predecessors& preds, const Op& op) const;
    std::optional<ValidationIssue> same_device_issue(int device, int position, const Op& op,
                                                     const Op& pred) const;
    ValidationIssue deadlock_issue() const;

    const Schedule& schedule_;
    int stages_;
    std::vector<std::uint8_t> state_;
    std::vector<std::int32_t> waiter_;
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
        std::size_t& pos = cursor_[d];
        while (pos < ops.size()) {
            const Op& op = ops[pos];
            const Predecessors preds = predecessors_of(op);
            bool blocked = false;
            for (int k = 0; k < preds.count; ++k) {
                if (state_[preds.index[k]] & done_bit) continue;
                if (preds.device[k] == d)
                    return same_device_issue(d, static_cast<int>(pos), op, preds.op[k]);
                waiter_[preds.index[k]] = d;
                blocked = true;
                break;
            }
            if (blocked) break;
            visit(d, static_cast<int>(pos), op, preds);
            const std::size_t index = dense_op_index(op, stages_);
            state_[index] |= done_bit;
            if (waiter_[index] >= 0) {
                ready_.push_back(waiter_[index]);
                waiter_[index] = -1;
            }
            ++pos;
        }
    }
    for (int d = 0; d < devices; ++d)
        if (cursor_[d] < schedule_.device_ops[d].size()) return deadlock_issue();
    return std::nullopt;
}

inline Predecessors DependencyWalker::predecessors_of(const Op& op) const {
    Predecessors preds;
    switch (op.pass) {
        case Pass::F:
            if (op.stage > 0) add_predecessor(preds, Op{Pass::F, op.microbatch, op.stage - 1});
            break;
        case Pass::B:
        case Pass::BW:
            add_predecessor(preds, Op{Pass::F, op.microbatch, op.stage});
            if (op.stage + 1 < stages_) {
                const Op split{Pass::B, op.microbatch, op.stage + 1};
                const bool is_split = state_[dense_op_index(split, stages_)] & present_bit;
                add_predecessor(preds,
                                is_split ? split : Op{Pass::BW, op.microbatch, op.stage + 1});
            }
            break;
        case Pass::W:
            add_predecessor(preds, Op{Pass::B, op.microbatch, op.stage});
            break;
    }
    return preds;
}

inline void DependencyWalker::add_predecessor(Predecessors& preds, const Op& op) const {
    const int k = preds.count++;
    preds.op[k] = op;
    preds.index[k] = dense_op_index(op, stages_);
    preds.device[k] = schedule_.stage_device[op.stage];
}

}  // namespace pipesim
