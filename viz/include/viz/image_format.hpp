#pragma once
// The picture formats pipesim writes, picked by a file name's extension.

#include <optional>
#include <string_view>

namespace pipesim::viz {

enum class ImageFormat { dot, svg, png, pdf };

/// "dot", "svg", "png" or "pdf".
std::string_view image_format_name(ImageFormat format);

/// The format named "dot" (or "gv"), "svg", "png" or "pdf"; nullopt for any other name.
std::optional<ImageFormat> image_format_named(std::string_view name);

/// The format a file name asks for by its extension (.dot or .gv, .svg, .png, .pdf; any
/// case), or, for a name without an extension such as `-` (standard output), the format
/// named by `format_without_extension`. Throws std::invalid_argument naming the file and the
/// known formats otherwise.
ImageFormat image_format_for_path(std::string_view path,
                                  std::string_view format_without_extension = {});

}  // namespace pipesim::viz
