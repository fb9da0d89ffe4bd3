#include "viz/gantt.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "style.hpp"

namespace pipesim::viz {

namespace {

char pass_letter(const Timeline& t, const Op& op) {
    constexpr char letters[pass_count] = {'F', 'B', 'W', 'X'};
    const char c = letters[static_cast<int>(op.pass)];
    return detail::chunk_of(t, op.stage) > 0 ? static_cast<char>(std::tolower(c)) : c;
}

// ANSI 256-colour backgrounds per pass (chunk ≥ 1 lighter), black text.
std::string colour_cell(const Timeline& t, const Op& op) {
    constexpr int dark[pass_count] = {75, 215, 114, 176};
    constexpr int light[pass_count] = {153, 223, 157, 183};
    const int p = static_cast<int>(op.pass);
    const int bg = detail::chunk_of(t, op.stage) > 0 ? light[p] : dark[p];
    return fmt::format("\x1b[30;48;5;{}m{}\x1b[0m", bg, op.microbatch % 10);
}

}  // namespace

std::string text_gantt(const Timeline& t, const GanttOptions& options) {
    double first = std::numeric_limits<double>::infinity();
    double last = -std::numeric_limits<double>::infinity();
    for (const auto& ops : t.device_ops)
        for (const TimedOp& op : ops) {
            first = std::min(first, op.start);
            last = std::max(last, op.end);
        }
    if (!(last > first)) {
        std::size_t ops = 0;
        for (const auto& list : t.device_ops)
            ops += list.size();
        if (ops == 0) return "(empty timeline)\n";
        return fmt::format("({} op{}, all at {:g} {} and taking no time: nothing to draw)\n", ops,
                           ops == 1 ? "" : "s", first, t.time_unit);
    }

    const std::string widest = fmt::format("d{} |", std::max(0, t.devices - 1));
    const int label = static_cast<int>(widest.size()) - 1;
    const int columns = options.width - label - 2;  // "|...|"
    if (columns < 4)
        throw std::invalid_argument(
            fmt::format("a width of {} leaves {} columns for the Gantt chart; it needs at least 4",
                        options.width, columns));
    const double slice = (last - first) / columns;
    std::string out;
    struct Shown {  // what the cells show, for the legend
        bool pass[pass_count] = {};
        bool later_chunk = false, several = false, idle = false;
    } used;
    for (int d = 0; d < t.devices; ++d) {
        const auto& ops = t.device_ops[static_cast<std::size_t>(d)];
        out += fmt::format("{:>{}}|", fmt::format("d{} ", d), label);
        // A cell is its column's time: idle when the device is busy less than half of it, else
        // the op that fills most of it, or '*' where ops shorter than a column (a chart
        // squeezed to the width) of several passes share it. One sample per column showed
        // 1F1B's alternating F and BW at p = 32, m = 256 as long runs of either.
        std::size_t k = 0;
        for (int c = 0; c < columns; ++c) {
            const double from = first + c * slice, to = from + slice;
            while (k < ops.size() && ops[k].end <= from)
                ++k;
            double busy = 0, most = 0;
            std::size_t fullest = k;
            char letter = 0;  // the first op's in the column
            bool holds_whole_op = false, mixed = false;
            for (std::size_t j = k; j < ops.size() && ops[j].start < to; ++j) {
                const double inside = std::min(ops[j].end, to) - std::max(ops[j].start, from);
                if (!(inside > 0)) continue;
                busy += inside;
                if (inside > most) {
                    most = inside;
                    fullest = j;
                }
                const char here = pass_letter(t, ops[j].op);
                mixed = mixed || (letter != 0 && here != letter);
                if (letter == 0) letter = here;
                holds_whole_op = holds_whole_op || (ops[j].start >= from && ops[j].end <= to);
            }
            if (busy < slice / 2) {
                out += '.';
                used.idle = true;
            } else if (holds_whole_op && mixed) {
                out += options.colour ? "\x1b[30;48;5;250m*\x1b[0m" : "*";
                used.several = true;
            } else {
                const Op& op = ops[fullest].op;
                out += options.colour ? colour_cell(t, op) : std::string(1, pass_letter(t, op));
                used.pass[static_cast<int>(op.pass)] = true;
                used.later_chunk = used.later_chunk || detail::chunk_of(t, op.stage) > 0;
            }
        }
        out += "|\n";
    }
    // The axis: first time under the left edge, last time (and unit, if it fits) at the right.
    const std::string left = detail::pretty(first, 6);
    std::string right = fmt::format("{} {}", detail::pretty(last, 6), t.time_unit);
    const auto room = static_cast<std::size_t>(columns + 2);
    if (left.size() + 1 + right.size() > room) right = detail::pretty(last, 6);
    if (left.size() + 1 + right.size() <= room)
        out += fmt::format("{:{}}{}{:{}}{}\n", "", label, left, "",
                           room - left.size() - right.size(), right);
    // The legend names what the chart shows (zb-h1's listed a fused B+W, chunks and several
    // passes in a cell, none of which it had).
    std::vector<std::string> passes, marks;
    constexpr const char* plain[pass_count] = {"F forward", "B backward (input)",
                                               "W backward (weight)", "X fused B+W"};
    constexpr const char* coloured[pass_count] = {"blue F", "orange B", "green W", "purple BW"};
    for (int p = 0; p < pass_count; ++p)
        if (used.pass[p]) passes.push_back(options.colour ? coloured[p] : plain[p]);
    if (used.several) marks.push_back("*\x01several passes");
    if (used.idle) marks.push_back(".\x01idle");
    std::string legend =
        options.colour
            ? fmt::format("cells: microbatch mod 10, coloured by pass: {}{}",
                          fmt::join(passes, ", "), used.later_chunk ? " (lighter: chunk >= 1)" : "")
            : fmt::format("{}{}", fmt::join(passes, ", "),
                          used.later_chunk ? "; lower case: chunk >= 1" : "");
    for (const std::string& mark : marks)
        legend += "; " + mark;
    // The legend, word-wrapped to the width (left out when the chart is too narrow for it); a
    // symbol stays on its word's line (\x01 joins them).
    if (room < 32) return out;
    std::string line;
    std::size_t start = 0;
    while (start < legend.size()) {
        std::size_t end = legend.find(' ', start);
        if (end == std::string::npos) end = legend.size();
        std::string word = legend.substr(start, end - start);
        std::replace(word.begin(), word.end(), '\x01', ' ');
        if (!line.empty() && line.size() + 1 + word.size() > room) {
            out += fmt::format("{:{}}{}\n", "", label, line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        start = end + 1;
    }
    if (!line.empty()) out += fmt::format("{:{}}{}\n", "", label, line);
    return out;
}

}  // namespace pipesim::viz
