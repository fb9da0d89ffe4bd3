#include "models/byte_size.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace pipesim::models {

namespace {

constexpr double ki = 1024.0;
constexpr std::array<std::pair<std::string_view, double>, 9> units = {{
    {"B", 1.0},
    {"KiB", ki},
    {"MiB", ki* ki},
    {"GiB", ki* ki* ki},
    {"TiB", ki* ki* ki* ki},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
}};

}  // namespace

std::optional<double> parse_byte_size(std::string_view text) {
    const auto unit_at = text.find_first_not_of("0123456789.eE+-");
    std::string_view number = text.substr(0, unit_at);
    std::string_view unit = unit_at == std::string_view::npos ? "" : text.substr(unit_at);
    while (!unit.empty() && unit.front() == ' ')
        unit.remove_prefix(1);
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    const bool whole = !number.empty() && end == number.data() + number.size();
    // Past a double's range: +HUGE_VAL for the range messages below, or 0 below it ("1e400"
    // was "not a size", which told a user with no model to add a unit he may not give).
    if (whole && ec == std::errc::result_out_of_range)
        value = std::strtod(std::string(number).c_str(), nullptr);
    else if (!whole || ec != std::errc())
        throw std::invalid_argument(
            fmt::format("'{}' is not a size: expected a number and a unit such as 60GiB", text));
    // The unit first: "0x10GiB" is a number 0 and a unit "x10GiB", not a size of 0.
    const auto* known =
        std::find_if(units.begin(), units.end(), [&](const auto& u) { return unit == u.first; });
    if (!unit.empty() && known == units.end())
        throw std::invalid_argument(fmt::format(
            "'{}': unknown unit '{}' (B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", text, unit));
    if (!(value > 0)) throw std::invalid_argument(fmt::format("'{}': a size must be > 0", text));
    if (unit.empty()) return std::nullopt;  // a plain number: the caller's range
    // As far as a plain number of bytes goes: "1e297TiB" was infinite bytes, which a sweep
    // wrote into results it could not read back.
    const double bytes = value * known->second;
    if (!(bytes <= max_byte_size))
        throw std::invalid_argument(
            fmt::format("'{}': a size must be at most {:g} bytes", text, max_byte_size));
    return bytes;
}

}  // namespace pipesim::models
