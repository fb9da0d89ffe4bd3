#include "viz/image_format.hpp"

#include <optional>
#include <stdexcept>
#include <string>

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

std::optional<ImageFormat> image_format_named(std::string_view name) {
    if (name == "dot" || name == "gv") return ImageFormat::dot;
    if (name == "svg") return ImageFormat::svg;
    if (name == "png") return ImageFormat::png;
    if (name == "pdf") return ImageFormat::pdf;
    return std::nullopt;
}

ImageFormat image_format_for_path(std::string_view path, std::string_view format) {
    const std::string extension = fileio::file_extension(path);
    const std::string shown =
        fileio::is_standard_stream(path) ? std::string("standard output") : std::string(path);
    if (extension.empty() && !format.empty()) {
        if (const auto named = image_format_named(format)) return *named;
        throw std::invalid_argument(fmt::format(
            "{}: unknown picture format '{}' (use svg, png, pdf or dot)", shown, format));
    }
    if (!extension.empty())
        if (const auto named = image_format_named(std::string_view(extension).substr(1)))
            return *named;
    if (extension.empty())
        throw std::invalid_argument(fmt::format(
            "{}: no extension to tell the picture format by: name it .svg, .png, .pdf or .dot, "
            "or give --format svg|png|pdf|dot",
            shown));
    throw std::invalid_argument(fmt::format(
        "{}: unknown picture format '{}' (use .svg, .png, .pdf or .dot)", shown, extension));
}

}  // namespace pipesim::viz
