#pragma once
// What a simulation will cost in memory, known before SimGrid allocates it, so that a run
// that cannot fit is refused with one line instead of SimGrid aborting half way.

#include <cstddef>

namespace pipesim::simgrid::detail {

/// Stack of each SimGrid actor (SimGrid's `contexts/stack-size`, KiB). The actors' own
/// frames are shallow; SimGrid's default of 8 MiB would reserve 8 MiB of address space each.
constexpr int actor_stack_kib = 256;

/// The size of a run, in the things that take memory.
struct RunSize {
    std::size_t actors = 0;
    std::size_t gpus = 0;    ///< SimGrid hosts
    std::size_t routes = 0;  ///< GPU pairs with a route
    /// Entries of the routing zones' tables (a full zone has one per pair of its members).
    std::size_t route_table_entries = 0;
    std::size_t links = 0;          ///< split-duplex links (at most)
    std::size_t message_slots = 0;  ///< pipeline messages of all simulated replicas
    std::size_t timeline_ops = 0;
    std::size_t transfers = 0;
    /// Whether these are the least the run can need (counted before all of it is known).
    bool lower_bound = false;
};

/// Bytes of address space and of resident memory the run adds to this process.
struct MemoryEstimate {
    double address_space = 0;
    double resident = 0;
};

/// What a run of `size` adds: stacks count in full towards the address space and in part
/// (what actors touch) towards resident memory; everything else counts in both.
MemoryEstimate estimate_memory(const RunSize& size);

/// Throws std::invalid_argument with the estimate when what the process maps now plus the
/// estimate exceeds its address-space limit (RLIMIT_AS, `ulimit -v`), or when the resident
/// estimate exceeds the machine's physical memory.
void check_memory(const RunSize& size, const MemoryEstimate& estimate);

}  // namespace pipesim::simgrid::detail
