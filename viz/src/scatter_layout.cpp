// Axis ranges, hidden markers and label placement of a scatter plot.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "scatter_geometry.hpp"
#include "viz/axis_ticks.hpp"
#include "viz/scatter_plot.hpp"

namespace pipesim::viz {

using detail::Point;

namespace {

constexpr int axis_tick_count = 5;
// Room kept between a label and another point's marker (points).
constexpr double marker_clearance = 2;

// Candidate spots for a label of `width` × `height` around `anchor`: rings of eight directions
// (right first, where a reader looks), each ring further out.
std::vector<Box> candidates(Point anchor, double width, double height) {
    static constexpr double directions[][2] = {{1, 0},  {1, 1},   {1, -1}, {-1, 0},
                                               {-1, 1}, {-1, -1}, {0, 1},  {0, -1}};
    std::vector<Box> out;
    for (int ring = 0; ring < 5; ++ring) {
        const double gap = detail::marker_size / 2 + 2 + 12.0 * ring;
        for (const auto& d : directions) {
            const double cx = anchor.x + d[0] * (gap + width / 2);
            const double cy = anchor.y + d[1] * (gap + height / 2);
            out.push_back({cx - width / 2, cy - height / 2, cx + width / 2, cy + height / 2});
        }
    }
    return out;
}

bool inside(const Box& inner, const Box& outer) {
    return inner.left >= outer.left && inner.right <= outer.right && inner.bottom >= outer.bottom &&
           inner.top <= outer.top;
}

// Boxes filed by the cells of a grid they cover, so that a query looks at the boxes near it
// only: a pareto plot of 16,000 labelled fronts scanned every marker and label for each
// candidate spot of each label (quadratic; 32,000 rows took 5.4 s).
class BoxGrid {
  public:
    void add(const Box& box) {
        const auto index = static_cast<std::uint32_t>(boxes_.size());
        boxes_.push_back(box);
        for_cells(box, [&](std::uint64_t key) {
            cells_[key].push_back(index);
            return false;
        });
    }
    bool hits(const Box& box) const {
        return for_cells(box, [&](std::uint64_t key) {
            const auto it = cells_.find(key);
            return it != cells_.end() &&
                   std::any_of(it->second.begin(), it->second.end(),
                               [&](std::uint32_t i) { return boxes_[i].overlaps(box); });
        });
    }

  private:
    static constexpr double cell = 24;  // points: about a label's height, a few markers
    // Calls visit(key) for each cell `box` covers until it returns true; whether one did.
    template <class Visit>
    static bool for_cells(const Box& box, Visit&& visit) {
        const auto index = [](double v) {
            return static_cast<std::int64_t>(std::floor(std::clamp(v, -1e9, 1e9) / cell));
        };
        for (std::int64_t x = index(box.left); x <= index(box.right); ++x)
            for (std::int64_t y = index(box.bottom); y <= index(box.top); ++y)
                if (visit((static_cast<std::uint64_t>(static_cast<std::uint32_t>(x)) << 32) |
                          static_cast<std::uint32_t>(y)))
                    return true;
        return false;
    }
    std::vector<Box> boxes_;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> cells_;
};

void check_finite(const ScatterPlot& plot) {
    for (const ScatterSeries& s : plot.series)
        for (const ScatterPoint& p : s.points)
            if (!std::isfinite(p.at.x) || !std::isfinite(p.at.y))
                throw std::invalid_argument(
                    fmt::format("scatter plot: a point of '{}' is not finite", s.name));
    for (const ScatterLine& l : plot.lines)
        for (const DataPoint& v : l.vertices)
            if (!std::isfinite(v.x) || !std::isfinite(v.y))
                throw std::invalid_argument(
                    fmt::format("scatter plot: a vertex of line '{}' is not finite", l.name));
}

// Counts, per series, the points that a later series' marker covers (centres within 2 pt),
// and per point the earlier series' markers it covers, looking only at neighbouring cells of
// a 2 pt grid so that large sweeps stay fast.
void find_covered(const ScatterPlot& plot, ScatterLayout& layout) {
    constexpr double near = 2;
    struct Placed {
        Point at;
        std::size_t series;
    };
    std::unordered_map<std::uint64_t, std::vector<Placed>> cells;
    auto cell = [](double x, double y) {
        const auto cx = static_cast<std::uint32_t>(static_cast<std::int64_t>(std::floor(x / near)));
        const auto cy = static_cast<std::uint32_t>(static_cast<std::int64_t>(std::floor(y / near)));
        return (std::uint64_t{cx} << 32) | cy;
    };
    std::vector<Placed> all;
    for (std::size_t s = 0; s < plot.series.size(); ++s)
        for (const ScatterPoint& p : plot.series[s].points) {
            all.push_back({detail::position(layout, p.at), s});
            cells[cell(all.back().at.x, all.back().at.y)].push_back(all.back());
        }
    layout.covered.assign(plot.series.size(), 0);
    layout.stacked.assign(plot.series.size(), {});
    std::size_t k = 0;
    for (std::size_t s = 0; s < plot.series.size(); ++s)
        for (std::size_t i = 0; i < plot.series[s].points.size(); ++i, ++k) {
            const Placed& p = all[k];
            bool under = false;
            std::set<std::size_t> over;  // the earlier series this marker covers
            for (int dx = -1; dx <= 1; ++dx)
                for (int dy = -1; dy <= 1; ++dy) {
                    const auto it = cells.find(cell(p.at.x + dx * near, p.at.y + dy * near));
                    if (it == cells.end()) continue;
                    for (const Placed& q : it->second) {
                        if (q.series == p.series ||
                            std::hypot(p.at.x - q.at.x, p.at.y - q.at.y) > near)
                            continue;
                        if (q.series > p.series) under = true;
                        if (q.series < p.series) over.insert(q.series);
                    }
                }
            layout.covered[s] += under ? 1 : 0;
            layout.stacked[s].push_back(static_cast<int>(over.size()));
        }
}

// The drawn lines (the fronts) as small boxes every few points along each segment, for labels
// to keep off: a front ran through two labels of the pareto example.
BoxGrid line_boxes(const ScatterPlot& plot, const ScatterLayout& layout) {
    constexpr double step = 3, half = 1;
    BoxGrid lines;
    for (const ScatterLine& line : plot.lines)
        for (std::size_t v = 1; v < line.vertices.size(); ++v) {
            const Point a = detail::position(layout, line.vertices[v - 1]);
            const Point b = detail::position(layout, line.vertices[v]);
            // Within the plot (a segment ends at its points, which lie in it).
            const double length = std::min(std::hypot(b.x - a.x, b.y - a.y), 1e4);
            const auto samples = static_cast<int>(std::ceil(length / step));
            for (int k = 0; k <= samples; ++k) {
                const double f = samples > 0 ? static_cast<double>(k) / samples : 0.0;
                const Point at{a.x + f * (b.x - a.x), a.y + f * (b.y - a.y)};
                lines.add({at.x - half, at.y - half, at.x + half, at.y + half});
            }
        }
    return lines;
}

// Greedy placement: each label takes the first candidate inside the plot that overlaps no
// placed label, no marker and no line; failing that, one that may cross a line; then one that
// may cover a marker; failing that, none. A label not level with its point (above, below or
// diagonal to it, or further out) gets a leader line: beside other series' markers, one placed
// diagonally read as theirs.
void place_labels(const ScatterPlot& plot, ScatterLayout& layout) {
    BoxGrid markers;
    for (const ScatterSeries& s : plot.series)
        for (const ScatterPoint& p : s.points) {
            const Point c = detail::position(layout, p.at);
            const double r = detail::marker_size / 2 + marker_clearance;
            markers.add({c.x - r, c.y - r, c.x + r, c.y + r});
        }
    const BoxGrid lines = line_boxes(plot, layout);
    BoxGrid taken;
    for (std::size_t s = 0; s < plot.series.size(); ++s)
        for (std::size_t i = 0; i < plot.series[s].points.size(); ++i) {
            const ScatterPoint& p = plot.series[s].points[i];
            if (p.label.empty()) continue;
            const Box size = detail::text_box({0, 0}, detail::label_size, p.label);
            const std::vector<Box> spots = candidates(
                detail::position(layout, p.at), size.right - size.left, size.top - size.bottom);
            auto first_free = [&](bool avoid_markers, bool avoid_lines) {
                for (std::size_t k = 0; k < spots.size(); ++k)
                    if (inside(spots[k], layout.plot) && !taken.hits(spots[k]) &&
                        (!avoid_markers || !markers.hits(spots[k])) &&
                        (!avoid_lines || !lines.hits(spots[k])))
                        return k;
                return spots.size();
            };
            std::size_t k = first_free(true, true);
            if (k == spots.size()) k = first_free(true, false);
            if (k == spots.size()) k = first_free(false, false);
            if (k == spots.size()) {
                ++layout.labels_left_out;
                continue;
            }
            taken.add(spots[k]);
            // Right (0) and left (3) of the point in the first ring are level with it.
            layout.labels.push_back({s, i, spots[k], k != 0 && k != 3});
        }
}

}  // namespace

AxisRange axis_range(const std::vector<double>& values) {
    AxisRange r;
    if (values.empty()) {
        r.ticks = axis_ticks(r.lo, r.hi, axis_tick_count);
        return r;
    }
    const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
    const double lo = *min_it, hi = *max_it;
    const double size = std::max(std::abs(lo), std::abs(hi));
    const double width = hi - lo;
    double pad = 0.05 * width;
    if (!(width > 1e-9 * size)) pad = size > 0 ? 0.1 * size : 1.0;  // one value, or noise
    const double widest = std::numeric_limits<double>::max();
    r.lo = std::max(lo - pad, -widest);
    r.hi = std::min(hi + pad, widest);
    if (lo >= 0 && r.lo < 0) r.lo = 0;
    r.ticks = axis_ticks(r.lo, r.hi, axis_tick_count);
    // A range just over a round step (4.1–5.3: ticks 4.5 and 5) gets the next finer step.
    if (r.ticks.size() < 3) r.ticks = axis_ticks(r.lo, r.hi, 2 * axis_tick_count);
    return r;
}

ScatterLayout scatter_layout(const ScatterPlot& plot) {
    check_finite(plot);
    std::vector<double> xs, ys;
    for (const ScatterSeries& s : plot.series)
        for (const ScatterPoint& p : s.points) {
            xs.push_back(p.at.x);
            ys.push_back(p.at.y);
        }
    if (xs.empty()) throw std::invalid_argument("scatter plot: no point to draw");
    for (const ScatterLine& l : plot.lines)
        for (const DataPoint& v : l.vertices) {
            xs.push_back(v.x);
            ys.push_back(v.y);
        }
    ScatterLayout layout;
    layout.x = axis_range(xs);
    layout.y = axis_range(ys);
    layout.plot = {detail::plot_left, detail::plot_bottom, detail::plot_left + detail::plot_width,
                   detail::plot_bottom + detail::plot_height};
    find_covered(plot, layout);
    place_labels(plot, layout);
    return layout;
}

}  // namespace pipesim::viz
