#pragma once
// What this process may still allocate, so that work too large for it is refused with its
// estimate (one line, exit code 2) before it is allocated, instead of failing halfway with
// std::bad_alloc. In fileio, the leaf library, so that file readers and engines share it.

#include <stdexcept>
#include <string_view>

namespace pipesim::fileio {

/// What this process may still allocate, in bytes: its address-space limit (RLIMIT_AS, as
/// `ulimit -v` sets it) less the address space it uses now, and the machine's physical memory.
/// Either is +inf when unknown or unlimited.
struct MemoryBudget {
    double address_space_left = 0;
    double physical = 0;
};

/// What a refusal for memory throws: work this process cannot hold as it is limited now, which
/// another machine or a higher `ulimit -v` may run. An std::invalid_argument (one line, exit
/// code 2), of its own kind so that `sweep` records such a job as an error, which it runs again
/// when resumed, and not as a configuration that cannot run.
class OverMemoryBudget : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// What a run that ran out of memory anyway (std::bad_alloc past the estimates) is told, on the
/// command line and in Python.
inline constexpr std::string_view out_of_memory_message =
    "out of memory: the run needs more than this process may use (ulimit -v) or the machine "
    "has; try fewer stages or microbatches";

/// The budget of this process now.
MemoryBudget memory_budget();

/// Throws OverMemoryBudget with one line naming `what`, the estimate and the budget when
/// `bytes` exceed either figure of `budget`.
void check_memory(double bytes, const MemoryBudget& budget, std::string_view what);

}  // namespace pipesim::fileio
