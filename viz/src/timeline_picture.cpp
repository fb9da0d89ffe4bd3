#include "viz/timeline_picture.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "lifespan_overlay.hpp"
#include "op_graph.hpp"
#include "style.hpp"
#include "timeline_legend.hpp"
#include "viz/axis_ticks.hpp"
#include "xdot.hpp"

namespace pipesim::viz {

using detail::Point;
using detail::pretty;

namespace {

// Geometry, in points.
constexpr double margin_left = timeline_axis_left;
constexpr double margin_right = timeline_axis_right;
constexpr double margin_top = 6;
constexpr double row_height = 22;
constexpr double box_height = 16;
constexpr double axis_gap = 4;
constexpr double axis_label_height = 18;
constexpr double axis_title_height = 16;
constexpr double legend_gap = 8;
constexpr double memory_title_height = 22;
constexpr double title_font = 13;
constexpr double label_fonts[] = {9, 7.5, 6};  // a box's label: the largest that fits
// A label's digit width, in em: DejaVu Sans's 0.636 (1303 of 2048 units), what fontconfig
// draws for "Helvetica" where Helvetica itself (0.556) is not installed, as on most Linux
// systems. Estimated with Helvetica's, two-digit labels filled their boxes edge to edge.
constexpr double label_digit_em = 0.64;
// Boxes narrower than this (points) are outlined in their own colour: the 0.5 pt grey outline,
// drawn on both edges, covers a third of a 3 pt box, and rows of such boxes turned grey.
constexpr double thin_box = 3;
constexpr const char* grid_colour = "#e4e4e4";
constexpr const char* text_colour = "#333333";
constexpr const char* memory_line = "#2b6cb0";
constexpr const char* memory_fill = "#c6dbef";
constexpr const char* peak_colour = "#d62728";
constexpr const char* label_backing = "#ffffffcc";  // white, a fifth see-through

// Where things go: x from time, y from the top (Graphviz's y grows upwards, so flip).
struct Layout {
    double t0 = 0;
    double span = 1;         // time units across the axis
    double width = 0;        // of the time axis, points
    double total_width = 0;  // of the whole picture
    double height = 0;       // of the whole picture
    double legend = 0;       // height of the legend
    double strip_height = 30;
    double strip_gap = 6;
    int devices = 0;

    // Divide before scaling: width / span overflows for spans near the smallest doubles.
    double length(double duration) const { return duration / span * width; }
    double x(double t) const { return margin_left + length(t - t0); }
    double y(double from_top) const { return height - from_top; }
    double row_centre(int device) const { return y(margin_top + row_height * (device + 0.5)); }
    double axis_top() const { return margin_top + row_height * devices + axis_gap; }
    double axis_title_top() const { return axis_top() + axis_label_height; }
    double legend_top() const { return axis_title_top() + axis_title_height + legend_gap; }
    double memory_top() const { return legend_top() + legend; }
    double strip_bottom(int device) const {
        return memory_top() + memory_title_height + (strip_height + strip_gap) * device +
               strip_height;
    }
};

// The title's width as drawn, so the axis can be made as wide: Graphviz would otherwise widen
// the picture for the title by a blank margin on the right.
double title_width(const std::string& title) {
    return detail::XdotCanvas::drawn_width(title_font, title.size());
}

Layout make_layout(const Timeline& t, const TimelinePictureOptions& options,
                   const std::string& title, const std::vector<detail::LegendEntry>& legend) {
    const detail::TimeSpan range = detail::drawn_span(t);
    Layout l;
    l.devices = t.devices;
    l.t0 = range.first;
    l.span = range.last - range.first;
    const double title_axis = title_width(title) + 16 - margin_left - margin_right;
    l.width =
        options.width > 0
            ? options.width
            : std::max(std::clamp(12.0 * (l.span / range.shortest), 500.0, 3000.0), title_axis);
    l.total_width = std::max(margin_left + l.width + margin_right, title_width(title) + 16);
    l.legend = detail::legend_height(legend, l.width) + legend_gap;
    // Strips shrink with the device count so that memory never dwarfs the timeline: from
    // p = 8 on a strip and its gap take no more height than a row of boxes.
    l.strip_height = std::clamp(144.0 / std::max(1, t.devices), 12.0, 30.0);
    l.strip_gap = std::max(4.0, l.strip_height / 4);
    l.height = l.memory_top();
    if (options.memory)
        l.height += memory_title_height + (l.strip_height + l.strip_gap) * t.devices;
    l.height += margin_top;
    return l;
}

void draw_rows_and_axis(detail::XdotCanvas& c, const Layout& l, const detail::TimeSpan& range,
                        const std::string& time_unit) {
    const detail::ShownUnit shown = detail::time_axis_unit(range.last - range.first, time_unit);
    c.font(10);
    for (int d = 0; d < l.devices; ++d) {
        c.pen(text_colour);
        c.text({margin_left - 6, l.row_centre(d) - 3.5}, 1, fmt::format("d{}", d));
    }
    const double axis_y = l.y(l.axis_top());
    const double top = l.y(margin_top);
    c.font(9);
    for (double t : axis_ticks(range.first, range.last, 10)) {
        const double x = l.x(t);
        c.pen(grid_colour);
        c.line({x, axis_y}, {x, top});
        c.pen(text_colour);
        c.line({x, axis_y}, {x, axis_y - 4});
        c.text({x, axis_y - 14}, 0, pretty(t / shown.divide));
    }
    c.pen(text_colour);
    c.line({l.x(l.t0), axis_y}, {l.x(range.last), axis_y});
    c.font(10);
    c.text({margin_left + l.width / 2, l.y(l.axis_title_top() + axis_title_height - 4)}, 0,
           fmt::format("time ({})", shown.unit == "unit" ? "cost units" : shown.unit));
}

void draw_memory(detail::XdotCanvas& c, const Layout& l, const Timeline& t,
                 const MemoryModel& memory, double last_time, bool bytes) {
    std::vector<std::vector<MemoryPoint>> curves;
    double highest = 0;
    for (int d = 0; d < t.devices; ++d) {
        curves.push_back(memory_over_time(t, memory, d));
        for (const MemoryPoint& p : curves.back())
            highest = std::max(highest, p.activation);
    }
    if (!(highest > 0)) highest = 1;
    const detail::ShownUnit shown = detail::memory_unit(highest, bytes);
    c.font(10);
    c.pen(text_colour);
    c.text({margin_left, l.y(l.memory_top() + memory_title_height - 7)}, -1,
           fmt::format("activation memory per device: each strip from 0 (bottom line) to {} "
                       "(top line)",
                       shown(highest, 4)));
    const double strip = l.strip_height;
    for (int d = 0; d < t.devices; ++d) {
        const double base = l.y(l.strip_bottom(d));
        auto level = [&](double a) { return base + strip * a / highest; };
        c.pen(text_colour);
        const double font = std::min(10.0, strip * 0.8);
        c.font(font);
        c.text({margin_left - 6, base + strip / 2 - 0.35 * font}, 1, fmt::format("d{}", d));
        c.pen(grid_colour);
        c.line({l.x(l.t0), base}, {l.x(last_time), base});
        c.line({l.x(l.t0), base + strip}, {l.x(last_time), base + strip});
        const auto& curve = curves[static_cast<std::size_t>(d)];
        if (curve.empty()) continue;
        std::vector<Point> outline;
        double held = 0, peak = 0;
        Point peak_at{};  // the dot's place, chosen below
        // Steps half a point apart or less are one (detail::memory_steps).
        for (const detail::MemoryStep& step : detail::memory_steps(curve, 0.5 / l.length(1))) {
            const double x = l.x(step.time);
            outline.push_back({x, level(held)});
            if (step.spike > std::max(held, step.after)) outline.push_back({x, level(step.spike)});
            outline.push_back({x, level(step.after)});
            held = step.after;
            peak = std::max({peak, step.spike, step.after});
        }
        outline.push_back({l.x(last_time), level(held)});
        // The dot and its label at the longest stretch at the peak: the label hangs below the
        // stretch's line, which then runs above it; at the first, a short peak, it covered
        // the curve falling away under it (DualPipeV's device 0).
        if (peak > 0) {
            const double top = level(peak);
            double longest = -1;
            for (std::size_t k = 0; k < outline.size();) {
                if (outline[k].y != top) {
                    ++k;
                    continue;
                }
                std::size_t last = k;  // the stretch's points, all at the peak's height
                while (last + 1 < outline.size() && outline[last + 1].y == top)
                    ++last;
                if (outline[last].x - outline[k].x > longest) {
                    longest = outline[last].x - outline[k].x;
                    peak_at = outline[k];
                }
                k = last + 1;
            }
        }
        std::vector<Point> area = outline;
        area.push_back({outline.back().x, base});
        area.push_back({outline.front().x, base});
        c.pen(memory_fill);
        c.fill(memory_fill);
        c.polygon(area);
        c.pen(memory_line);
        c.polyline(outline);
        if (peak > 0) {
            c.pen(peak_colour);
            c.fill(peak_colour);
            c.dot(peak_at, 2.2);
            const double size = std::min(8.0, strip * 0.6);
            // In its own unit: a 1-byte peak beside a TiB one read "9.09e-13 TiB". Four digits,
            // as the title gives the highest (it read 79.75, the strips 79.8).
            const std::string label =
                fmt::format("peak {}", detail::memory_unit(peak, bytes)(peak, 4));
            // Above the dot where the strip has room: nothing of the curve is higher than its
            // peak. Else below it, kept inside the strip; under a low peak it ran into the next
            // strip's grid line. Its backing clears the curve's 1 pt line by half a point (it
            // stopped half a point from the line's centre and hid half of it).
            constexpr double clear = 1.0;
            const double above = peak_at.y + 0.3 * size + clear;
            const double left = peak_at.x + 3;
            const double right = left + 1 + detail::XdotCanvas::drawn_width(size, label.size()) + 1;
            // Below, under the lowest the curve comes within the label's width: a short peak
            // falls away under a label hung from it (DualPipeV's device 0), and the curve ran
            // behind the text.
            double lowest = peak_at.y;
            for (std::size_t k = 0; k + 1 < outline.size(); ++k)
                if (std::max(outline[k].x, outline[k + 1].x) >= left &&
                    std::min(outline[k].x, outline[k + 1].x) <= right)
                    lowest = std::min({lowest, outline[k].y, outline[k + 1].y});
            const Point at{peak_at.x + 4,
                           above + 0.85 * size <= base + strip
                               ? above
                               : std::max(lowest - 0.85 * size - clear, base + 0.3 * size)};
            // On a pale backing, so that a step of the curve does not run through the text.
            c.pen(label_backing);
            c.fill(label_backing);
            c.polygon({{at.x - 1, at.y - 0.3 * size},
                       {right, at.y - 0.3 * size},
                       {right, at.y + 0.85 * size},
                       {at.x - 1, at.y + 0.85 * size}});
            c.pen(peak_colour);
            c.font(size);
            c.text(at, -1, label);
        }
    }
}

// Each device's data-parallel collectives (its gradient reduction, a parameter all-gather) as a
// grey band across its row where no pass of the device runs (detail::shown_data_parallel):
// after its last pass, where a reduction is exposed, and in its idle time. Drawn whole behind
// the boxes, a band the passes hid showed as slivers at their edges, and as boxes without a
// legend entry or a tooltip in the HTML report.
void draw_data_parallel(detail::XdotCanvas& c, const Layout& l,
                        const std::vector<detail::ShownCollective>& shown) {
    c.pen(detail::data_parallel_colour);
    c.fill(detail::data_parallel_colour);
    for (const detail::ShownCollective& x : shown) {
        const double y = l.row_centre(x.device), h = box_height / 2;
        c.polygon({{l.x(x.start), y - h},
                   {l.x(x.end), y - h},
                   {l.x(x.end), y + h},
                   {l.x(x.start), y + h}});
    }
}

// F&B pairs (DualPipe's overlapped ones, or the steps of an exchange once per step) as
// DeepSeek draws them: the F and backward boxes of a pair in one shared black border (a black
// frame behind the two boxes, showing around them). Where one pair starts as the one before
// it ends, a white notch cuts the frame at the seam, and the seam is returned: a white line
// is drawn across the boxes there (write_seams), so that each pair keeps its own border (back
// to back, the frames of a steady state merged into one black band).
std::vector<Point> draw_fb_pairs(detail::XdotCanvas& c, const Layout& l, const Timeline& t) {
    constexpr double frame = 1.2, notch = 2.5;
    if (!has_fb_pairs(t.fb_pairs)) return {};
    const double h = box_height / 2 + frame;
    std::vector<Point> seams;  // x of the seam, y of the row
    c.pen("#000000");
    c.fill("#000000");
    for (std::size_t d = 0; d < t.fb_pairs.size() && d < t.device_ops.size(); ++d) {
        const auto& ops = t.device_ops[d];
        const double y = l.row_centre(static_cast<int>(d));
        double previous_end = -1;
        for (const int k : t.fb_pairs[d]) {
            if (k < 0 || static_cast<std::size_t>(k) + 1 >= ops.size()) continue;
            const double start = l.x(ops[static_cast<std::size_t>(k)].start);
            const double end = l.x(ops[static_cast<std::size_t>(k) + 1].end);
            if (previous_end >= 0 && std::abs(start - previous_end) < 2 * frame)
                seams.push_back({start, y});
            previous_end = end;
            c.polygon({{start - frame, y - h},
                       {end + frame, y - h},
                       {end + frame, y + h},
                       {start - frame, y + h}});
        }
    }
    c.pen("#ffffff");
    c.fill("#ffffff");
    for (const Point& seam : seams)
        c.polygon({{seam.x - notch, seam.y - h},
                   {seam.x + notch, seam.y - h},
                   {seam.x + notch, seam.y + h},
                   {seam.x - notch, seam.y + h}});
    return seams;
}

// A white line across the boxes at each seam between two F&B pairs: nodes, drawn over the
// boxes, as the background cannot be.
void write_seams(std::string& out, const std::vector<Point>& seams) {
    constexpr double seam_width = 1.6;
    for (std::size_t i = 0; i < seams.size(); ++i)
        out += fmt::format(
            "  seam_{} [pos=\"{:.2f},{:.2f}\", width={:.4f}, height={:.4f}, label=\"\", "
            "fillcolor=\"#ffffff\", color=\"#ffffff\", penwidth=0, "
            "tooltip=\"where one F&B pair ends and the next begins\"];\n",
            i, seams[i].x, seams[i].y, seam_width / 72.0, (box_height + 2) / 72.0);
}

// A schedule's name as the title shows it: a schedule file may name its schedule with up to
// 256 bytes, and the axis is made as wide as the title (title_width), so a long name stretched
// every box. Over `max_title_name` bytes it is cut at a character's start and ends in "…".
constexpr std::size_t max_title_name = 32;
std::string title_name(const std::string& name) {
    if (name.size() <= max_title_name) return name;
    std::size_t cut = max_title_name - 1;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
        --cut;
    return name.substr(0, cut) + "…";
}

std::string title(const Timeline& t, const MemoryModel& memory,
                  const TimelinePictureOptions& options) {
    const Metrics m = compute_metrics(t, memory);
    // In the time axis's unit (ms for a run under a second), as a reader compares the two.
    const detail::ShownUnit shown = detail::time_axis_unit(m.makespan, t.time_unit);
    const auto in_shown = [&](double time) { return pretty(time / shown.divide, 6); };
    std::string iteration;
    if (options.iteration_time > 0 &&
        std::abs(options.iteration_time - m.makespan) > 1e-9 * m.makespan)
        iteration = fmt::format("   {} {} {}", options.iteration_is_period ? "period" : "iteration",
                                in_shown(options.iteration_time), shown.unit);
    const bool bytes = options.memory_in_bytes;
    return fmt::format(
        "{}   p={} m={} v={}   makespan {} {}{}   bubble {:.1f} %   peak activation {}{}",
        title_name(t.schedule), t.devices, t.microbatches, t.chunks, in_shown(m.makespan),
        shown.unit, iteration, 100 * m.bubble_rate,
        detail::memory_unit(m.peak_activation_max, bytes)(m.peak_activation_max, 4),
        bytes ? "" : " M_B");
}

std::vector<bool> on_critical_path(const Timeline& t, std::size_t ops) {
    std::vector<bool> marked(ops, false);
    const detail::OpGraph g = detail::build_op_graph(t);
    for (std::size_t i : detail::critical_chain(g))
        marked[i] = true;
    return marked;
}

void write_boxes(std::string& out, const Timeline& t, const Layout& l,
                 const std::vector<bool>& critical, const detail::ShownUnit& shown) {
    // Times in the axis's unit (they were in seconds beside an axis in ms).
    const auto in_shown = [&](double time) { return pretty(time / shown.divide, 6); };
    const std::string unit = detail::dot_escape(shown.unit);
    std::size_t flat = 0;
    for (int d = 0; d < t.devices; ++d) {
        const auto& ops = t.device_ops[static_cast<std::size_t>(d)];
        const std::vector<int>* pairs =
            static_cast<std::size_t>(d) < t.fb_pairs.size() ? &t.fb_pairs[d] : nullptr;
        for (std::size_t i = 0; i < ops.size(); ++i, ++flat) {
            const TimedOp& op = ops[i];
            // In an F&B pair: its F at a listed position, its backward right after.
            const bool paired =
                pairs && std::any_of(pairs->begin(), pairs->end(), [&](int k) {
                    return static_cast<std::size_t>(k) == i || static_cast<std::size_t>(k) + 1 == i;
                });
            const double w = l.length(op.end - op.start);
            const std::string mb = std::to_string(op.op.microbatch);
            const double font = label_font_size(w, mb.size());
            const int chunk = detail::chunk_of(t, op.op.stage);
            const bool reverse = detail::reverse_direction(t, op.op.microbatch);
            const bool on_path = !critical.empty() && critical[flat];
            std::string looks;
            if (font != label_fonts[0] && font > 0) looks += fmt::format(", fontsize={}", font);
            if (reverse) looks += ", style=\"filled,dashed\"";
            if (on_path)
                looks += ", color=\"#d62728\", penwidth=2";
            else if (reverse)
                looks += ", color=\"#222222\", penwidth=1";
            else if (w < thin_box)  // the grey outline would hide the pass's colour
                looks += fmt::format(", color=\"{}\"", detail::pass_colour(op.op.pass, chunk));
            out += fmt::format(
                "  d{}_{} [pos=\"{:.2f},{:.2f}\", width={:.4f}, fillcolor=\"{}\", label=\"{}\", "
                "tooltip=\"{} on device {}{}{}: {} – {} {} ({} {}){}\"{}];\n",
                d, i, l.x(op.start) + w / 2, l.row_centre(d), w / 72.0,
                detail::pass_colour(op.op.pass, chunk), font > 0 ? mb : "", to_string(op.op), d,
                t.chunks > 1 ? fmt::format(", chunk {}", chunk) : "",
                reverse ? fmt::format(", d{} → d0", t.devices - 1) : "", in_shown(op.start),
                in_shown(op.end), unit, in_shown(op.end - op.start), unit,
                paired ? ", F&B pair" : "", looks);
        }
    }
}

// A transfer is an arrow over its own interval: from its start on the sender's row to its end
// on the receiver's row, between the facing edges of the rows' boxes. The edge joins the
// producer's and the consumer's boxes (for the DOT's meaning and the SVG tooltip) but carries
// its own fixed spline.
void write_transfers(std::string& out, const Timeline& t, const Layout& l,
                     const detail::ShownUnit& shown) {
    std::unordered_map<std::size_t, OpRef> where;  // each op's place, by its dense index
    for (int d = 0; d < t.devices; ++d)
        for (std::size_t i = 0; i < t.device_ops[static_cast<std::size_t>(d)].size(); ++i)
            where[dense_op_index(t.device_ops[static_cast<std::size_t>(d)][i].op, t.stages())] =
                OpRef{d, static_cast<int>(i)};
    constexpr double arrow = 3.0;  // arrowsize 0.3 × Graphviz's 10 pt
    for (const Transfer& x : t.transfers) {
        if (x.kind != TransferKind::pipeline) continue;  // collectives have no producer
        const auto from = where.find(dense_op_index(x.producer, t.stages()));
        const auto to = where.find(dense_op_index(x.consumer, t.stages()));
        if (from == where.end() || to == where.end() || x.src_device == x.dst_device) continue;
        const double down = x.dst_device > x.src_device ? 1.0 : -1.0;  // in rows
        const Point tail{l.x(x.start), l.row_centre(x.src_device) - down * box_height / 2};
        const Point tip{l.x(x.end), l.row_centre(x.dst_device) + down * box_height / 2};
        const double dx = tip.x - tail.x, dy = tip.y - tail.y;
        const double length = std::max(std::hypot(dx, dy), 1e-9);
        const Point base{tip.x - arrow * dx / length, tip.y - arrow * dy / length};
        out += fmt::format(
            "  d{}_{} -> d{}_{} [pos=\"e,{:.2f},{:.2f} {:.2f},{:.2f} {:.2f},{:.2f} {:.2f},{:.2f} "
            "{:.2f},{:.2f}\", tooltip=\"{} → {}: device {} → {}, {} – {} {}{}\"];\n",
            from->second.device, from->second.position, to->second.device, to->second.position,
            tip.x, tip.y, tail.x, tail.y, tail.x, tail.y, base.x, base.y, base.x, base.y,
            to_string(x.producer), to_string(x.consumer), x.src_device, x.dst_device,
            pretty(x.start / shown.divide, 6), pretty(x.end / shown.divide, 6),
            detail::dot_escape(shown.unit),
            x.bytes > 0 ? fmt::format(", {} bytes", pretty(x.bytes, 6)) : "");
    }
}

}  // namespace

double label_font_size(double box_width, std::size_t characters) {
    for (double font : label_fonts)
        if (box_width >= label_digit_em * font * static_cast<double>(characters) + 2) return font;
    return 0;
}

std::invalid_argument too_many_ops(std::string_view counted, std::size_t max_ops) {
    return std::invalid_argument(
        fmt::format("the timeline picture draws every op: {} more than the {} it draws (use "
                    "fewer microbatches, or --trace for Perfetto or --gantt)",
                    counted, max_ops));
}

std::string timeline_dot(const Timeline& t, const MemoryModel& memory,
                         const TimelinePictureOptions& options) {
    if (memory.activation.size() != static_cast<std::size_t>(t.stages()))
        throw std::invalid_argument(fmt::format("memory model has {} stages, timeline has {}",
                                                memory.activation.size(), t.stages()));
    std::size_t ops = 0;
    for (const auto& list : t.device_ops)
        ops += list.size();
    if (ops > options.max_ops) throw too_many_ops(fmt::format("{} ops is", ops), options.max_ops);
    const std::vector<bool> critical =
        options.critical_path ? on_critical_path(t, ops) : std::vector<bool>{};
    const detail::TimeSpan range = detail::drawn_span(t);
    const std::string heading = title(t, memory, options);
    const std::vector<detail::ShownCollective> collectives = detail::shown_data_parallel(t);
    const std::vector<detail::LegendEntry> legend =
        detail::legend_entries(t, options.critical_path, options.lifespan_microbatch,
                               options.transfers, !collectives.empty());
    const Layout l = make_layout(t, options, heading, legend);

    detail::XdotCanvas canvas;
    draw_rows_and_axis(canvas, l, range, t.time_unit);
    detail::draw_legend(canvas, legend, {margin_left, l.y(l.legend_top())}, l.width);
    if (options.memory) draw_memory(canvas, l, t, memory, range.last, options.memory_in_bytes);
    draw_data_parallel(canvas, l, collectives);
    const std::vector<Point> seams = draw_fb_pairs(canvas, l, t);
    if (options.lifespan_microbatch >= 0)
        detail::draw_lifespans(canvas, t, options.lifespan_microbatch,
                               {[&](double time) { return l.x(time); },
                                [&](int d) { return l.row_centre(d); }, row_height, box_height});

    std::string out = "digraph timeline {\n";
    out += fmt::format(
        "  graph [layout=nop2, splines=line, outputorder=edgesfirst, bgcolor=white, pad=0.1,\n"
        "         fontname=\"{}\", fontsize=13, labelloc=t,{} label=\"{}\",\n"
        "         _background={}];\n",
        detail::XdotCanvas::font_name, options.title_at_left ? " labeljust=l," : "",
        detail::dot_escape(heading), detail::dot_quoted(canvas.ops()));
    out += fmt::format(
        "  node [shape=box, style=filled, fixedsize=true, height={:.4f}, fontname=\"{}\", "
        "fontsize={}, penwidth=0.5, color=\"#444444\"];\n",
        box_height / 72.0, detail::XdotCanvas::font_name, label_fonts[0]);
    out += fmt::format("  edge [arrowsize=0.3, penwidth=0.5, color=\"{}99\"];\n",
                       detail::transfer_colour);
    // Two invisible corners fix the picture's extent (nop2 sizes it to the nodes).
    out += "  corner_0 [pos=\"0,0\", shape=point, width=0.01, style=invis, label=\"\"];\n";
    out += fmt::format(
        "  corner_1 [pos=\"{:.2f},{:.2f}\", shape=point, width=0.01, style=invis, label=\"\"];\n",
        l.total_width, l.height);
    const detail::ShownUnit shown = detail::time_axis_unit(range.last - range.first, t.time_unit);
    write_boxes(out, t, l, critical, shown);
    write_seams(out, seams);
    if (options.transfers) write_transfers(out, t, l, shown);
    out += "}\n";
    return out;
}

}  // namespace pipesim::viz
