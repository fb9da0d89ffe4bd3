#include "memory.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/memory_budget.hpp"

namespace pipesim::simgrid::detail {

namespace {

// Per-item costs, rounded up from runs of this engine (SimGrid 3.32, x86-64): 4,608 actors
// with 256 KiB stacks added 1.27 GB of address space (275 KiB each) and under 120 MB resident
// with 4,096 hosts and 524,288 message slots; 16,384 hosts with their routes and links about
// 80 MB resident (5 KiB each); 524,288 message slots and timeline ops about 37 MB (70 B each).
constexpr double actor_resident = 24 * 1024.0;  // touched stack, context, actor object
constexpr double actor_overhead = 24 * 1024.0;  // guard page, context, actor object
constexpr double host_bytes = 6 * 1024.0;       // host, CPU model, netpoint, name
constexpr double route_bytes = 512;
constexpr double table_entry_bytes = 8;  // a flat zone's route pointer
constexpr double link_bytes = 2 * 1024.0;
constexpr double slot_bytes = 128;                 // Message, arrival flag, its communication
constexpr double op_bytes = 40;                    // TimedOp
constexpr double transfer_bytes = 96;              // Transfer
constexpr double engine_bytes = 32 * 1024 * 1024;  // SimGrid's engine and models
constexpr double mib = 1024.0 * 1024.0;

// SimGrid maps each actor's stack and protects a guard page at its end, which splits the
// mapping in two: two entries of the kernel's table of this process's mappings, whose size is
// vm.max_map_count (65,530 by default). Past it SimGrid aborts ("Failed to protect stack").
// The margin leaves room for what SimGrid and the allocator map besides.
constexpr std::size_t maps_per_actor = 2;
constexpr std::size_t map_margin = 4096;

// vm.max_map_count, or 0 where the kernel does not say.
std::size_t max_map_count() {
    std::ifstream in("/proc/sys/vm/max_map_count");
    long long value = 0;
    return in >> value && value > 0 ? static_cast<std::size_t>(value) : 0;
}

// The mappings this process holds now (lines of /proc/self/maps).
std::size_t mappings_now() {
    std::ifstream in("/proc/self/maps");
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);)
        ++lines;
    return lines;
}

}  // namespace

MemoryEstimate estimate_memory(const RunSize& s) {
    const double actors = static_cast<double>(s.actors);
    const double common = engine_bytes + static_cast<double>(s.gpus) * host_bytes +
                          static_cast<double>(s.routes) * route_bytes +
                          static_cast<double>(s.route_table_entries) * table_entry_bytes +
                          static_cast<double>(s.links) * link_bytes +
                          static_cast<double>(s.message_slots) * slot_bytes +
                          static_cast<double>(s.timeline_ops) * op_bytes +
                          static_cast<double>(s.transfers) * transfer_bytes;
    MemoryEstimate e;
    e.address_space = common + actors * (actor_stack_kib * 1024.0 + actor_overhead);
    e.resident = common + actors * actor_resident;
    return e;
}

void check_memory(const RunSize& size, const MemoryEstimate& e) {
    const std::string what =
        fmt::format("{} actors with {} KiB stacks, {} GPUs, {} routes, {} messages", size.actors,
                    actor_stack_kib, size.gpus, size.routes, size.message_slots);
    const char* needs = size.lower_bound ? "at least" : "about";
    const sim::MemoryBudget budget = sim::memory_budget();
    if (e.address_space > budget.address_space_left)
        throw fileio::OverMemoryBudget(fmt::format(
            "the simulation needs {} {:.0f} MiB of address space ({}), more than the {:.0f} "
            "MiB left under this process's limit (ulimit -v)",
            needs, e.address_space / mib, what, std::max(0.0, budget.address_space_left) / mib));
    if (e.resident > budget.physical)
        throw fileio::OverMemoryBudget(fmt::format(
            "the simulation needs {} {:.0f} MiB of memory ({}), more than the {:.0f} MiB "
            "this machine has",
            needs, e.resident / mib, what, budget.physical / mib));
    if (const std::size_t limit = max_map_count(); limit > 0) {
        const std::size_t held = mappings_now();
        const std::size_t needed = maps_per_actor * size.actors;
        if (held + needed + map_margin > limit)
            throw fileio::OverMemoryBudget(fmt::format(
                "the simulation needs {}{} SimGrid actors, {} memory mappings each, and this "
                "process holds {} of the {} mappings the kernel allows (vm.max_map_count): "
                "simulate fewer devices or replicas (a straggler or unequal GPUs simulate every "
                "replica), or raise vm.max_map_count",
                size.lower_bound ? "at least " : "", size.actors, maps_per_actor, held, limit));
    }
}

}  // namespace pipesim::simgrid::detail
