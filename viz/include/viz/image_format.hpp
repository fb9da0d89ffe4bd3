#pragma once
// The picture formats pipesim writes, picked by a file name's extension.

#include <string_view>

namespace pipesim::viz {

enum class ImageFormat { dot, svg, png, pdf };

/// "dot", "svg", "png" or "pdf".
std::string_view image_format_name(ImageFormat format);

/// The format a file name asks for by its extension (.dot or .gv, .svg, .png, .pdf; any
/// case). Throws std::invalid_argument naming the file and the known extensions otherwise.
ImageFormat image_format_for_path(std::string_view path);

}  // namespace pipesim::viz
