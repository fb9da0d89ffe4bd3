// The scatter plot's DOT: markers as nodes (for their tooltips), the rest in the background.
#include "viz/scatter_plot.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scatter_geometry.hpp"
#include "style.hpp"

namespace pipesim::viz {

using detail::Point;
using detail::XdotCanvas;

namespace {

constexpr const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
// Graphviz node shapes; with the colours, 40 series look different from each other.
constexpr const char* shapes[] = {"circle",      "square",   "triangle", "diamond",
                                  "invtriangle", "pentagon", "hexagon",  "octagon"};
constexpr const char* grid_colour = "#e4e4e4";
constexpr const char* text_colour = "#333333";
constexpr const char* line_grey = "#444444";
constexpr double legend_gap = 20;
constexpr double legend_row = 16;

std::string colour_of(std::size_t series) {
    return palette[series % std::size(palette)];
}

const char* shape_of(std::size_t series) {
    return shapes[series % std::size(shapes)];
}

std::string axis_title(const ScatterAxis& axis) {
    std::string out = axis.title;
    if (!axis.unit.empty()) out += fmt::format(" ({})", axis.unit);
    if (!axis.note.empty()) out += ", " + axis.note;
    return out;
}

// Enough significant digits for neighbouring ticks to read differently.
int tick_digits(const AxisRange& axis) {
    if (axis.ticks.size() < 2) return 4;
    const double step = axis.ticks[1] - axis.ticks[0];
    const double size = std::max(std::abs(axis.lo), std::abs(axis.hi));
    const double digits = 1 + std::ceil(std::log10(size / step));
    return std::isfinite(digits) ? std::clamp(static_cast<int>(digits), 3, 15) : 4;
}

void draw_axes(XdotCanvas& c, const ScatterPlot& plot, const ScatterLayout& l) {
    const Box& box = l.plot;
    const int x_digits = tick_digits(l.x), y_digits = tick_digits(l.y);
    c.pen(grid_colour);
    for (double t : l.x.ticks) {
        const double x = detail::position(l, {t, l.y.lo}).x;
        c.line({x, box.bottom}, {x, box.top});
    }
    for (double t : l.y.ticks) {
        const double y = detail::position(l, {l.x.lo, t}).y;
        c.line({box.left, y}, {box.right, y});
    }
    c.pen(text_colour);
    c.line({box.left, box.bottom}, {box.right, box.bottom});
    c.line({box.left, box.bottom}, {box.left, box.top});
    c.font(10);
    for (double t : l.x.ticks) {
        const double x = detail::position(l, {t, l.y.lo}).x;
        c.line({x, box.bottom}, {x, box.bottom - 4});
        c.text({x, box.bottom - 16}, 0, detail::pretty(t, x_digits));
    }
    for (double t : l.y.ticks) {
        const double y = detail::position(l, {l.x.lo, t}).y;
        c.line({box.left - 4, y}, {box.left, y});
        c.text({box.left - 7, y - 3}, 1, detail::pretty(t, y_digits));
    }
    c.font(11);
    c.text({(box.left + box.right) / 2, 16}, 0, axis_title(plot.x));
    c.text({box.left, box.top + 12}, -1, axis_title(plot.y));
}

void draw_lines_and_labels(XdotCanvas& c, const ScatterPlot& plot, const ScatterLayout& l) {
    for (const ScatterLine& line : plot.lines) {
        if (line.vertices.size() < 2) continue;
        std::vector<Point> points;
        for (const DataPoint& v : line.vertices)
            points.push_back(detail::position(l, v));
        c.pen(line.series >= 0 ? colour_of(static_cast<std::size_t>(line.series)) : line_grey);
        c.polyline(points);
    }
    c.font(detail::label_size);
    // With several series a label and its leader take their series' colour: in grey, the six
    // groups' "zb-v v=2" labels could be told apart only by which marker they were nearest.
    const bool series_colours = plot.series.size() > 1;
    for (const PlacedLabel& label : l.labels) {
        const ScatterPoint& p = plot.series[label.series].points[label.point];
        const std::string colour =
            series_colours ? std::string(colour_of(label.series)) : std::string(text_colour);
        if (label.leader) {
            const Point from = detail::position(l, p.at);
            const Box& b = label.box;
            c.pen(series_colours ? colour : std::string("#999999"));
            c.line(from,
                   {std::clamp(from.x, b.left, b.right), std::clamp(from.y, b.bottom, b.top)});
        }
        c.pen(colour);
        c.text({label.box.left, label.box.bottom + 0.25 * detail::label_size}, -1, p.label);
    }
}

// The legend's lines of text, top down; returns the lowest baseline used.
double draw_legend(XdotCanvas& c, std::string& nodes, const ScatterPlot& plot,
                   const ScatterLayout& l, double& width) {
    const double x0 = l.plot.right + legend_gap;
    double y = l.plot.top - 4;
    auto row = [&](const std::string& text, double size) {
        c.font(size);
        c.pen(text_colour);
        c.text({x0 + 18, y - 8}, -1, text);
        width = std::max(width, 18 + XdotCanvas::text_width(size, text));
    };
    if (!plot.legend_title.empty()) {
        c.font(11);
        c.pen(text_colour);
        c.text({x0, y - 8}, -1, plot.legend_title);
        width = std::max(width, XdotCanvas::text_width(11, plot.legend_title));
        y -= legend_row + 2;
    }
    for (std::size_t s = 0; s < plot.series.size(); ++s) {
        const ScatterSeries& series = plot.series[s];
        nodes += fmt::format(
            "  legend_{} [pos=\"{:.2f},{:.2f}\", shape={}, color=\"{}\", fillcolor=\"{}55\", "
            "tooltip=\"{}\"];\n",
            s, x0 + 6, y - 4, shape_of(s), colour_of(s), colour_of(s),
            detail::dot_escape(series.name));
        std::string text = series.name;
        if (l.covered[s] > 0)
            text += fmt::format(" ({} of {} share their spot with a later marker)", l.covered[s],
                                series.points.size());
        row(text, 10);
        y -= legend_row;
    }
    for (const ScatterLine& line : plot.lines) {
        if (line.name.empty()) continue;
        c.pen(line.series >= 0 ? colour_of(static_cast<std::size_t>(line.series)) : line_grey);
        c.line({x0, y - 4}, {x0 + 12, y - 4});
        row(line.name, 10);
        y -= legend_row;
    }
    std::vector<std::string> notes = plot.notes;
    if (l.labels_left_out > 0)
        notes.push_back(fmt::format("{} labels left out (no room)", l.labels_left_out));
    for (const std::string& note : notes) {
        row(note, 9);
        y -= legend_row - 3;
    }
    return y;
}

}  // namespace

std::string scatter_plot_dot(const ScatterPlot& plot) {
    const ScatterLayout l = scatter_layout(plot);
    XdotCanvas canvas;
    draw_axes(canvas, plot, l);
    draw_lines_and_labels(canvas, plot, l);
    std::string legend_nodes;
    double legend_width = 100;
    const double lowest = draw_legend(canvas, legend_nodes, plot, l, legend_width);

    std::string out = "digraph scatter {\n";
    out += fmt::format(
        "  graph [layout=nop2, bgcolor=white, pad=0.1, fontname=\"{}\", fontsize=13, "
        "labelloc=t, label=\"{}\",\n         _background={}];\n",
        XdotCanvas::font_name, detail::dot_escape(plot.title), detail::dot_quoted(canvas.ops()));
    out += fmt::format(
        "  node [style=filled, fixedsize=true, width={0:.4f}, height={0:.4f}, label=\"\", "
        "penwidth=1.2];\n",
        detail::marker_size / 72.0);
    // Two invisible corners fix the picture's extent (nop2 sizes it to the nodes).
    out += fmt::format("  corner_0 [pos=\"0,{:.2f}\", shape=point, width=0.01, style=invis];\n",
                       std::min(0.0, lowest - 10));
    out +=
        fmt::format("  corner_1 [pos=\"{:.2f},{:.2f}\", shape=point, width=0.01, style=invis];\n",
                    l.plot.right + legend_gap + legend_width + 10, l.plot.top + 24);
    for (std::size_t s = 0; s < plot.series.size(); ++s)
        for (std::size_t i = 0; i < plot.series[s].points.size(); ++i) {
            const ScatterPoint& p = plot.series[s].points[i];
            const Point at = detail::position(l, p.at);
            const int stacked = l.stacked[s][i];
            out += fmt::format(
                "  s{}_{} [pos=\"{:.2f},{:.2f}\", shape={}, color=\"{}\", fillcolor=\"{}55\", "
                "tooltip=\"{}\"{}];\n",
                s, i, at.x, at.y, shape_of(s), colour_of(s), colour_of(s),
                detail::dot_escape(p.tooltip.empty() ? plot.series[s].name : p.tooltip),
                stacked > 0 ? fmt::format(", width={0:.4f}, height={0:.4f}",
                                          detail::marker_size * std::pow(0.6, stacked) / 72.0)
                            : "");
        }
    out += legend_nodes;
    out += "}\n";
    return out;
}

}  // namespace pipesim::viz
