#pragma once
// A scatter plot drawn as Graphviz DOT with fixed positions (layout "nop2", like the timeline
// picture; rendered by viz/render.hpp): series of points, each series with its own colour and
// marker shape, axes zoomed to the data with round ticks, optional polylines (a Pareto front,
// say), labels placed beside their points without overlapping, and a legend.

#include <cstddef>
#include <string>
#include <vector>

namespace pipesim::viz {

/// A position in data coordinates: the axes' displayed units (GiB, samples/s, ...).
struct DataPoint {
    double x = 0;
    double y = 0;
};

/// One marker. `label` is written beside it when there is room (see ScatterLayout);
/// `tooltip` is shown on hover in SVG. Either may be empty.
struct ScatterPoint {
    DataPoint at;
    std::string label;
    std::string tooltip;
};

/// Points sharing a colour, a marker shape and a legend entry, drawn in the order of the
/// plot's series (later series on top).
struct ScatterSeries {
    std::string name;
    std::vector<ScatterPoint> points;
};

/// A polyline through `vertices` in the order given, under the markers. `series` ≥ 0 draws it
/// in that series' colour, −1 in dark grey. A line with a `name` gets a legend entry.
struct ScatterLine {
    std::string name;
    int series = -1;
    std::vector<DataPoint> vertices;
};

/// An axis' title, drawn as "title (unit), note".
struct ScatterAxis {
    std::string title;  ///< what is plotted, e.g. "peak memory per GPU"
    std::string unit;   ///< e.g. "GiB"; empty for a plain number
    std::string note;   ///< e.g. "lower is better"; empty for none
};

/// Everything the picture shows. Values must be finite.
struct ScatterPlot {
    std::string title;
    ScatterAxis x;
    ScatterAxis y;
    std::string legend_title;  ///< above the series' entries, e.g. "schedule"; may be empty
    std::vector<ScatterSeries> series;
    std::vector<ScatterLine> lines;
    std::vector<std::string> notes;  ///< extra legend lines below the entries
};

/// A rectangle in points (1/72 inch), y up.
struct Box {
    double left = 0;
    double bottom = 0;
    double right = 0;
    double top = 0;

    /// Whether the two share interior area (touching edges do not count).
    bool overlaps(const Box& other) const {
        return left < other.right && other.left < right && bottom < other.top && other.bottom < top;
    }
};

/// The shown range of an axis and its tick values.
struct AxisRange {
    double lo = 0;
    double hi = 1;
    std::vector<double> ticks;  ///< round values within [lo, hi] (axis_ticks)
};

/// The range an axis shows for `values`: their [min, max] widened by 5 % of its width on each
/// side, so the extreme points sit off the frame, and not below 0 when no value is negative
/// (a count or a rate). A single value (or values equal to 1e-9 relative, float noise) is
/// shown ± 10 % of its size (± 1 at 0). About five ticks. Empty `values` give [0, 1].
AxisRange axis_range(const std::vector<double>& values);

/// Where a point's label went: the label's box, and whether it sits away from its point or not
/// level with it (then a thin leader line joins them).
struct PlacedLabel {
    std::size_t series = 0;
    std::size_t point = 0;
    Box box;
    bool leader = false;
};

/// The geometry of a plot, computed by scatter_layout and drawn by scatter_plot_dot.
struct ScatterLayout {
    AxisRange x;
    AxisRange y;
    Box plot;  ///< the area inside the axes, in points
    /// Labels placed greedily (series order, then point order) at the first free spot of
    /// rings of candidates around their point: inside the plot area, no two overlapping, and
    /// off the markers when possible.
    std::vector<PlacedLabel> labels;
    std::size_t labels_left_out = 0;  ///< labels with no free spot (the legend says how many)
    /// Per series: how many of its points lie under a marker of a later series (the same
    /// place to within 2 points); the legend says so, since their colour is hidden.
    std::vector<std::size_t> covered;
    /// Per series and point: how many earlier series' markers lie under it. Such a marker is
    /// drawn at 0.6^k of the full size, so that the ones under it show as rings around it.
    std::vector<std::vector<int>> stacked;
};

/// The layout of `plot`. Throws std::invalid_argument when there is no point or a value is
/// not finite.
ScatterLayout scatter_layout(const ScatterPlot& plot);

/// The picture as DOT: one node per point named "s<series>_<point>" (marker shape and colour
/// of its series, with its tooltip), axes, grid, tick labels, titles, lines, labels and the
/// legend in the graph's `_background`. Throws like scatter_layout.
std::string scatter_plot_dot(const ScatterPlot& plot);

}  // namespace pipesim::viz
