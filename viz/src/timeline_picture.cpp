#include "viz/timeline_picture.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "op_graph.hpp"
#include "style.hpp"
#include "viz/axis_ticks.hpp"
#include "xdot.hpp"

namespace pipesim::viz {

using detail::Point;
using detail::pretty;

namespace {

// Geometry, in points.
constexpr double margin_left = 44;
constexpr double margin_right = 24;
constexpr double margin_top = 6;
constexpr double row_height = 22;
constexpr double box_height = 16;
constexpr double axis_gap = 4;
constexpr double axis_label_height = 22;
constexpr double memory_title_height = 20;
constexpr double strip_height = 30;
constexpr double strip_gap = 6;
constexpr double label_font = 9;
constexpr const char* grid_colour = "#e4e4e4";
constexpr const char* text_colour = "#333333";
constexpr const char* memory_line = "#2b6cb0";
constexpr const char* memory_fill = "#c6dbef";
constexpr const char* peak_colour = "#d62728";

struct TimeRange {
    double first = 0;
    double last = 0;
    double shortest = 0;  // shortest op with a positive duration
};

TimeRange time_range(const Timeline& t) {
    TimeRange r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                std::numeric_limits<double>::infinity()};
    for (const auto& ops : t.device_ops)
        for (const TimedOp& op : ops) {
            r.first = std::min(r.first, op.start);
            r.last = std::max(r.last, op.end);
            if (op.end > op.start) r.shortest = std::min(r.shortest, op.end - op.start);
        }
    if (!std::isfinite(r.first)) r = {0, 1, 1};
    if (!(r.last > r.first)) r.last = r.first + 1;
    if (!std::isfinite(r.shortest)) r.shortest = r.last - r.first;
    return r;
}

// Where things go: x from time, y from the top (Graphviz's y grows upwards, so flip).
struct Layout {
    double t0 = 0;
    double span = 1;    // time units across the axis
    double width = 0;   // of the time axis, points
    double height = 0;  // of the whole picture
    int devices = 0;

    // Divide before scaling: width / span overflows for spans near the smallest doubles.
    double length(double duration) const { return duration / span * width; }
    double x(double t) const { return margin_left + length(t - t0); }
    double y(double from_top) const { return height - from_top; }
    double row_centre(int device) const { return y(margin_top + row_height * (device + 0.5)); }
    double axis_top() const { return margin_top + row_height * devices + axis_gap; }
    double strip_bottom(int device) const {
        return axis_top() + axis_label_height + memory_title_height +
               (strip_height + strip_gap) * device + strip_height;
    }
};

Layout make_layout(const Timeline& t, const TimelinePictureOptions& options) {
    const TimeRange range = time_range(t);
    Layout l;
    l.devices = t.devices;
    l.t0 = range.first;
    l.span = range.last - range.first;
    l.width = options.width > 0 ? options.width
                                : std::clamp(12.0 * (l.span / range.shortest), 500.0, 3000.0);
    l.height = l.axis_top() + axis_label_height;
    if (options.memory) l.height += memory_title_height + (strip_height + strip_gap) * t.devices;
    l.height += margin_top;
    return l;
}

void draw_rows_and_axis(detail::XdotCanvas& c, const Layout& l, const TimeRange& range) {
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
        c.text({x, axis_y - 14}, 0, pretty(t));
    }
    c.pen(text_colour);
    c.line({l.x(l.t0), axis_y}, {l.x(range.last), axis_y});
}

void draw_memory(detail::XdotCanvas& c, const Layout& l, const Timeline& t,
                 const MemoryModel& memory, double last_time) {
    std::vector<std::vector<MemoryPoint>> curves;
    double highest = 0;
    for (int d = 0; d < t.devices; ++d) {
        curves.push_back(memory_over_time(t, memory, d));
        for (const MemoryPoint& p : curves.back())
            highest = std::max(highest, p.activation);
    }
    if (!(highest > 0)) highest = 1;
    c.font(10);
    c.pen(text_colour);
    c.text({margin_left, l.y(l.axis_top() + axis_label_height + memory_title_height - 6)}, -1,
           fmt::format("activation memory over time (strip height = {})", pretty(highest, 3)));
    for (int d = 0; d < t.devices; ++d) {
        const double base = l.y(l.strip_bottom(d));
        auto level = [&](double a) { return base + (strip_height - 4) * a / highest; };
        c.pen(text_colour);
        c.font(10);
        c.text({margin_left - 6, base + strip_height / 2 - 3.5}, 1, fmt::format("d{}", d));
        c.pen(grid_colour);
        c.line({l.x(l.t0), base}, {l.x(last_time), base});
        const auto& curve = curves[static_cast<std::size_t>(d)];
        if (curve.empty()) continue;
        std::vector<Point> outline;
        double held = 0, peak = 0;
        Point peak_at{};
        for (const MemoryPoint& p : curve) {
            outline.push_back({l.x(p.time), level(held)});
            outline.push_back({l.x(p.time), level(p.activation)});
            held = p.activation;
            if (held > peak) {
                peak = held;
                peak_at = outline.back();
            }
        }
        outline.push_back({l.x(last_time), level(held)});
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
            c.font(8);
            c.text({peak_at.x + 4, peak_at.y - 8}, -1, fmt::format("peak {}", pretty(peak, 3)));
        }
    }
}

// DualPipe's overlapped F&B pairs as DeepSeek draws them: the F and backward boxes of a pair
// in one shared black border (a black frame behind the two boxes, showing around them).
void draw_fb_pairs(detail::XdotCanvas& c, const Layout& l, const Timeline& t) {
    constexpr double frame = 1.2;
    bool any = false;
    for (const auto& pairs : t.fb_pairs)
        any = any || !pairs.empty();
    if (!any) return;
    c.pen("#000000");
    c.fill("#000000");
    for (std::size_t d = 0; d < t.fb_pairs.size() && d < t.device_ops.size(); ++d) {
        const auto& ops = t.device_ops[d];
        for (const int k : t.fb_pairs[d]) {
            if (k < 0 || static_cast<std::size_t>(k) + 1 >= ops.size()) continue;
            const double x0 = l.x(ops[static_cast<std::size_t>(k)].start) - frame;
            const double x1 = l.x(ops[static_cast<std::size_t>(k) + 1].end) + frame;
            const double y = l.row_centre(static_cast<int>(d));
            const double h = box_height / 2 + frame;
            c.polygon({{x0, y - h}, {x1, y - h}, {x1, y + h}, {x0, y + h}});
        }
    }
}

std::string title(const Timeline& t, const MemoryModel& memory) {
    const Metrics m = compute_metrics(t, memory);
    return fmt::format(
        "{}   p={} m={} v={}   makespan {} {}   bubble {:.1f} %   peak activation {}", t.schedule,
        t.devices, t.microbatches, t.chunks, pretty(m.makespan, 6), t.time_unit,
        100 * m.bubble_rate, pretty(m.peak_activation_max, 4));
}

std::vector<bool> on_critical_path(const Timeline& t, std::size_t ops) {
    std::vector<bool> marked(ops, false);
    const detail::OpGraph g = detail::build_op_graph(t);
    for (std::size_t i : detail::critical_chain(g))
        marked[i] = true;
    return marked;
}

void write_boxes(std::string& out, const Timeline& t, const Layout& l,
                 const std::vector<bool>& critical) {
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
            const bool fits = w >= 0.6 * label_font * static_cast<double>(mb.size()) + 2;
            const int chunk = detail::chunk_of(t, op.op.stage);
            out += fmt::format(
                "  d{}_{} [pos=\"{:.2f},{:.2f}\", width={:.4f}, fillcolor=\"{}\", label=\"{}\", "
                "tooltip=\"{} on device {}{}: {} – {} ({} {}){}\"{}];\n",
                d, i, l.x(op.start) + w / 2, l.row_centre(d), w / 72.0,
                detail::pass_colour(op.op.pass, chunk), fits ? mb : "", to_string(op.op), d,
                t.chunks > 1 ? fmt::format(", chunk {}", chunk) : "", pretty(op.start, 6),
                pretty(op.end, 6), pretty(op.end - op.start, 6), detail::dot_escape(t.time_unit),
                paired ? ", F&B pair" : "",
                critical.empty() || !critical[flat] ? "" : ", color=\"#d62728\", penwidth=2");
        }
    }
}

// A transfer is an arrow over its own interval: from its start on the sender's row to its end
// on the receiver's row, between the facing edges of the rows' boxes. The edge joins the
// producer's and the consumer's boxes (for the DOT's meaning and the SVG tooltip) but carries
// its own fixed spline.
void write_transfers(std::string& out, const Timeline& t, const Layout& l) {
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
            "{:.2f},{:.2f}\", tooltip=\"{} → {}: device {} → {}, {} – {}{}\"];\n",
            from->second.device, from->second.position, to->second.device, to->second.position,
            tip.x, tip.y, tail.x, tail.y, tail.x, tail.y, base.x, base.y, base.x, base.y,
            to_string(x.producer), to_string(x.consumer), x.src_device, x.dst_device,
            pretty(x.start, 6), pretty(x.end, 6),
            x.bytes > 0 ? fmt::format(", {} bytes", pretty(x.bytes, 6)) : "");
    }
}

}  // namespace

std::string timeline_dot(const Timeline& t, const MemoryModel& memory,
                         const TimelinePictureOptions& options) {
    if (memory.activation.size() != static_cast<std::size_t>(t.stages()))
        throw std::invalid_argument(fmt::format("memory model has {} stages, timeline has {}",
                                                memory.activation.size(), t.stages()));
    std::size_t ops = 0;
    for (const auto& list : t.device_ops)
        ops += list.size();
    if (ops > options.max_ops)
        throw std::invalid_argument(fmt::format(
            "the timeline picture draws every op: {} ops is more than the {} it draws (use "
            "fewer microbatches, or --trace for Perfetto or --gantt)",
            ops, options.max_ops));
    const std::vector<bool> critical =
        options.critical_path ? on_critical_path(t, ops) : std::vector<bool>{};
    const TimeRange range = time_range(t);
    const Layout l = make_layout(t, options);

    detail::XdotCanvas canvas;
    draw_rows_and_axis(canvas, l, range);
    if (options.memory) draw_memory(canvas, l, t, memory, range.last);
    draw_fb_pairs(canvas, l, t);

    std::string out = "digraph timeline {\n";
    out += fmt::format(
        "  graph [layout=nop2, splines=line, outputorder=edgesfirst, bgcolor=white, pad=0.1,\n"
        "         fontname=\"{}\", fontsize=13, labelloc=t, label=\"{}\",\n"
        "         _background=\"{}\"];\n",
        detail::XdotCanvas::font_name, detail::dot_escape(title(t, memory)),
        detail::dot_escape(canvas.ops()));
    out += fmt::format(
        "  node [shape=box, style=filled, fixedsize=true, height={:.4f}, fontname=\"{}\", "
        "fontsize={}, penwidth=0.5, color=\"#444444\"];\n",
        box_height / 72.0, detail::XdotCanvas::font_name, label_font);
    out += "  edge [arrowsize=0.3, penwidth=0.5, color=\"#55555599\"];\n";
    // Two invisible corners fix the picture's extent (nop2 sizes it to the nodes).
    out += "  corner_0 [pos=\"0,0\", shape=point, width=0.01, style=invis, label=\"\"];\n";
    out += fmt::format(
        "  corner_1 [pos=\"{:.2f},{:.2f}\", shape=point, width=0.01, style=invis, label=\"\"];\n",
        margin_left + l.width + margin_right, l.height);
    write_boxes(out, t, l, critical);
    if (options.transfers) write_transfers(out, t, l);
    out += "}\n";
    return out;
}

}  // namespace pipesim::viz
