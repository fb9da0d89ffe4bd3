#pragma once
// The timeline picture's lifespan overlay: one microbatch's activation lifespans, a bar per
// virtual stage from the start of its F to the end of its W (or BW).

#include <functional>

#include "schedules/timeline.hpp"
#include "xdot.hpp"

namespace pipesim::viz::detail {

/// Where the overlay draws: the x of a time, the y of a device row's centre, and the heights of
/// a row and of an op's box within it (points).
struct RowGeometry {
    std::function<double(double)> x;
    std::function<double(int)> row_centre;
    double row_height = 0;
    double box_height = 0;
};

/// Draws the lifespans of `microbatch` on its devices' rows: a bar in the gap above the boxes
/// for even chunks and below them for odd ones (with three chunks or more, a lane of that gap
/// per chunk, the lowest chunk nearest the boxes), with a stroke across the row at either end.
/// Throws std::invalid_argument naming the microbatch when the timeline has no such one.
void draw_lifespans(XdotCanvas& canvas, const Timeline& timeline, int microbatch,
                    const RowGeometry& rows);

}  // namespace pipesim::viz::detail
