#include "viz/html_report.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "html_page.hpp"
#include "style.hpp"
#include "viz/axis_ticks.hpp"
#include "viz/timeline_picture.hpp"

namespace pipesim::viz {

using detail::pretty;

namespace {

// The memory charts, in points, laid out like the timeline picture (Graphviz's offset plus the
// picture's margins) so that both start their time axis at the same column.
constexpr double chart_left = timeline_svg_offset + timeline_axis_left;
constexpr double chart_right = timeline_svg_offset + timeline_axis_right;
constexpr double chart_top = 10;
constexpr double chart_plot = 64;
constexpr double chart_axis = 28;
// More devices than this get a memory row each (memory_chart), of this height.
constexpr int memory_rows_from = 8;
constexpr double memory_row = 16;

// Device curves: ten distinct colours (Tableau's), then hues a golden angle apart, so that
// device 10 is not drawn in device 0's blue.
constexpr std::array<const char*, 10> device_colours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                        "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                                        "#bcbd22", "#17becf"};

std::string device_colour(int device) {
    if (device < static_cast<int>(device_colours.size()))
        return device_colours[static_cast<std::size_t>(device)];
    const double hue = std::fmod(17.0 + 137.508 * device, 360.0);
    const int lightness = 34 + 12 * (device % 3);  // 34, 46, 58 %: neighbours differ in tone too
    return fmt::format("hsl({:.0f},70%,{}%)", hue, lightness);
}

// Points per time unit shared by the schedules whose timelines use `unit`: the longest is
// drawn as wide as timeline_dot would draw it alone (its shortest op about 12 pt).
double points_per_unit(const HtmlReport& report, const std::string& unit) {
    double longest = 0, shortest = std::numeric_limits<double>::infinity();
    for (const HtmlSchedule& s : report.schedules) {
        if (s.timeline.time_unit != unit) continue;
        const detail::TimeSpan span = detail::drawn_span(s.timeline);
        longest = std::max(longest, span.last - span.first);
        shortest = std::min(shortest, span.shortest);
    }
    if (report.picture.width > 0) return report.picture.width / longest;
    return std::clamp(12.0 * (longest / shortest), 500.0, 3000.0) / longest;
}

// One Graphviz node group as Graphviz writes it for a box with a tooltip,
//   <g id="node3" class="node">\n<title>d0_0</title>\n<g id="a_node3"><a xlink:title="TIP">\n
//   SHAPES\n</a>\n</g>\n</g>
// rewritten as the page uses it: SHAPES tagged class="node" and data-tip="TIP" (one element
// when the box is one shape, else SHAPES inside one <g>). The node's name, its ids and the
// link carry nothing the page shows, and five elements per op made a report of six schedules
// at p = 32, m = 256 a 63 MB page of 725,000 elements that a browser takes long to open.
// Anything in another form is copied as it is (the page's script then moves its tooltip).
// Returns the position after the group, or `from` when nothing was rewritten.
std::size_t compact_node(const std::string& body, std::size_t from, std::string& out) {
    constexpr std::string_view open_group = "<g id=\"", node_class = "\" class=\"node\">\n<title>",
                               link = "<a xlink:title=\"", close_group = "\n</a>\n</g>\n</g>";
    if (body.compare(from, open_group.size(), open_group) != 0) return from;
    const auto id_end = body.find('"', from + open_group.size());
    if (id_end == std::string::npos || body.compare(id_end, node_class.size(), node_class) != 0)
        return from;
    const auto title_end = body.find("</title>\n<g id=\"", id_end + node_class.size());
    const auto link_at = body.find('>', title_end + 16);
    if (title_end == std::string::npos || link_at == std::string::npos ||
        body.compare(link_at + 1, link.size(), link) != 0)
        return from;
    const auto tip_begin = link_at + 1 + link.size();
    const auto tip_end = body.find('"', tip_begin);
    if (tip_end == std::string::npos || body.compare(tip_end, 3, "\">\n") != 0) return from;
    const auto shapes_begin = tip_end + 3;
    const auto shapes_end = body.find(close_group, shapes_begin);
    if (shapes_end == std::string::npos) return from;
    const std::string_view shapes(body.data() + shapes_begin, shapes_end - shapes_begin);
    if (shapes.find("<g") != std::string_view::npos ||
        shapes.find("<a") != std::string_view::npos || shapes.empty() || shapes.front() != '<')
        return from;
    const std::string_view tip(body.data() + tip_begin, tip_end - tip_begin);
    const auto name_end = shapes.find_first_of(" />");
    const bool one_shape = shapes.back() == '>' && shapes.ends_with("/>") &&
                           shapes.find('<', 1) == std::string_view::npos &&
                           name_end != std::string_view::npos && shapes[name_end] == ' ';
    if (one_shape) {
        out.append(shapes.substr(0, name_end));
        out.append(" class=\"node\" data-tip=\"").append(tip).append("\"");
        out.append(shapes.substr(name_end));
    } else {
        out.append("<g class=\"node\" data-tip=\"").append(tip).append("\">");
        out.append(shapes).append("</g>");
    }
    return shapes_end + close_group.size();
}

// The Graphviz SVG made fit to share a page: no prolog, DOCTYPE or comments; node groups
// compacted (compact_node); ids prefixed.
std::string embed_svg(const std::string& svg, std::size_t index) {
    const auto start = svg.find("<svg");
    if (start == std::string::npos)
        throw std::invalid_argument(fmt::format("timeline picture {} is not SVG", index));
    // Graphviz comments every node and edge: one pass that leaves them out (erasing each in
    // place moved the rest of the picture once per comment, 12 minutes at 200,000 ops).
    std::string body;
    body.reserve(svg.size() - start);
    for (std::size_t at = start; at < svg.size();) {
        const auto open = svg.find("<!--", at);
        body.append(svg, at, open == std::string::npos ? std::string::npos : open - at);
        if (open == std::string::npos) break;
        const auto close = svg.find("-->", open);
        at = close == std::string::npos ? svg.size() : close + 3;
    }
    std::string compacted;
    compacted.reserve(body.size());
    for (std::size_t at = 0; at < body.size();) {
        const auto group = body.find("<g id=\"", at);
        compacted.append(body, at, group == std::string::npos ? std::string::npos : group - at);
        if (group == std::string::npos) break;
        at = compact_node(body, group, compacted);
        if (at == group) {
            compacted += '<';
            at = group + 1;
        }
    }
    body = std::move(compacted);
    const std::string prefix = fmt::format("s{}-", index);
    std::string out;
    out.reserve(body.size() + body.size() / 16);
    for (std::size_t i = 0; i < body.size();) {
        bool replaced = false;
        for (std::string_view key : {" id=\"", "url(#", "href=\"#"}) {
            if (body.compare(i, key.size(), key) != 0) continue;
            out += key;
            out += prefix;
            i += key.size();
            replaced = true;
            break;
        }
        if (!replaced) out += body[i++];
    }
    return out;
}

// Highest scaled activation of any device of `s`.
double highest_memory(const HtmlSchedule& s) {
    double highest = 0;
    for (int d = 0; d < s.timeline.devices; ++d)
        for (const MemoryPoint& p : memory_over_time(s.timeline, s.memory, d))
            highest = std::max(highest, p.activation / s.memory_scale);
    return highest;
}

// For each device, the first device before it whose memory curve is the same, else -1: on
// one axis a later curve hid its twin (DualPipe's mirrored devices showed half their colours).
std::vector<int> same_memory_as(const HtmlSchedule& s) {
    std::vector<std::vector<MemoryPoint>> curves;
    std::vector<int> twin(static_cast<std::size_t>(s.timeline.devices), -1);
    for (int d = 0; d < s.timeline.devices; ++d) {
        curves.push_back(memory_over_time(s.timeline, s.memory, d));
        for (int e = 0; e < d && !curves.back().empty(); ++e)
            if (std::equal(curves[static_cast<std::size_t>(e)].begin(),
                           curves[static_cast<std::size_t>(e)].end(), curves.back().begin(),
                           curves.back().end(), [](const MemoryPoint& a, const MemoryPoint& b) {
                               return a.time == b.time && a.activation == b.activation;
                           })) {
                twin[static_cast<std::size_t>(d)] = e;
                break;
            }
    }
    return twin;
}

// One schedule's activation memory over time: a step curve per device (tooltip: device and
// peak), the peaks marked, a time axis below and a memory axis on the left. `highest` is the
// highest peak of the schedules with the same unit, which share the axis (up to the next tick).
// Above `memory_rows_from` devices, whose curves on one axis hid each other, each device gets a row
// of its own, filled, named on the left, every row from 0 to `top`. On one axis a curve the same as
// an earlier device's is dashed, so that both colours show, and its peak ringed. `twin`:
// same_memory_as(s), empty for rows.
std::string memory_chart(const HtmlSchedule& s, double points_per_unit, double highest,
                         std::size_t index, const std::vector<int>& twin) {
    const Timeline& t = s.timeline;
    const bool rows = t.devices > memory_rows_from;
    // One axis ends on a tick: at the highest peak, 8.72 GiB had marks at 0 and 5 only, and
    // the top of the curves no value beside it. Rows say their top in the title.
    const double step = tick_step(highest, 4);
    const double top = rows ? highest : std::ceil(highest / step * (1 - 1e-12)) * step;
    // The picture's span, data-parallel collectives included: the time axis runs under the
    // picture's (it stopped at the makespan, and its ticks drifted from the picture's).
    const detail::TimeSpan span = detail::drawn_span(t);
    const double plot_width = (span.last - span.first) * points_per_unit;
    const double width = chart_left + plot_width + chart_right;
    const double plot = rows ? t.devices * memory_row : chart_plot;
    const double height = chart_top + plot + chart_axis;
    const double bottom = chart_top + plot;
    auto x = [&](double time) { return chart_left + (time - span.first) * points_per_unit; };
    // The baseline of device d's curve and the height its `top` reaches.
    auto base = [&](int d) { return rows ? chart_top + (d + 1) * memory_row : bottom; };
    const double reach = rows ? memory_row - 2 : chart_plot;
    auto y = [&](int d, double value) { return base(d) - reach * value / top; };

    std::string out = fmt::format(
        "<svg class=\"memory{}\" id=\"memory-{}\" width=\"{:.1f}pt\" height=\"{:.1f}pt\" "
        "viewBox=\"0 0 {:.1f} {:.1f}\" role=\"img\" aria-label=\"activation memory of {}\">\n",
        rows ? " rows" : "", index, width, height, width, height, detail::html_escape(s.name));
    if (rows) {
        for (int d = 0; d < t.devices; ++d)
            out += fmt::format(
                "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\"/>"
                "<text class=\"tick\" x=\"{3:.1f}\" y=\"{4:.2f}\" "
                "text-anchor=\"end\">d{5}</text>\n",
                chart_left, chart_left + plot_width, base(d), chart_left - 4, base(d) - 3, d);
    } else {
        for (double v : axis_ticks(0, top, 4))
            out += fmt::format(
                "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\"/>"
                "<text class=\"tick\" x=\"{3:.1f}\" y=\"{4:.2f}\" text-anchor=\"end\">{5}</text>\n",
                chart_left, chart_left + plot_width, y(0, v), chart_left - 4, y(0, v) + 3,
                pretty(v, 4));
    }
    // In the unit the timeline above uses (ms for a run under a second of seconds).
    const detail::ShownUnit shown = detail::time_axis_unit(span.last - span.first, t.time_unit);
    const std::string time_label = shown.unit == "unit" ? "cost units" : shown.unit;
    for (double v : axis_ticks(span.first, span.last, 10))
        out += fmt::format(
            "<line class=\"axis\" x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>"
            "<text class=\"tick\" x=\"{0:.2f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
            x(v), bottom, bottom + 4, bottom + 14, pretty(v / shown.divide, 6));
    const std::string memory_title =
        rows ? fmt::format("each row 0–{} {}", pretty(top, 4), s.memory_unit) : s.memory_unit;
    out += fmt::format(
        "<line class=\"axis\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"/>\n"
        "<text class=\"title\" x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"middle\">time ({5})"
        "</text>\n"
        "<text class=\"title\" x=\"{6:.1f}\" y=\"{7:.1f}\" transform=\"rotate(-90 {6:.1f} "
        "{7:.1f})\" text-anchor=\"middle\">{8}</text>\n",
        chart_left, chart_left + plot_width, bottom, chart_left + plot_width / 2, bottom + 26,
        detail::html_escape(time_label), 12.0, chart_top + plot / 2,
        detail::html_escape(memory_title));
    for (int d = 0; d < t.devices; ++d) {
        const std::vector<MemoryPoint> curve = memory_over_time(t, s.memory, d);
        if (curve.empty()) continue;
        std::string points;
        double held = 0, peak = 0, peak_time = curve.front().time;
        // Steps half a point apart or less are one (detail::memory_steps), as in the picture.
        for (const detail::MemoryStep& change :
             detail::memory_steps(curve, 0.5 / points_per_unit)) {
            const double value = change.after / s.memory_scale,
                         spike = change.spike / s.memory_scale;
            points += fmt::format("{:.2f},{:.2f} ", x(change.time), y(d, held));
            if (spike > std::max(held, value)) {
                points += fmt::format("{:.2f},{:.2f} ", x(change.time), y(d, spike));
                if (spike > peak) peak = spike, peak_time = change.time;
            }
            points += fmt::format("{:.2f},{:.2f} ", x(change.time), y(d, value));
            held = value;
            if (held > peak) {
                peak = held;
                peak_time = change.time;
            }
        }
        points += fmt::format("{:.2f},{:.2f}", x(span.last), y(d, held));
        const std::string colour = device_colour(d);
        const int same_as = rows ? -1 : twin[static_cast<std::size_t>(d)];
        const std::string tip =
            fmt::format("device {}: peak {} {} at {} {}{}", d, pretty(peak, 4),
                        detail::html_escape(s.memory_unit), pretty(peak_time / shown.divide, 6),
                        detail::html_escape(time_label),
                        same_as < 0 ? "" : fmt::format(" (the same curve as device {})", same_as));
        // A row's area, closed along its baseline, under the curve.
        const std::string area =
            rows
                ? fmt::format("<polygon points=\"{:.2f},{:.2f} {} {:.2f},{:.2f}\" fill=\"{}\"/>",
                              x(curve.front().time), base(d), points, x(span.last), base(d), colour)
                : std::string();
        const std::string line_style = same_as < 0 ? "" : " stroke-dasharray=\"4 4\"";
        const std::string peak_mark =
            same_as < 0 ? fmt::format("r=\"2.5\" fill=\"{}\"", colour)
                        : fmt::format("r=\"4.5\" fill=\"none\" stroke=\"{}\"", colour);
        out += fmt::format(
            "<g class=\"device\" data-tip=\"{0}\">{5}<polyline points=\"{1}\" stroke=\"{2}\"{6}/>"
            "<circle cx=\"{3:.2f}\" cy=\"{4:.2f}\" {7}/></g>\n",
            tip, points, colour, x(peak_time), y(d, peak), area, line_style, peak_mark);
    }
    out += "</svg>\n";
    return out;
}

// The devices' colours; a device whose curve is an earlier one's (same_memory_as) says so.
std::string device_key(const std::vector<int>& twin) {
    std::string out = "<p class=\"devices\">";
    for (std::size_t d = 0; d < twin.size(); ++d)
        out += fmt::format("<span><i style=\"background:{}\"></i>d{}{}</span>",
                           device_colour(static_cast<int>(d)), d,
                           twin[d] < 0 ? "" : fmt::format(" (= d{}, dashed)", twin[d]));
    return out + "</p>\n";
}

std::string inputs_section(const HtmlReport& r) {
    std::string out = "<section id=\"inputs\"><h2>Inputs</h2>\n<dl>\n";
    if (!r.command_line.empty())
        out += fmt::format("<dt>command</dt><dd><code>{}</code></dd>\n",
                           detail::html_escape(r.command_line));
    for (const auto& [label, value] : r.inputs)
        out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", detail::html_escape(label),
                           detail::html_escape(value));
    return out + "</dl></section>\n";
}

// Whether a cell is a number, alone or followed by a unit, " %" or "x" (a speed-up): such
// cells align right. "1f1b" and "1,1,1" are text.
bool numeric(const std::string& cell) {
    if (cell.empty() || std::isspace(static_cast<unsigned char>(cell[0])) != 0) return false;
    char* end = nullptr;
    (void)std::strtod(cell.c_str(), &end);
    if (end == cell.c_str()) return false;
    return *end == '\0' || *end == ' ' || *end == '%' || (*end == 'x' && end[1] == '\0');
}

// A table's element, its numeric cells aligned right.
std::string table_html(const HtmlTable& table, const std::string& id) {
    std::string out = fmt::format("<table id=\"{}\">\n<thead><tr>", id);
    for (const std::string& c : table.columns)
        out += fmt::format("<th>{}</th>", detail::html_escape(c));
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& row : table.rows) {
        out += "<tr>";
        for (const std::string& cell : row)
            out += fmt::format("<td{}>{}</td>", numeric(cell) ? " class=\"num\"" : "",
                               detail::html_escape(cell));
        out += "</tr>\n";
    }
    return out + "</tbody></table>";
}

std::string table_section(const HtmlTable& table) {
    return "<section id=\"figures\"><h2>Figures</h2>\n<p class=\"hint\">Click a column's "
           "heading to sort by it.</p>\n" +
           table_html(table, "figures-table") + "</section>\n";
}

// The bar chart's layout, in pixels: the labels' column, the bars' length and each bar's
// height and the gap below it; a legend row above the bars.
constexpr double bars_label_width = 130, bars_length = 560, bar_height = 18, bar_gap = 6;
constexpr double bars_legend_height = 26;
// Segment fills by part, cycling: distinct hues that stay apart for colour-blind readers
// (Okabe and Ito's palette), then greys.
constexpr std::array<std::string_view, 8> bar_fills = {"#0072B2", "#CC79A7", "#009E73", "#E69F00",
                                                       "#BBBBBB", "#D55E00", "#56B4E9", "#777777"};
// The share written on a segment: white on the dark fills, near-black on the light ones.
constexpr std::array<std::string_view, 8> bar_inks = {"#fff", "#fff", "#fff", "#222",
                                                      "#222", "#fff", "#222", "#fff"};

std::string extra_section(const HtmlSection& section) {
    for (char c : section.id)
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-')
            throw std::invalid_argument(fmt::format("HTML section id '{}'", section.id));
    std::string out = fmt::format("<section id=\"{}\"><h2>{}</h2>\n", section.id,
                                  detail::html_escape(section.heading));
    if (!section.caption.empty())
        out += fmt::format("<p class=\"hint\">{}</p>\n", detail::html_escape(section.caption));
    // Wider than a narrow window: each scrolls inside the page, not the page sideways.
    if (!section.bars.labels.empty())
        out += "<div class=\"wide\">" + bars_svg(section.bars, section.id + "-bars") + "</div>\n";
    out += "<div class=\"wide\">" + table_html(section.table, section.id + "-table") + "</div>\n";
    for (const std::string& note : section.notes)
        out += fmt::format("<p class=\"hint\">{}</p>\n", detail::html_escape(note));
    return out + "</section>\n";
}

std::string legend_section(const HtmlReport& r) {
    // The shades each pass is drawn in, over all the page's timelines (chunks cycle through
    // four): a pass only one schedule runs shows that schedule's shades, not every chunk's.
    constexpr int shades = 4;
    std::array<std::array<bool, shades>, pass_count> used_shade{};
    int chunks = 1;
    for (const HtmlSchedule& s : r.schedules) {
        chunks = std::max(chunks, std::min(s.timeline.chunks, shades));
        for (const auto& ops : s.timeline.device_ops)
            for (const TimedOp& op : ops)
                used_shade[static_cast<std::size_t>(op.op.pass)][static_cast<std::size_t>(
                    detail::chunk_of(s.timeline, op.op.stage) % shades)] = true;
    }
    static constexpr std::array<const char*, pass_count> meaning = {
        "forward", "backward (input gradient)", "backward (weight gradient)", "full backward"};
    std::string out = "<div id=\"legend\" class=\"legend\">";
    for (int p = 0; p < pass_count; ++p) {
        const auto& drawn = used_shade[static_cast<std::size_t>(p)];
        if (std::none_of(drawn.begin(), drawn.end(), [](bool b) { return b; })) continue;
        const Pass pass = static_cast<Pass>(p);
        out += "<span class=\"entry\">";
        for (int c = 0; c < chunks; ++c)
            if (drawn[static_cast<std::size_t>(c)])
                out += fmt::format("<i style=\"background:{}\" title=\"chunk {}\"></i>",
                                   detail::pass_colour(pass, c), c);
        out += fmt::format("<b>{}</b> {}</span>", pass_name(pass),
                           meaning[static_cast<std::size_t>(p)]);
    }
    if (chunks > 1)
        out += fmt::format("<span class=\"entry\">shades: chunk 0{}</span>",
                           chunks > 2 ? fmt::format(" … {}", chunks - 1) : std::string(", 1"));
    out += "<span class=\"entry\">number in a box: microbatch</span>";
    if (r.picture.critical_path)
        out += "<span class=\"entry\"><i class=\"critical\"></i>critical path</span>";
    if (r.picture.transfers)
        out += "<span class=\"entry\"><i class=\"transfer\"></i>transfer</span>";
    out +=
        "<span class=\"entry\"><i class=\"curve\"></i>a device's activation memory</span>"
        "<span class=\"entry\"><i class=\"peak\"></i>its peak</span>";
    out += "</div>\n";
    return out;
}

}  // namespace

TimelinePictureOptions html_picture_options(const HtmlReport& report, std::size_t index) {
    TimelinePictureOptions options = report.picture;
    options.memory = false;
    // A schedule whose memory is shown scaled (bytes in GiB) titles its peak in bytes too.
    options.memory_in_bytes = report.schedules.at(index).memory_scale != 1;
    options.iteration_time = report.schedules.at(index).iteration_time;
    options.iteration_is_period = report.schedules.at(index).iteration_is_period;
    options.title_at_left = true;
    const Timeline& t = report.schedules.at(index).timeline;
    const detail::TimeSpan span = detail::drawn_span(t);
    options.width = std::max(1.0, (span.last - span.first) * points_per_unit(report, t.time_unit));
    return options;
}

std::string bars_svg(const HtmlBars& bars, const std::string& id) {
    const std::size_t n = bars.labels.size();
    if (bars.shares.size() != n)
        throw std::invalid_argument(
            fmt::format("bar chart '{}': {} labels but {} bars", id, n, bars.shares.size()));
    for (std::size_t b = 0; b < n; ++b) {
        const std::vector<double>& row = bars.shares[b];
        if (row.size() != bars.parts.size())
            throw std::invalid_argument(
                fmt::format("bar chart '{}': bar '{}' has {} shares for {} parts", id,
                            bars.labels[b], row.size(), bars.parts.size()));
        double sum = 0;
        for (double x : row) {
            if (!(x >= 0 && x <= 1))
                throw std::invalid_argument(
                    fmt::format("bar chart '{}': bar '{}' has a share of {}, outside [0, 1]", id,
                                bars.labels[b], x));
            sum += x;
        }
        if (sum > 1 + 1e-6)
            throw std::invalid_argument(
                fmt::format("bar chart '{}': bar '{}' has shares adding up to {:.6g}, more than 1",
                            id, bars.labels[b], sum));
    }
    const double width = bars_label_width + bars_length + 60;
    // The legend: a swatch and the part's name each, left to right, wrapped to the width
    // (names measured at an average 7 px per character).
    std::string legend;
    double x = bars_label_width, legend_y = 0;
    for (std::size_t p = 0; p < bars.parts.size(); ++p) {
        const double item = 16 + 7.0 * static_cast<double>(bars.parts[p].size()) + 14;
        if (x + item > width && x > bars_label_width) {
            x = bars_label_width;
            legend_y += bars_legend_height - 6;
        }
        legend += fmt::format(
            "<rect x=\"{:g}\" y=\"{:g}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
            "<text x=\"{:g}\" y=\"{:g}\">{}</text>\n",
            x, legend_y + 6, bar_fills[p % bar_fills.size()], x + 16, legend_y + 16,
            detail::html_escape(bars.parts[p]));
        x += item;
    }
    const double top = legend_y + bars_legend_height;
    const double height = top + static_cast<double>(n) * (bar_height + bar_gap);
    std::string out = fmt::format(
        "<svg class=\"bars\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" "
        "height=\"{:g}\" viewBox=\"0 0 {:g} {:g}\" role=\"img\">\n",
        id, width, height, width, height);
    out += legend;
    for (std::size_t b = 0; b < n; ++b) {
        const double y = top + static_cast<double>(b) * (bar_height + bar_gap);
        const std::string label = detail::html_escape(bars.labels[b]);
        out += fmt::format("<text class=\"label\" x=\"{:g}\" y=\"{:g}\">{}</text>\n",
                           bars_label_width - 8, y + bar_height - 5, label);
        double at = bars_label_width;
        for (std::size_t p = 0; p < bars.parts.size(); ++p) {
            const double share = bars.shares[b][p];
            const double length = share * bars_length;
            if (length <= 0) continue;
            const std::string part = detail::html_escape(bars.parts[p]);
            out += fmt::format(
                "<rect x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\" fill=\"{}\">"
                "<title>{}: {} {:.1f} %</title></rect>\n",
                at, y, length, bar_height, bar_fills[p % bar_fills.size()], label, part,
                100 * share);
            // The share written on its segment where it fits.
            if (length >= 38)
                out += fmt::format(
                    "<text class=\"share\" x=\"{:g}\" y=\"{:g}\" style=\"fill:{}\">{:.0f} "
                    "%</text>\n",
                    at + length / 2, y + bar_height - 5, bar_inks[p % bar_inks.size()],
                    100 * share);
            at += length;
        }
    }
    return out + "</svg>";
}

std::string html_document(const HtmlReport& report, const std::vector<std::string>& svgs) {
    if (svgs.size() != report.schedules.size())
        throw std::invalid_argument(fmt::format("{} timeline pictures for {} schedules",
                                                svgs.size(), report.schedules.size()));
    std::map<std::string, double> memory_top;  // by memory unit
    for (const HtmlSchedule& s : report.schedules) {
        if (s.memory.activation.size() != static_cast<std::size_t>(s.timeline.stages()))
            throw std::invalid_argument(
                fmt::format("{}: memory model has {} stages, timeline has {}", s.name,
                            s.memory.activation.size(), s.timeline.stages()));
        if (!(s.memory_scale > 0))
            throw std::invalid_argument(fmt::format("{}: memory scale must be > 0", s.name));
        double& top = memory_top[s.memory_unit];
        top = std::max(top, highest_memory(s));
    }

    std::string out = detail::html_head(report.title);
    out += fmt::format("<header><h1>{}</h1></header>\n<main>\n", detail::html_escape(report.title));
    out += table_section(report.table);
    // No timelines (a sweep without a finished row): no heading, legend or zoom over nothing.
    if (!report.schedules.empty()) {
        out += "<section id=\"timelines\"><h2>Timelines</h2>\n<div class=\"toolbar\">";
        out += legend_section(report);
        out += detail::zoom_controls();
        out += "</div>\n";
    }
    for (std::size_t i = 0; i < report.schedules.size(); ++i) {
        const HtmlSchedule& s = report.schedules[i];
        const double top = memory_top[s.memory_unit] > 0 ? memory_top[s.memory_unit] : 1;
        const TimelinePictureOptions options = html_picture_options(report, i);
        const detail::TimeSpan span = detail::drawn_span(s.timeline);
        const bool rows = s.timeline.devices > memory_rows_from;
        const std::vector<int> twin = rows ? std::vector<int>() : same_memory_as(s);
        out += fmt::format(
            "<article class=\"schedule\" id=\"schedule-{}\" data-schedule=\"{}\">\n<h3>{}</h3>\n"
            "<div class=\"viewport timeline\">{}</div>\n"
            "<h4>activation memory over time ({})</h4>\n<div class=\"viewport\">{}</div>\n{}"
            "</article>\n",
            i, detail::html_escape(s.name), detail::html_escape(s.name), embed_svg(svgs[i], i),
            s.memory_unit == "M_B" ? "M_B: one stage's activations of one microbatch"
                                   : detail::html_escape(s.memory_unit),
            memory_chart(s, options.width / (span.last - span.first), top, i, twin),
            // Rows of their own name their devices.
            rows ? std::string() : device_key(twin));
    }
    if (!report.schedules.empty()) out += "</section>\n";
    for (const HtmlSection& section : report.sections)
        out += extra_section(section);
    out += inputs_section(report);
    out += "</main>\n";
    out += detail::html_tail();
    return out;
}

}  // namespace pipesim::viz
