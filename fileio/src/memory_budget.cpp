#include "fileio/memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace pipesim::fileio {

namespace {

constexpr double unlimited = std::numeric_limits<double>::infinity();

// The address space this process uses now (VmSize), in bytes; 0 if unknown.
double address_space_used() {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (!statm) return 0;
    unsigned long pages = 0;
    const int read = std::fscanf(statm, "%lu", &pages);
    std::fclose(statm);
    return read == 1 ? static_cast<double>(pages) * static_cast<double>(::sysconf(_SC_PAGESIZE))
                     : 0;
}

std::string gigabytes(double bytes) {
    return fmt::format("{:.2f} GB", bytes / 1e9);
}

}  // namespace

MemoryBudget memory_budget() {
    MemoryBudget budget{unlimited, unlimited};
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        budget.address_space_left = static_cast<double>(limit.rlim_cur) - address_space_used();
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0)
        budget.physical = static_cast<double>(pages) * static_cast<double>(page_size);
    return budget;
}

void check_memory(double bytes, const MemoryBudget& budget, std::string_view what) {
    if (bytes > budget.address_space_left)
        throw OverMemoryBudget(fmt::format(
            "{} needs about {} of memory, more than the {} left under this process's "
            "address-space limit (ulimit -v)",
            what, gigabytes(bytes), gigabytes(std::max(0.0, budget.address_space_left))));
    if (bytes > budget.physical)
        throw OverMemoryBudget(
            fmt::format("{} needs about {} of memory, more than this machine's {}", what,
                        gigabytes(bytes), gigabytes(budget.physical)));
}

}  // namespace pipesim::fileio
