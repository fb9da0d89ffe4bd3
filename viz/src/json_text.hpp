#pragma once
// Small pieces for writing JSON by hand (fast, one op per line) without a DOM.

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pipesim::viz::detail {

/// `text` as a JSON string literal, quotes included; bytes that are not UTF-8 (a name from a
/// file name may hold them) as U+FFFD, not an exception.
inline std::string json_string(std::string_view text) {
    return nlohmann::json(std::string(text))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The shortest decimal that reads back as the same double. Throws for NaN and infinities,
/// which JSON cannot hold.
inline std::string json_number(double value) {
    if (!std::isfinite(value))
        throw std::invalid_argument(fmt::format("cannot write {} as a JSON number", value));
    return fmt::format("{}", value);
}

}  // namespace pipesim::viz::detail
