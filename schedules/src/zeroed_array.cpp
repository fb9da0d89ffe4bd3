#include "schedules/zeroed_array.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pipesim::detail {

namespace {

#if defined(__linux__)
// Blocks from this size on are mapped on their own, aligned to and padded with a huge page (the
// x86-64 and arm64 PMD size) so that the kernel can back all of them with huge pages.
constexpr std::size_t huge_page = std::size_t{2} << 20;
constexpr std::size_t mapped_from = 4 * huge_page;

std::size_t whole_huge_pages(std::size_t bytes) {
    return (bytes + huge_page - 1) & ~(huge_page - 1);
}
#endif

}  // namespace

void* allocate_zeroed(std::size_t bytes) {
#if defined(__linux__)
    if (bytes >= mapped_from) {
        const std::size_t length = bytes + huge_page;  // room to align
        void* mapping =
            ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping == MAP_FAILED) throw std::bad_alloc();
        const auto start = reinterpret_cast<std::uintptr_t>(mapping);
        const std::uintptr_t aligned = (start + huge_page - 1) & ~(huge_page - 1);
        // The unaligned head and the tail go back now; a failure leaves them mapped, unused.
        if (aligned > start) ::munmap(mapping, aligned - start);
        const std::uintptr_t end = aligned + whole_huge_pages(bytes);
        if (start + length > end) ::munmap(reinterpret_cast<void*>(end), start + length - end);
        void* block = reinterpret_cast<void*>(aligned);
        ::madvise(block, end - aligned, MADV_HUGEPAGE);  // a hint: without it, small pages
        return block;
    }
#endif
    void* block = std::calloc(bytes > 0 ? bytes : 1, 1);
    if (!block) throw std::bad_alloc();
    return block;
}

void release_zeroed(void* block, std::size_t bytes) noexcept {
    if (!block) return;
#if defined(__linux__)
    if (bytes >= mapped_from) {
        ::munmap(block, whole_huge_pages(bytes));
        return;
    }
#endif
    std::free(block);
}

}  // namespace pipesim::detail
