#pragma once
// Large per-op and per-(microbatch, stage) arrays of the engines' hot loops, zero-filled by the
// system rather than by a pass over them.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace pipesim {

namespace detail {

/// `bytes` zero bytes. A large block comes straight from the kernel, zeroed on first touch and,
/// on Linux, in transparent huge pages: a page fault per 2 MiB instead of per 4 KiB. Throws
/// std::bad_alloc when there is no memory.
void* allocate_zeroed(std::size_t bytes);
/// Gives back a block of allocate_zeroed(bytes) (nullptr: nothing).
void release_zeroed(void* block, std::size_t bytes) noexcept;

/// Where a large block of allocate_zeroed(bytes) lies when the kernel maps its `length` bytes
/// at `start`: from `block`, the first huge-page boundary at or after `start`, to `end`, whole
/// huge pages on; always within the mapping (what release_zeroed() unmaps is the block's own).
struct ZeroedMapping {
    std::size_t length = 0;
    std::uintptr_t block = 0;
    std::uintptr_t end = 0;
};
ZeroedMapping zeroed_mapping(std::uintptr_t start, std::size_t bytes);

/// Blocks from this size on are mapped on their own (Linux); smaller ones come from the heap.
inline constexpr std::size_t zeroed_mapped_from = std::size_t{8} << 20;

}  // namespace detail

/// `size` entries of a trivial type, every bit zero to start with (for double: +0), owned and
/// moveable like a unique_ptr. What a std::vector would write before its user does, the kernel
/// gives for free.
template <class T>
class ZeroedArray {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

  public:
    ZeroedArray() = default;
    explicit ZeroedArray(std::size_t size)
        : size_(size), data_(static_cast<T*>(detail::allocate_zeroed(size * sizeof(T)))) {}
    ZeroedArray(ZeroedArray&& other) noexcept : size_(other.size_), data_(other.data_) {
        other.size_ = 0;
        other.data_ = nullptr;
    }
    ZeroedArray& operator=(ZeroedArray&& other) noexcept {
        if (this != &other) {
            detail::release_zeroed(data_, size_ * sizeof(T));
            size_ = other.size_;
            data_ = other.data_;
            other.size_ = 0;
            other.data_ = nullptr;
        }
        return *this;
    }
    ZeroedArray(const ZeroedArray&) = delete;
    ZeroedArray& operator=(const ZeroedArray&) = delete;
    ~ZeroedArray() { detail::release_zeroed(data_, size_ * sizeof(T)); }

    T* data() const { return data_; }
    std::size_t size() const { return size_; }
    T& operator[](std::size_t i) const { return data_[i]; }

  private:
    std::size_t size_ = 0;
    T* data_ = nullptr;
};

}  // namespace pipesim
