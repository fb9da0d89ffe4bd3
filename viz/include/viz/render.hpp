#pragma once
// Rendering DOT to pictures through Graphviz's library (libgvc/cgraph). Implemented by the
// `viz_render` target, which is built without Graphviz too: then only .dot output works.

#include <string>
#include <string_view>

#include "viz/image_format.hpp"

namespace pipesim::viz {

/// Whether this build renders SVG, PNG and PDF (Graphviz was found at configure time).
bool graphviz_available();

/// Lays out `dot` with the engine its graph's `layout` attribute names ("dot" if none) and
/// renders it: SVG text, PNG (192 dpi, lower for pictures over 40 million pixels, never
/// under 96) or PDF bytes; ImageFormat::dot returns `dot` as is.
/// Throws std::invalid_argument when Graphviz is missing from this build (naming what would
/// work), std::runtime_error when Graphviz rejects the text or fails (a bug on our side for
/// pipesim's own DOT).
std::string render_dot(std::string_view dot, ImageFormat format);

/// Renders `dot` in the format `path`'s extension asks for and writes it whole or not at all.
/// Throws std::invalid_argument for an unknown extension (before any work) and
/// std::invalid_argument "cannot write PATH: REASON" when the file cannot be written, besides
/// render_dot's errors.
void write_picture(const std::string& path, std::string_view dot,
                   std::string_view format_without_extension = {});

}  // namespace pipesim::viz
