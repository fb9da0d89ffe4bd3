#pragma once
// The dependency rule of the schedule IR, defined once: which ops an op waits for and which
// ops wait for it. Validation, every timed engine and every scheduler derive from it.
//
//   F(mb, s)       after F(mb, s−1)
//   B/BW(mb, s)    after F(mb, s) and the backward (B or BW) of (mb, s+1)
//   W(mb, s)       after B(mb, s)
//
// within the stages the microbatch passes through (StageRange). Header only and free of
// allocation: it sits in the inner loops of the schedulers and engines.

#include <array>

#include "schedules/op.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

/// At most two ops: an op's predecessors or successors, in the rule's order.
struct OpLinks {
    int count = 0;
    std::array<Op, 2> op{};

    const Op* begin() const { return op.data(); }
    const Op* end() const { return op.data() + count; }
    void add(const Op& o) { op[static_cast<std::size_t>(count++)] = o; }
};

/// The ops `op` waits for, in this order: F(s−1) for F; F(s), then the backward of s+1 for B
/// and BW; B(s) for W. `route` is the microbatch's stages (first and last have no F before
/// and no backward after). `split(stage)` tells whether that stage's backward is B and W
/// (true) or a fused BW (false); it is asked only about stage s+1 of a backward.
/// Precondition: op.stage within route.
template <class SplitAt>
OpLinks predecessors(const Op& op, StageRange route, SplitAt&& split) {
    OpLinks links;
    switch (op.pass) {
        case Pass::F:
            if (op.stage > route.first) links.add(Op{Pass::F, op.microbatch, op.stage - 1});
            break;
        case Pass::B:
        case Pass::BW:
            links.add(Op{Pass::F, op.microbatch, op.stage});
            if (op.stage < route.last)
                links.add(
                    Op{split(op.stage + 1) ? Pass::B : Pass::BW, op.microbatch, op.stage + 1});
            break;
        case Pass::W:
            links.add(Op{Pass::B, op.microbatch, op.stage});
            break;
    }
    return links;
}

/// predecessors() when every stage's backward is split (`split`) or every one is fused.
inline OpLinks predecessors(const Op& op, StageRange route, bool split) {
    return predecessors(op, route, [split](int) { return split; });
}

/// The ops that wait for `op`, in this order: F(s+1), then the backward of s for F; the
/// backward of s−1, then W(s) for B; the backward of s−1 for BW; none for W. Arguments as
/// predecessors(); `split` is asked about stage s for F and s−1 for a backward.
template <class SplitAt>
OpLinks successors(const Op& op, StageRange route, SplitAt&& split) {
    OpLinks links;
    switch (op.pass) {
        case Pass::F:
            if (op.stage < route.last) links.add(Op{Pass::F, op.microbatch, op.stage + 1});
            links.add(Op{split(op.stage) ? Pass::B : Pass::BW, op.microbatch, op.stage});
            break;
        case Pass::B:
        case Pass::BW:
            if (op.stage > route.first)
                links.add(
                    Op{split(op.stage - 1) ? Pass::B : Pass::BW, op.microbatch, op.stage - 1});
            if (op.pass == Pass::B) links.add(Op{Pass::W, op.microbatch, op.stage});
            break;
        case Pass::W:
            break;
    }
    return links;
}

/// successors() when every stage's backward is split (`split`) or every one is fused.
inline OpLinks successors(const Op& op, StageRange route, bool split) {
    return successors(op, route, [split](int) { return split; });
}

}  // namespace pipesim
