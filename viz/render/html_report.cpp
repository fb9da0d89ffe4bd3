// write_html_report(): the pictures rendered with Graphviz, the page written atomically.
#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "viz/html_report.hpp"
#include "viz/render.hpp"

namespace pipesim::viz {

void check_html_report(const std::string& flag, const std::string& path) {
    const auto dot = path.rfind('.');
    std::string extension = dot == std::string::npos ? std::string() : path.substr(dot);
    // As the other outputs' extensions: .HTML and .Htm too.
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (extension != ".html" && extension != ".htm")
        throw std::invalid_argument(fmt::format(
            "{} {}: the report is an HTML page; give a file ending in .html or .htm", flag, path));
    if (!graphviz_available())
        throw std::invalid_argument(fmt::format(
            "{} {}: the report draws its timelines with Graphviz, which this build lacks "
            "(install libgraphviz-dev and rebuild)",
            flag, path));
}

std::string html_report_text(const HtmlReport& report) {
    std::vector<std::string> svgs;
    svgs.reserve(report.schedules.size());
    for (std::size_t i = 0; i < report.schedules.size(); ++i) {
        const HtmlSchedule& s = report.schedules[i];
        svgs.push_back(render_dot(
            timeline_dot(s.timeline, s.memory, html_picture_options(report, i)), ImageFormat::svg));
    }
    return html_document(report, svgs);
}

void write_html_report(const std::string& path, const HtmlReport& report) {
    fileio::write_file_atomically(path, html_report_text(report));
}

}  // namespace pipesim::viz
