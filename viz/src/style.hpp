#pragma once
// Colours, names and number formats shared by every picture and the terminal view, so that
// an F of chunk 1 looks the same everywhere.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::viz::detail {

/// Chunk of a virtual stage (0 for single-chunk schedules): looped and V-shape placements
/// both put chunk k's stages at k·p … k·p + p − 1.
inline int chunk_of(const Timeline& timeline, int stage) {
    return timeline.devices > 0 ? stage / timeline.devices : 0;
}

/// Fill colour of a pass of a chunk ("#rrggbb"); chunks cycle through four shades.
std::string_view pass_colour(Pass pass, int chunk);

/// The time a timeline's picture spans: from its first op's start to its last op's end or
/// its last data-parallel collective's (the iteration the title counts; those of tensor and
/// context parallelism run inside their ops), and its shortest op of positive duration. A
/// timeline without ops spans 0–1; one whose ops take no time, one unit from their start.
struct TimeSpan {
    double first = 0;
    double last = 1;
    double shortest = 1;
};
TimeSpan drawn_span(const Timeline& timeline);

/// The timeline picture's transfer arrows (the DOT's edges, see-through) and its data-parallel
/// collectives' band: greys, which no pass's colour is.
constexpr const char* transfer_colour = "#555555";
constexpr const char* data_parallel_colour = "#bdbdbd";

/// One step of a memory curve as drawn: at `time` the curve goes from the level before to
/// `after`, through `spike` first when that is higher than both.
struct MemoryStep {
    double time = 0;
    double after = 0;
    double spike = 0;  ///< the highest level within the step; above both ends: a peak drawn
};
/// A device's memory curve (memory_over_time) as steps at least `apart` apart in time
/// (half a point of the picture): changes closer than that are one step, so that a
/// backward's free and the next forward's allocation a moment later draw no tick down to the
/// lower level (every steady step of a simulated run drew one), while a rise within one, a
/// peak, is kept.
std::vector<MemoryStep> memory_steps(const std::vector<MemoryPoint>& curve, double apart);

/// "F3 s1": pass, microbatch, stage, the short form used in pictures and traces.
std::string short_name(const Op& op);

/// A number for a picture's labels: up to `digits` significant digits, no exponent for
/// ordinary magnitudes.
std::string pretty(double value, int digits = 4);

/// How a picture shows a quantity: values are divided by `divide` and followed by `unit`.
struct ShownUnit {
    double divide = 1;
    std::string unit;  ///< empty for a plain number

    /// "27.7 GiB" (or "4" without a unit), `digits` significant digits.
    std::string operator()(double value, int digits = 3) const;
};

/// Memory in the largest binary unit (B, KiB, MiB, GiB, TiB) that keeps `largest` ≥ 1, when
/// `bytes`; plain numbers (activation units) otherwise.
ShownUnit memory_unit(double largest, bool bytes);

/// Time for an axis spanning `span` in `time_unit`: seconds become ms or µs when the span is
/// under 1 s or 1 ms; other units are shown as they are.
ShownUnit time_axis_unit(double span, const std::string& time_unit);

/// Text escaped for a DOT double-quoted string; control bytes become U+FFFD.
std::string dot_escape(std::string_view text);

/// Longest piece of one quoted string dot_quoted() writes.
constexpr std::size_t dot_piece_bytes = 8192;
/// `text` as a DOT string with its quotes, escaped as dot_escape() does; past dot_piece_bytes,
/// as pieces joined by DOT's '+' ("…" + "…"). Graphviz's scanner refuses a quoted string over
/// 16,384 bytes (the `dot` command: "syntax error ... scanning a quoted string"), and in the
/// library takes time quadratic in its length (a 6 MB picture background: 20 s).
std::string dot_quoted(std::string_view text);

}  // namespace pipesim::viz::detail
