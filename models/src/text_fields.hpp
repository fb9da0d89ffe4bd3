#pragma once
// Internal: short printable strings from model and calibration files.

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "fileio/json_document.hpp"
#include "fileio/parse_error.hpp"

namespace pipesim::models::detail {

/// The string at `pointer`: at most `max_bytes`, printable ASCII or UTF-8 (no control bytes,
/// so names and sources can go into reports and messages as they are). Throws ParseError.
inline const std::string& text_field(const fileio::JsonDocument& doc, std::string_view pointer,
                                     std::size_t max_bytes) {
    const std::string& s = doc.string(pointer, max_bytes);
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f)
            throw doc.error_at(pointer, fmt::format("{}: expected text without control "
                                                    "characters, got {}",
                                                    fileio::JsonDocument::display_name(pointer),
                                                    fileio::quote_excerpt(s)));
    }
    return s;
}

}  // namespace pipesim::models::detail
