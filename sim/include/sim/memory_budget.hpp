#pragma once
// Memory estimated before it is allocated: what an analytic run needs at its peak, and what
// this process may still allocate, so that a run too large is refused with its estimate
// instead of failing halfway with std::bad_alloc.

#include "fileio/memory_budget.hpp"
#include "sim/replay.hpp"

namespace pipesim::sim {

/// Bytes a generated schedule and its replay need at their peak: the schedule (12 bytes per
/// op, twice while its lists grow), the validation and the replay's state per (microbatch,
/// stage) pair, and the records `options` asks for (a TimedOp, a Transfer per op). `ops` is
/// an upper bound (max_op_count); `stage_passes` = p·v·m.
double replay_peak_bytes(double ops, double stage_passes, const ReplayOptions& options);

// The budget and its check live in fileio, the leaf library, where file readers use them too.
using fileio::check_memory;
using fileio::memory_budget;
using fileio::MemoryBudget;
using fileio::OverMemoryBudget;

}  // namespace pipesim::sim
