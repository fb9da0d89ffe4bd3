#pragma once
// Colours, names and number formats shared by every picture and the terminal view, so that
// an F of chunk 1 looks the same everywhere.

#include <string>
#include <string_view>

#include "schedules/timeline.hpp"

namespace pipesim::viz::detail {

/// Chunk of a virtual stage (0 for single-chunk schedules): looped and V-shape placements
/// both put chunk k's stages at k·p … k·p + p − 1.
inline int chunk_of(const Timeline& timeline, int stage) {
    return timeline.devices > 0 ? stage / timeline.devices : 0;
}

/// Fill colour of a pass of a chunk ("#rrggbb"); chunks cycle through four shades.
std::string_view pass_colour(Pass pass, int chunk);

/// "F3 s1": pass, microbatch, stage, the short form used in pictures and traces.
std::string short_name(const Op& op);

/// A number for a picture's labels: up to `digits` significant digits, no exponent for
/// ordinary magnitudes.
std::string pretty(double value, int digits = 4);

/// Text escaped for a DOT double-quoted string.
std::string dot_escape(std::string_view text);

}  // namespace pipesim::viz::detail
