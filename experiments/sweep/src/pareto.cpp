#include "sweep/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::sweep {

namespace {

struct MetricInfo {
    Metric metric;
    const char* name;
    const char* label;
    bool higher_better;
};

constexpr MetricInfo metric_table[] = {
    {Metric::peak_memory, "peak_memory", "peak memory per GPU", false},
    {Metric::peak_activation, "peak_activation", "peak activation memory", false},
    {Metric::throughput, "throughput", "throughput (microbatches per time unit)", true},
    {Metric::samples_per_gpu, "samples_per_s_per_gpu", "samples/s per GPU", true},
    {Metric::bubble_rate, "bubble_rate", "bubble rate", false},
    {Metric::makespan, "makespan", "makespan", false},
};

const MetricInfo& info(Metric metric) {
    for (const MetricInfo& i : metric_table)
        if (i.metric == metric) return i;
    return metric_table[0];
}

constexpr const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr const char* font = "Helvetica";

// Escapes text for a DOT double-quoted string.
std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// xdot drawing operations for the `_background` attribute (coordinates in points, y up).
class Canvas {
  public:
    void colour(const std::string& c) { op(fmt::format("c {} -{}", c.size(), c)); }
    void fill(const std::string& c) { op(fmt::format("C {} -{}", c.size(), c)); }
    void line(double x1, double y1, double x2, double y2) {
        op(fmt::format("L 2 {:.2f} {:.2f} {:.2f} {:.2f}", x1, y1, x2, y2));
    }
    void polyline(const std::vector<std::pair<double, double>>& pts) {
        std::string s = fmt::format("L {}", pts.size());
        for (const auto& [x, y] : pts)
            s += fmt::format(" {:.2f} {:.2f}", x, y);
        op(s);
    }
    void dot(double x, double y, double r) {
        op(fmt::format("E {:.2f} {:.2f} {:.2f} {:.2f}", x, y, r, r));
    }
    /// align: -1 left, 0 centre, 1 right.
    void text(double x, double y, int align, double size, const std::string& s) {
        op(fmt::format("F {:.1f} {} -{}", size, std::string_view(font).size(), font));
        op(fmt::format("T {:.2f} {:.2f} {} {:.1f} {} -{}", x, y, align,
                       0.55 * size * static_cast<double>(s.size()), s.size(), s));
    }
    const std::string& ops() const { return ops_; }

  private:
    void op(const std::string& s) { ops_ += s + ' '; }
    std::string ops_;
};

// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
    const double span = hi > lo ? hi - lo : 1.0;
    const double raw = span / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double f : {1.0, 2.0, 5.0, 10.0})
        if (f * mag >= raw) {
            step = f * mag;
            break;
        }
    std::vector<double> out;
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
        out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    return out;
}

struct Axis {
    double lo = 0, hi = 1;    // data range shown
    double from = 0, to = 1;  // points
    double scale_unit = 1;    // data per displayed unit (GiB for bytes)
    std::string label;

    double at(double v) const { return from + (v - lo) / (hi - lo) * (to - from); }
    /// Round tick values in data units (round in the displayed unit).
    std::vector<double> tick_values() const {
        std::vector<double> out = ticks(lo / scale_unit, hi / scale_unit);
        for (double& t : out)
            t *= scale_unit;
        return out;
    }
};

Axis make_axis(const std::vector<double>& values, Metric metric, double from, double to) {
    Axis a;
    a.from = from;
    a.to = to;
    const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
    double lo = *mn, hi = *mx;
    if (metric == Metric::bubble_rate || lo >= 0) lo = std::min(lo, 0.0);
    if (hi <= lo) hi = lo + (lo == 0 ? 1.0 : std::abs(lo) * 0.1);
    a.lo = lo;
    a.hi = hi + (hi - lo) * 0.05;
    a.label = info(metric).label;
    if (metric == Metric::peak_memory) {
        a.scale_unit = 1024.0 * 1024.0 * 1024.0;
        a.label += " (GiB)";
    }
    return a;
}

std::string job_label(const Job& j) {
    std::string s = fmt::format("{} m={}", j.schedule, j.m);
    if (j.v > 0) s += fmt::format(" v={}", j.v);
    if (!j.model.empty()) s += fmt::format(" b={}", j.mb);
    if (j.tp > 1) s += fmt::format(" t={}", j.tp);
    if (j.dp > 1) s += fmt::format(" d={}", j.dp);
    return s;
}

// Each value replaced by the smallest value of its run: sorted, a value within `tolerance`
// (relative) of its run's first value joins that run.
std::vector<double> snapped(const std::vector<double>& values, double tolerance) {
    std::vector<std::size_t> order(values.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<double> out(values.size());
    double run = 0;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const double v = values[order[k]];
        if (k == 0 || std::abs(v - run) > tolerance * std::max(std::abs(v), std::abs(run))) run = v;
        out[order[k]] = run;
    }
    return out;
}

}  // namespace

Metric parse_metric(const std::string& name) {
    std::string known;
    for (const MetricInfo& i : metric_table) {
        if (name == i.name) return i.metric;
        known += (known.empty() ? "" : ", ") + std::string(i.name);
    }
    throw std::invalid_argument(fmt::format("unknown column '{}' (known: {})", name, known));
}

const char* metric_name(Metric metric) {
    return info(metric).name;
}

bool higher_is_better(Metric metric) {
    return info(metric).higher_better;
}

double metric_value(const Result& r, Metric metric) {
    switch (metric) {
        case Metric::peak_memory:
            return r.peak_memory;
        case Metric::peak_activation:
            return r.peak_activation;
        case Metric::throughput:
            return r.throughput;
        case Metric::samples_per_gpu:
            return r.samples_per_second_per_gpu;
        case Metric::bubble_rate:
            return r.bubble_rate;
        case Metric::makespan:
            return r.makespan;
    }
    return 0;
}

std::vector<std::size_t> pareto_front(const std::vector<Result>& rows,
                                      const ParetoOptions& options) {
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].status == Status::ok) ok.push_back(i);
    const bool up = higher_is_better(options.y);
    // y as "larger is better" so one comparison serves both directions.
    std::vector<double> xs, ys;
    for (std::size_t i : ok) {
        xs.push_back(metric_value(rows[i], options.x));
        ys.push_back(up ? metric_value(rows[i], options.y) : -metric_value(rows[i], options.y));
    }
    xs = snapped(xs, options.tolerance);
    ys = snapped(ys, options.tolerance);
    std::vector<std::size_t> order(ok.size());  // positions in ok
    for (std::size_t k = 0; k < order.size(); ++k)
        order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (xs[a] != xs[b]) return xs[a] < xs[b];
        if (ys[a] != ys[b]) return ys[a] > ys[b];
        return a < b;
    });
    // Sweep by x: a row is on the front when nothing with less (or equal) x has as much y.
    std::vector<std::size_t> front;
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < order.size();) {
        const double top = ys[order[k]];  // the best y at this x
        std::size_t next = k;
        for (; next < order.size() && xs[order[next]] == xs[order[k]]; ++next)
            if (top > best && ys[order[next]] == top) front.push_back(ok[order[next]]);
        best = std::max(best, top);
        k = next;
    }
    return front;
}

std::string pareto_dot(const std::vector<Result>& rows, const ParetoOptions& options) {
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].status == Status::ok) ok.push_back(i);
    if (ok.empty()) throw std::invalid_argument("no row with status ok to plot");
    constexpr double left = 80, bottom = 55, plot_w = 520, plot_h = 340, legend_w = 170;
    std::vector<double> xs, ys;
    for (std::size_t i : ok) {
        xs.push_back(metric_value(rows[i], options.x));
        ys.push_back(metric_value(rows[i], options.y));
    }
    const Axis ax = make_axis(xs, options.x, left, left + plot_w);
    const Axis ay = make_axis(ys, options.y, bottom, bottom + plot_h);
    std::map<std::string, std::string> colours;
    for (std::size_t i : ok)
        if (!colours.count(rows[i].job.schedule)) {
            const std::size_t n = colours.size() % std::size(palette);
            colours[rows[i].job.schedule] = palette[n];
        }

    Canvas c;
    c.colour("#dddddd");
    for (double t : ax.tick_values())
        c.line(ax.at(t), ay.from, ax.at(t), ay.to);
    for (double t : ay.tick_values())
        c.line(ax.from, ay.at(t), ax.to, ay.at(t));
    c.colour("#000000");
    c.line(ax.from, ay.from, ax.to, ay.from);
    c.line(ax.from, ay.from, ax.from, ay.to);
    for (double t : ax.tick_values()) {
        c.line(ax.at(t), ay.from, ax.at(t), ay.from - 4);
        c.text(ax.at(t), ay.from - 16, 0, 10, fmt::format("{:.4g}", t / ax.scale_unit));
    }
    for (double t : ay.tick_values()) {
        c.line(ax.from - 4, ay.at(t), ax.from, ay.at(t));
        c.text(ax.from - 7, ay.at(t) - 3, 1, 10, fmt::format("{:.4g}", t / ay.scale_unit));
    }
    c.text((ax.from + ax.to) / 2, 14, 0, 12, ax.label + " (lower is better)");
    c.text(ax.from, ay.to + 12, -1, 12,
           ay.label + (higher_is_better(options.y) ? " (higher is better)" : " (lower is better)"));

    const std::vector<std::size_t> front = pareto_front(rows, options);
    std::vector<std::pair<double, double>> line;
    for (std::size_t i : front)
        line.emplace_back(ax.at(metric_value(rows[i], options.x)),
                          ay.at(metric_value(rows[i], options.y)));
    c.colour("#333333");
    if (line.size() > 1) c.polyline(line);
    for (std::size_t k = 0; k < front.size(); ++k)
        c.text(line[k].first + 6, line[k].second + 5, -1, 9, job_label(rows[front[k]].job));

    double ly = ay.to - 10;
    c.text(ax.to + 20, ly + 14, -1, 11, "schedule");
    for (const auto& [name, colour] : colours) {
        c.colour(colour);
        c.fill(colour);
        c.dot(ax.to + 26, ly - 4, 4);
        c.colour("#000000");
        c.text(ax.to + 36, ly - 8, -1, 10, name);
        ly -= 16;
    }
    c.text(ax.to + 20, ly - 8, -1, 9, "line: Pareto front");

    std::string out = "digraph pareto {\n";
    out += fmt::format(
        "  graph [layout=nop2, bgcolor=white, pad=0.1, fontname=\"{}\", fontsize=13, "
        "labelloc=t, label=\"{}\",\n         _background=\"{}\"];\n",
        font, escape(options.title), escape(c.ops()));
    out += fmt::format(
        "  node [shape=circle, style=filled, fixedsize=true, width=0.11, label=\"\", "
        "penwidth=0.5, color=\"#222222\", fontname=\"{}\"];\n",
        font);
    out += "  corner_0 [pos=\"0,0\", shape=point, width=0.01, style=invis];\n";
    out +=
        fmt::format("  corner_1 [pos=\"{:.2f},{:.2f}\", shape=point, width=0.01, style=invis];\n",
                    ax.to + legend_w, ay.to + 24);
    std::vector<bool> on_front(rows.size(), false);
    for (std::size_t i : front)
        on_front[i] = true;
    for (std::size_t i : ok) {
        const Result& r = rows[i];
        out += fmt::format(
            "  p{} [pos=\"{:.2f},{:.2f}\", fillcolor=\"{}\", tooltip=\"{}: {} {:.6g}, {} "
            "{:.6g}{}\"{}];\n",
            i, ax.at(metric_value(r, options.x)), ay.at(metric_value(r, options.y)),
            colours[r.job.schedule], escape(job_label(r.job)), metric_name(options.x),
            metric_value(r, options.x), metric_name(options.y), metric_value(r, options.y),
            on_front[i] ? " (Pareto front)" : "", on_front[i] ? ", penwidth=1.5, width=0.15" : "");
    }
    out += "}\n";
    return out;
}

}  // namespace pipesim::sweep
