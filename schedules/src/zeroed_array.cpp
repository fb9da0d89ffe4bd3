#include "schedules/zeroed_array.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pipesim::detail {

namespace {

// Blocks from zeroed_mapped_from on are mapped on their own, aligned to and padded with a huge
// page (the x86-64 and arm64 PMD size) so that the kernel can back all of them with huge pages.
constexpr std::size_t huge_page = std::size_t{2} << 20;
static_assert(zeroed_mapped_from % huge_page == 0);

}  // namespace

ZeroedMapping zeroed_mapping(std::uintptr_t start, std::size_t bytes) {
    ZeroedMapping m;
    // The block takes whole huge pages from the first boundary at or after `start`, which lies
    // less than a huge page after it: whole pages plus one cover any start.
    const std::size_t pages = (bytes + huge_page - 1) & ~(huge_page - 1);
    m.length = pages + huge_page;
    m.block = (start + huge_page - 1) & ~(huge_page - 1);
    m.end = m.block + pages;
    return m;
}

void* allocate_zeroed(std::size_t bytes) {
#if defined(__linux__)
    if (bytes >= zeroed_mapped_from) {
        const std::size_t length = zeroed_mapping(0, bytes).length;
        void* mapping =
            ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping == MAP_FAILED) throw std::bad_alloc();
        const auto start = reinterpret_cast<std::uintptr_t>(mapping);
        const ZeroedMapping m = zeroed_mapping(start, bytes);
        // The unaligned head and the tail go back now; a failure leaves them mapped, unused.
        if (m.block > start) ::munmap(mapping, m.block - start);
        if (start + length > m.end)
            ::munmap(reinterpret_cast<void*>(m.end), start + length - m.end);
        void* block = reinterpret_cast<void*>(m.block);
        ::madvise(block, m.end - m.block, MADV_HUGEPAGE);  // a hint: without it, small pages
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
    if (bytes >= zeroed_mapped_from) {
        const auto start = reinterpret_cast<std::uintptr_t>(block);
        ::munmap(block, zeroed_mapping(start, bytes).end - start);
        return;
    }
#endif
    std::free(block);
}

}  // namespace pipesim::detail
