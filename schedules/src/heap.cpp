#include "schedules/heap.hpp"

#include <cstdint>
#include <cstdlib>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#define PIPESIM_TUNE_HEAP 1
#endif

namespace pipesim {

namespace {

bool tried = false;
bool tuned = false;

}  // namespace

void tune_heap() {
#if defined(PIPESIM_TUNE_HEAP)
    if (tried) return;
    tried = true;
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return;
    constexpr int mapped_from = 32 << 20;  // glibc's default: 128 KiB, rising to at most 32 MiB
    constexpr int kept_free = 128 << 20;
    constexpr int growth = 256 << 20;
    if (::mallopt(M_MMAP_THRESHOLD, mapped_from) != 1 ||
        ::mallopt(M_TRIM_THRESHOLD, kept_free) != 1 || ::mallopt(M_TOP_PAD, growth) != 1)
        return;
    tuned = true;
    // A block from the heap makes it grow by the block and the pad; the part of that growth in
    // whole huge pages gets the hint (the kernel backs it with huge pages as it is touched).
    void* probe = std::malloc(std::size_t{1} << 20);
    if (probe == nullptr) return;
    constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
    const std::uintptr_t begin =
        (reinterpret_cast<std::uintptr_t>(probe) + huge_page - 1) & ~(huge_page - 1);
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(::sbrk(0)) & ~(huge_page - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    std::free(probe);
#endif
}

bool heap_tuned() {
    return tuned;
}

}  // namespace pipesim
