#pragma once
// Memory estimated before it is allocated: what an analytic run needs at its peak, and what
// this process may still allocate, so that a run too large is refused with its estimate
// instead of failing halfway with std::bad_alloc.

#include <string_view>

#include "sim/replay.hpp"

namespace pipesim::sim {

/// Bytes a generated schedule and its replay need at their peak: the schedule (12 bytes per
/// op, twice while its lists grow), the validation and the replay's state per (microbatch,
/// stage) pair, and the records `options` asks for (a TimedOp, a Transfer per op). `ops` is
/// an upper bound (max_op_count); `stage_passes` = p·v·m.
double replay_peak_bytes(double ops, double stage_passes, const ReplayOptions& options);

/// What this process may still allocate, in bytes: its address-space limit (RLIMIT_AS, as
/// `ulimit -v` sets it) less the address space it uses now, and the machine's physical memory.
/// Either is +inf when unknown or unlimited.
struct MemoryBudget {
    double address_space_left = 0;
    double physical = 0;
};

/// The budget of this process now.
MemoryBudget memory_budget();

/// Throws std::invalid_argument with one line naming `what`, the estimate and the budget when
/// `bytes` exceed either figure of `budget`.
void check_memory(double bytes, const MemoryBudget& budget, std::string_view what);

}  // namespace pipesim::sim
