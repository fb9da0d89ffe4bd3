#pragma once
// Sizes and the data-to-points mapping shared by the scatter plot's layout and drawing.

#include "viz/scatter_plot.hpp"
#include "xdot.hpp"

namespace pipesim::viz::detail {

// The plot area, in points from the picture's lower left corner.
constexpr double plot_left = 80;    // room for the y tick labels
constexpr double plot_bottom = 55;  // room for the x tick labels and the x title
constexpr double plot_width = 520;
constexpr double plot_height = 340;
constexpr double label_size = 9;   // font size of the points' labels
constexpr double marker_size = 9;  // width of a marker

// Where `at` goes in the plot area (halves keep hi − lo finite for any finite range).
inline Point position(const ScatterLayout& layout, DataPoint at) {
    auto along = [](const AxisRange& axis, double v, double from, double to) {
        const double share = (v / 2 - axis.lo / 2) / (axis.hi / 2 - axis.lo / 2);
        return from + share * (to - from);
    };
    return {along(layout.x, at.x, layout.plot.left, layout.plot.right),
            along(layout.y, at.y, layout.plot.bottom, layout.plot.top)};
}

// The box a text of font `size` takes with its baseline at `at`, left-aligned, as drawn (with
// text_width's Helvetica figure, labels ran into the markers beside them).
inline Box text_box(Point at, double size, std::string_view text) {
    return {at.x, at.y - 0.25 * size, at.x + XdotCanvas::drawn_width(size, text.size()),
            at.y + 0.8 * size};
}

}  // namespace pipesim::viz::detail
