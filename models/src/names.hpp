#pragma once
// Internal: lookup by name with a message that lists the valid names.

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fileio/parse_error.hpp"

namespace pipesim::models::detail {

/// The element of `items` whose `.name` is `name`; otherwise throws std::invalid_argument
/// "unknown KIND 'NAME' (known: a, b, c)", NAME quoted as a short excerpt with control
/// bytes escaped (it may come from a file or a command line).
template <typename T>
const T& find_by_name(std::span<const T> items, std::string_view name, std::string_view kind) {
    std::string known;
    for (const T& item : items) {
        if (item.name == name) return item;
        known += known.empty() ? "" : ", ";
        known += item.name;
    }
    throw std::invalid_argument(
        fmt::format("unknown {} {} (known: {})", kind, fileio::quote_excerpt(name), known));
}

}  // namespace pipesim::models::detail
