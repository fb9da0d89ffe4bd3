#pragma once
// The timeline picture's legend: what the colours, shades and outlines of its boxes mean,
// laid out in lines that wrap at the picture's width.

#include <string>
#include <vector>

#include "schedules/timeline.hpp"
#include "xdot.hpp"

namespace pipesim::viz::detail {

/// One legend entry: a swatch (a small box split into `fills`, left to right, with the given
/// outline) and its text.
struct LegendEntry {
    std::vector<std::string> fills;
    std::string text;
    std::string outline = "#444444";
    double outline_width = 0.5;
    bool dashed = false;
    bool arrow = false;  ///< an arrow in `outline`'s colour across the swatch, no box
};

/// Whether `microbatch` runs through its stages from a higher device to a lower one (the
/// second model copy of DualPipe, fed from the last device).
bool reverse_direction(const Timeline& timeline, int microbatch);

/// The entries for `timeline`: each pass it has, the chunk shades (v > 1), the two directions
/// (when some microbatches run backwards through the devices) and the critical path outline.
/// `lifespan_microbatch` ≥ 0: the --lifespan overlay's bars, for that microbatch. `transfers`:
/// the arrows of the transfers between devices, where the timeline has some. `data_parallel`:
/// the grey band of the data-parallel collectives, where some of it shows
/// (shown_data_parallel, which the picture draws).
std::vector<LegendEntry> legend_entries(const Timeline& timeline, bool critical_path,
                                        int lifespan_microbatch = -1, bool transfers = false,
                                        bool data_parallel = false);

/// A stretch of a device's data-parallel collectives (its gradient reduction, a parameter
/// all-gather) on no op of the device, longer than 0.2 % of the run: what of the grey band
/// shows beside the passes.
struct ShownCollective {
    int device = 0;
    double start = 0, end = 0;
};
std::vector<ShownCollective> shown_data_parallel(const Timeline& timeline);

/// Height in points the entries take when wrapped at `width`.
double legend_height(const std::vector<LegendEntry>& entries, double width);

/// Draws the entries in lines from `top_left` (Graphviz coordinates, y up), wrapped at `width`.
void draw_legend(XdotCanvas& canvas, const std::vector<LegendEntry>& entries, Point top_left,
                 double width);

}  // namespace pipesim::viz::detail
