// render_dot() for builds without Graphviz: only DOT text can be produced.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "viz/render.hpp"

namespace pipesim::viz {

bool graphviz_available() {
    return false;
}

std::string render_dot(std::string_view dot, ImageFormat format) {
    if (format == ImageFormat::dot) return std::string(dot);
    throw std::invalid_argument(fmt::format(
        "this pipesim was built without Graphviz, so it cannot write .{} pictures; write .dot "
        "and run Graphviz's 'dot -T{}', or install libgraphviz-dev and rebuild",
        image_format_name(format), image_format_name(format)));
}

}  // namespace pipesim::viz
