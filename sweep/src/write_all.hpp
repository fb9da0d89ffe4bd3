#pragma once
// Writing a whole buffer to a file descriptor (internal to the sweep runner).

#include <string_view>

namespace pipesim::sweep::detail {

/// Writes all of `text` to `fd`, retrying short writes and EINTR. Returns 0, or the errno
/// of the write that failed (ENOSPC, EIO, EPIPE, ...); a write of 0 bytes counts as EIO.
int write_all(int fd, std::string_view text);

}  // namespace pipesim::sweep::detail
