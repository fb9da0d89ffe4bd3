#pragma once
// Internal: lookup by name with a message that lists the valid names.

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fileio/json_document.hpp"
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

/// The file's name at `pointer` (JsonDocument::name); refused when it is a preset's: a preset's
/// name on other figures would pass for the preset where names are compared (a calibration
/// file's `gpu`) and print as it in every report.
template <typename T>
std::string own_name(const fileio::JsonDocument& doc, const std::string& pointer,
                     std::size_t max_bytes, std::span<const T> presets, std::string_view kind,
                     std::string_view example_suffix) {
    std::string name = doc.name(pointer, max_bytes);
    for (const T& preset : presets)
        if (preset.name == name)
            throw doc.error_at(
                pointer, fmt::format("{}: '{}' is a preset's name (pipesim list); a {} file "
                                     "names its own {}, e.g. '{}{}'",
                                     fileio::JsonDocument::display_name(pointer), name, kind, kind,
                                     name, example_suffix));
    return name;
}

}  // namespace pipesim::models::detail
