#pragma once
// The dependency rule of the schedule IR, defined once: which ops an op waits for and which
// ops wait for it. Validation, every timed engine and every scheduler derive from it.
//
//   F(mb, s)       after F(mb, s−1)
//   B/BW(mb, s)    after F(mb, s) and the backward (B or BW) of (mb, s+1)
//   W(mb, s)       after B(mb, s)
//
// within the stages the microbatch passes through (StageRange). Header only and free of
// allocation: it sits in the inner loops of the schedulers and engines, always inlined there
// (left to itself the compiler calls it out of a loop as long as the replay's walk).

#include <array>

#include "schedules/op.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

/// Index of an op's output among the outputs other ops wait for: F and the backward (B or
/// BW) of each (microbatch, stage). W outputs nothing another op needs, so it has no slot.
/// Engines keep per-output state (e.g. end times) in arrays of output_slot_count() entries.
inline std::size_t output_slot(const Op& op, int stages) {
    return (static_cast<std::size_t>(op.microbatch) * static_cast<std::size_t>(stages) +
            static_cast<std::size_t>(op.stage)) *
               2 +
           (op.pass == Pass::F ? 0 : 1);
}

inline std::size_t output_slot_count(int microbatches, int stages) {
    return static_cast<std::size_t>(microbatches) * static_cast<std::size_t>(stages) * 2;
}

/// At most two ops: an op's predecessors or successors, in the rule's order.
struct OpLinks {
    int count = 0;
    std::array<Op, 2> op{};

    const Op* begin() const { return op.data(); }
    const Op* end() const { return op.data() + count; }
    void add(const Op& o) { op[static_cast<std::size_t>(count++)] = o; }
};

/// Calls `visit(input)` for each op `op` waits for, in this order: F(s−1) for F; F(s), then the
/// backward of s+1 for B and BW; B(s) for W. `route` is the microbatch's stages (first and
/// last have no F before and no backward after). `split(stage)` tells whether that stage's
/// backward is B and W (true) or a fused BW (false); it is asked only about stage s+1 of a
/// backward. Precondition: op.stage within route.
template <class SplitAt, class Visit>
[[gnu::always_inline]] inline void for_each_predecessor(const Op& op, StageRange route,
                                                        SplitAt&& split, Visit&& visit) {
    switch (op.pass) {
        case Pass::F:
            if (op.stage > route.first) visit(Op{Pass::F, op.microbatch, op.stage - 1});
            break;
        case Pass::B:
        case Pass::BW:
            visit(Op{Pass::F, op.microbatch, op.stage});
            if (op.stage < route.last)
                visit(Op{split(op.stage + 1) ? Pass::B : Pass::BW, op.microbatch, op.stage + 1});
            break;
        case Pass::W:
            visit(Op{Pass::B, op.microbatch, op.stage});
            break;
    }
}

/// The ops for_each_predecessor() visits, as a list.
template <class SplitAt>
OpLinks predecessors(const Op& op, StageRange route, SplitAt&& split) {
    OpLinks links;
    for_each_predecessor(op, route, split, [&](const Op& input) { links.add(input); });
    return links;
}

/// predecessors() when every stage's backward is split (`split`) or every one is fused.
inline OpLinks predecessors(const Op& op, StageRange route, bool split) {
    return predecessors(op, route, [split](int) { return split; });
}

/// Calls `visit(output)` for each op that waits for `op`, in this order: F(s+1), then the
/// backward of s for F; the backward of s−1, then W(s) for B; the backward of s−1 for BW; none
/// for W. Arguments as for_each_predecessor(); `split` is asked about stage s for F and s−1
/// for a backward.
template <class SplitAt, class Visit>
[[gnu::always_inline]] inline void for_each_successor(const Op& op, StageRange route,
                                                      SplitAt&& split, Visit&& visit) {
    switch (op.pass) {
        case Pass::F:
            if (op.stage < route.last) visit(Op{Pass::F, op.microbatch, op.stage + 1});
            visit(Op{split(op.stage) ? Pass::B : Pass::BW, op.microbatch, op.stage});
            break;
        case Pass::B:
        case Pass::BW:
            if (op.stage > route.first)
                visit(Op{split(op.stage - 1) ? Pass::B : Pass::BW, op.microbatch, op.stage - 1});
            if (op.pass == Pass::B) visit(Op{Pass::W, op.microbatch, op.stage});
            break;
        case Pass::W:
            break;
    }
}

/// The ops for_each_successor() visits, as a list.
template <class SplitAt>
OpLinks successors(const Op& op, StageRange route, SplitAt&& split) {
    OpLinks links;
    for_each_successor(op, route, split, [&](const Op& output) { links.add(output); });
    return links;
}

/// successors() when every stage's backward is split (`split`) or every one is fused.
inline OpLinks successors(const Op& op, StageRange route, bool split) {
    return successors(op, route, [split](int) { return split; });
}

}  // namespace pipesim
