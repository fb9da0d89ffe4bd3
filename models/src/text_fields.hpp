#pragma once
// Internal: short printable strings from model and calibration files.

#include <cstddef>
#include <string>
#include <string_view>

#include "fileio/json_document.hpp"

namespace pipesim::models::detail {

/// The string at `pointer`: at most `max_bytes`, printable ASCII or UTF-8 (no control bytes,
/// so names and sources can go into reports and messages as they are). Throws ParseError.
inline const std::string& text_field(const fileio::JsonDocument& doc, std::string_view pointer,
                                     std::size_t max_bytes) {
    return doc.text(pointer, max_bytes);
}

}  // namespace pipesim::models::detail
