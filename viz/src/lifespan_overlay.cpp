#include "lifespan_overlay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "style.hpp"

namespace pipesim::viz::detail {

namespace {

// Dark cyan: apart from the passes' blue, orange, green and purple and from the critical
// path's red, which may be drawn with it.
constexpr const char* lifespan_colour = "#0b7285";
constexpr const char* lifespan_fill = "#0b728566";

}  // namespace

void draw_lifespans(XdotCanvas& c, const Timeline& t, int microbatch, const RowGeometry& rows) {
    if (microbatch < 0 || microbatch >= t.microbatches)
        throw std::invalid_argument(fmt::format(
            "--lifespan {}: the timeline has microbatches 0..{}", microbatch, t.microbatches - 1));
    const auto stages = static_cast<std::size_t>(t.stages());
    constexpr double none = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> first(stages, none), last(stages, none);
    std::vector<int> device(stages, -1);
    for (std::size_t d = 0; d < t.device_ops.size(); ++d)
        for (const TimedOp& op : t.device_ops[d]) {
            if (op.op.microbatch != microbatch) continue;
            const auto s = static_cast<std::size_t>(op.op.stage);
            device[s] = static_cast<int>(d);
            if (op.op.pass == Pass::F) first[s] = op.start;
            if (op.op.pass == Pass::W || op.op.pass == Pass::BW) last[s] = op.end;
        }
    const double gap = (rows.row_height - rows.box_height) / 2;
    // Even chunks above the row, odd ones below; with three chunks or more, each side's gap
    // split into one lane per chunk, the lowest chunk next to the boxes (chunks 0 and 2 of
    // interleaved 1F1B at v = 3 were drawn over each other).
    const int lanes_above = (t.chunks + 1) / 2, lanes_below = std::max(1, t.chunks / 2);
    for (std::size_t s = 0; s < stages; ++s) {
        if (std::isnan(first[s]) || std::isnan(last[s])) continue;
        const double x0 = rows.x(first[s]), x1 = rows.x(last[s]);
        const double centre = rows.row_centre(device[s]);
        const int chunk = chunk_of(t, static_cast<int>(s));
        const bool above = chunk % 2 == 0;  // y grows upwards
        const double lane = gap / (above ? lanes_above : lanes_below);
        const double inner = centre + (above ? 1 : -1) * (rows.box_height / 2 + lane * (chunk / 2));
        const double outer = inner + (above ? 1 : -1) * lane;
        c.pen(lifespan_colour);
        c.fill(lifespan_fill);
        c.polygon({{x0, inner}, {x1, inner}, {x1, outer}, {x0, outer}});
        c.line({x0, centre - rows.row_height / 2}, {x0, centre + rows.row_height / 2});
        c.line({x1, centre - rows.row_height / 2}, {x1, centre + rows.row_height / 2});
    }
}

}  // namespace pipesim::viz::detail
