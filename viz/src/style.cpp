#include "style.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace pipesim::viz::detail {

std::string_view pass_colour(Pass pass, int chunk) {
    // Per pass: a mid tone for chunk 0, then lighter, darker, lightest.
    static constexpr std::array<std::array<std::string_view, 4>, pass_count> colours = {{
        {"#76a5e0", "#b3cff2", "#4d7fc4", "#d6e6f9"},  // F: blue
        {"#f5a25d", "#f9cc9f", "#e07b2e", "#fde3c8"},  // B: orange
        {"#7cc47c", "#b5e0b5", "#4fa34f", "#d8f0d8"},  // W: green
        {"#c49ad6", "#e0c8ea", "#a66fbe", "#efe1f5"},  // BW: purple
    }};
    return colours[static_cast<std::size_t>(pass)][static_cast<std::size_t>(chunk) % 4];
}

std::string short_name(const Op& op) {
    return fmt::format("{}{} s{}", pass_name(op.pass), op.microbatch, op.stage);
}

std::string pretty(double value, int digits) {
    if (value == 0) return "0";
    return fmt::format("{:.{}g}", value, digits);
}

std::string ShownUnit::operator()(double value, int digits) const {
    const std::string number = pretty(value / divide, digits);
    return unit.empty() ? number : number + " " + unit;
}

ShownUnit memory_unit(double largest, bool bytes) {
    if (!bytes) return {};
    ShownUnit shown{1, "B"};
    for (const char* unit : {"KiB", "MiB", "GiB", "TiB"}) {
        if (!(largest >= 1024 * shown.divide)) break;
        shown.divide *= 1024;
        shown.unit = unit;
    }
    return shown;
}

ShownUnit time_axis_unit(double span, const std::string& time_unit) {
    if (time_unit == "s" && span < 1e-3) return {1e-6, "µs"};
    if (time_unit == "s" && span < 1) return {1e-3, "ms"};
    return {1, time_unit};
}

std::string dot_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        // A control byte (a NUL, an escape sequence) breaks Graphviz's parser or the SVG's
        // XML: shown as the replacement character instead.
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            continue;
        }
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

std::string dot_quoted(std::string_view text) {
    const std::string escaped = dot_escape(text);
    std::string out = "\"";
    out.reserve(escaped.size() + escaped.size() / dot_piece_bytes * 8 + 2);
    std::size_t begin = 0;
    while (escaped.size() - begin > dot_piece_bytes) {
        std::size_t end = begin + dot_piece_bytes;
        // Not inside a UTF-8 character, nor between a backslash and what it escapes.
        while (end > begin + 1 && (static_cast<unsigned char>(escaped[end]) & 0xc0) == 0x80)
            --end;
        std::size_t backslashes = 0;
        while (end - backslashes > begin && escaped[end - backslashes - 1] == '\\')
            ++backslashes;
        if (backslashes % 2 == 1) --end;
        out.append(escaped, begin, end - begin);
        out += "\"\n    + \"";
        begin = end;
    }
    out.append(escaped, begin, std::string::npos);
    out += '"';
    return out;
}

TimeSpan drawn_span(const Timeline& t) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    TimeSpan r{inf, -inf, inf};
    for (const auto& ops : t.device_ops)
        for (const TimedOp& op : ops) {
            r.first = std::min(r.first, op.start);
            r.last = std::max(r.last, op.end);
            if (op.end > op.start) r.shortest = std::min(r.shortest, op.end - op.start);
        }
    if (!std::isfinite(r.first)) return {0, 1, 1};
    for (const Transfer& x : t.transfers)
        if (x.kind == TransferKind::data_parallel && std::isfinite(x.end))
            r.last = std::max(r.last, x.end);
    if (!(r.last > r.first)) r.last = r.first + 1;
    if (!std::isfinite(r.shortest)) r.shortest = r.last - r.first;
    return r;
}

std::vector<MemoryStep> memory_steps(const std::vector<MemoryPoint>& curve, double apart) {
    std::vector<MemoryStep> steps;
    for (std::size_t k = 0; k < curve.size();) {
        MemoryStep step{curve[k].time, curve[k].activation, curve[k].activation};
        std::size_t next = k + 1;
        for (; next < curve.size() && curve[next].time - step.time < apart; ++next)
            step.spike = std::max(step.spike, curve[next].activation);
        step.after = curve[next - 1].activation;
        steps.push_back(step);
        k = next;
    }
    return steps;
}

}  // namespace pipesim::viz::detail
