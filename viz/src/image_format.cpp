#include "viz/image_format.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"

namespace pipesim::viz {

std::string_view image_format_name(ImageFormat format) {
    switch (format) {
        case ImageFormat::dot:
            return "dot";
        case ImageFormat::svg:
            return "svg";
        case ImageFormat::png:
            return "png";
        case ImageFormat::pdf:
            return "pdf";
    }
    return "dot";
}

ImageFormat image_format_for_path(std::string_view path) {
    const std::string extension = fileio::file_extension(path);
    if (extension == ".dot" || extension == ".gv") return ImageFormat::dot;
    if (extension == ".svg") return ImageFormat::svg;
    if (extension == ".png") return ImageFormat::png;
    if (extension == ".pdf") return ImageFormat::pdf;
    throw std::invalid_argument(
        fmt::format("{}: unknown picture format '{}' (use .svg, .png, .pdf or .dot)", path,
                    extension.empty() ? std::string("no extension") : extension));
}

}  // namespace pipesim::viz
