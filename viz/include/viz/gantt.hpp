#pragma once
// A compact text Gantt chart of a timeline for the terminal.

#include <string>

#include "schedules/timeline.hpp"

namespace pipesim::viz {

struct GanttOptions {
    /// Total line width in characters, row labels included.
    int width = 100;
    /// ANSI colours: each op's cell coloured by pass, showing the microbatch's last digit.
    bool colour = false;
};

/// One line per device: each character stands for an equal slice of the makespan and shows
/// the op running at the slice's middle: F, B, W or X (fused BW), lower case for chunks ≥ 1,
/// '.' when the device idles. Then a time axis and a legend. Every line is at most `width`
/// characters (not counting colour codes). Throws std::invalid_argument when the width leaves
/// fewer than 4 columns for the chart.
std::string text_gantt(const Timeline& timeline, const GanttOptions& options = {});

}  // namespace pipesim::viz
