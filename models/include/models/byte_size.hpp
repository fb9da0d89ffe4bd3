#pragma once
// Memory sizes written with a unit, as users type them: "60GiB", "1.5 TB", "512 MiB".

#include <optional>
#include <string_view>

namespace pipesim::models {

/// The largest size parse_byte_size() gives, in bytes: the bound of every number the command
/// line and grids take.
constexpr double max_byte_size = 1e30;

/// Bytes of a size with a unit: B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB
/// (powers of 1000), case as written, an optional space between number and unit. Returns
/// nothing for a plain number (no unit): the caller reads it in its own unit. Throws
/// std::invalid_argument naming the text for an unknown unit, a malformed, non-finite or
/// non-positive number, or a size past max_byte_size.
std::optional<double> parse_byte_size(std::string_view text);

}  // namespace pipesim::models
