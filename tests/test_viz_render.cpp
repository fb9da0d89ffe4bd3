// Rendering through Graphviz's library: PNG size and content, SVG as XML with one box per op,
// PDF. Built only when Graphviz, libpng and expat are found.
#include <catch2/catch.hpp>

#include <expat.h>
#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "viz/render.hpp"
#include "viz/timeline_picture.hpp"
#include "viz_fixtures.hpp"

using pipesim::test::op_count;
using pipesim::test::replayed;
using pipesim::test::unit_memory;
namespace viz = pipesim::viz;

namespace {

struct Image {
    unsigned width = 0, height = 0;
    std::vector<unsigned char> rgba;

    std::array<unsigned char, 3> pixel(std::size_t i) const {
        return {rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]};
    }
};

Image decode_png(const std::string& bytes) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    REQUIRE(png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()) != 0);
    image.format = PNG_FORMAT_RGBA;
    Image out{image.width, image.height, std::vector<unsigned char>(PNG_IMAGE_SIZE(image))};
    REQUIRE(png_image_finish_read(&image, nullptr, out.rgba.data(), 0, nullptr) != 0);
    return out;
}

// The extent the DOT asks for: the invisible corner node at (width, height) in points.
std::pair<double, double> picture_points(const std::string& dot) {
    std::smatch m;
    REQUIRE(std::regex_search(dot, m, std::regex("corner_1 \\[pos=\"([0-9.]+),([0-9.]+)\"")));
    return {std::stod(m[1]), std::stod(m[2])};
}

// Walks an SVG with expat: counts Graphviz's node groups, the boxes (polygons) inside them and
// the tooltips (<a xlink:title>) inside them.
struct SvgCount {
    int depth_in_node = 0;  // > 0 inside <g class="node">
    std::vector<bool> node_stack;
    std::size_t nodes = 0, boxes = 0, tooltips = 0;
    std::set<std::string> titles;
    bool in_title = false;
    std::string title;
};

void XMLCALL start_element(void* data, const XML_Char* name, const XML_Char** attributes) {
    auto& c = *static_cast<SvgCount*>(data);
    const std::string element = name;
    bool is_node = false;
    for (int i = 0; attributes[i]; i += 2) {
        const std::string key = attributes[i], value = attributes[i + 1];
        if (element == "g" && key == "class" && value == "node") is_node = true;
        if (c.depth_in_node > 0 && element == "a" && key == "xlink:title" &&
            value.find("(mb ") != std::string::npos)
            ++c.tooltips;
    }
    c.node_stack.push_back(is_node);
    if (is_node) ++c.nodes;
    if (is_node || c.depth_in_node > 0) ++c.depth_in_node;
    if (c.depth_in_node > 0 && element == "polygon") ++c.boxes;
    c.in_title = c.depth_in_node > 0 && element == "title";
    c.title.clear();
}

void XMLCALL end_element(void* data, const XML_Char*) {
    auto& c = *static_cast<SvgCount*>(data);
    if (c.in_title) c.titles.insert(c.title);
    c.in_title = false;
    if (c.depth_in_node > 0) --c.depth_in_node;
    c.node_stack.pop_back();
}

void XMLCALL text(void* data, const XML_Char* s, int length) {
    auto& c = *static_cast<SvgCount*>(data);
    if (c.in_title) c.title.append(s, static_cast<std::size_t>(length));
}

}  // namespace

TEST_CASE("a rendered PNG has the picture's size and is not blank", "[viz][render]") {
    const auto timeline = GENERATE(replayed("1f1b", 4, 8), replayed("interleaved-1f1b", 4, 8, 2));
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline));
    const std::string png = viz::render_dot(dot, viz::ImageFormat::png);
    const Image image = decode_png(png);
    const auto [width_pt, height_pt] = picture_points(dot);
    // 192 pixels per inch (twice a screen's, for sharp text in documents), 72 points per
    // inch; Graphviz adds the 0.1 in pad on each side and, on top, the title line.
    CHECK(std::abs(image.width - (width_pt + 14.4) * 192 / 72) <= 4.0);
    CHECK(image.height >= height_pt * 192 / 72);
    CHECK(image.height <= (height_pt + 14.4 + 30) * 192 / 72);
    // Readable in a document: wider than a 1280-pixel screen's half at its native size.
    CHECK(image.width >= 1400);
    // Not blank: a good share of the pixels is not white, and the F boxes' blue is there.
    std::size_t coloured = 0, f_blue = 0;
    for (std::size_t i = 0; i < std::size_t{image.width} * image.height; ++i) {
        const auto p = image.pixel(i);
        if (p[0] < 250 || p[1] < 250 || p[2] < 250) ++coloured;
        if (p[0] == 0x76 && p[1] == 0xa5 && p[2] == 0xe0) ++f_blue;
    }
    CHECK(coloured > std::size_t{image.width} * image.height / 10);
    CHECK(f_blue > 1000);
}

TEST_CASE("a rendered SVG is XML with one box and one tooltip per op", "[viz][render]") {
    const auto timeline = GENERATE(replayed("1f1b", 4, 8), replayed("zb-h1", 4, 8),
                                   replayed("interleaved-1f1b", 4, 8, 2, 0.1));
    viz::TimelinePictureOptions options;
    options.transfers = true;
    options.critical_path = true;
    const std::string svg = viz::render_dot(
        viz::timeline_dot(timeline, unit_memory(timeline), options), viz::ImageFormat::svg);
    SvgCount c;
    XML_Parser parser = XML_ParserCreate(nullptr);
    XML_SetUserData(parser, &c);
    XML_SetElementHandler(parser, start_element, end_element);
    XML_SetCharacterDataHandler(parser, text);
    const auto status = XML_Parse(parser, svg.data(), static_cast<int>(svg.size()), 1);
    INFO("expat: " << XML_ErrorString(XML_GetErrorCode(parser)) << " at line "
                   << XML_GetCurrentLineNumber(parser));
    XML_ParserFree(parser);
    REQUIRE(status == XML_STATUS_OK);
    CHECK(c.nodes == op_count(timeline));
    CHECK(c.boxes == op_count(timeline));
    CHECK(c.tooltips == op_count(timeline));
    CHECK(c.titles.size() == op_count(timeline));  // distinct node names
    CHECK(c.titles.count("d0_0") == 1);
}

TEST_CASE("a long title over a short run widens the timeline, not only the margins",
          "[viz][render]") {
    // DualPipe p=2 m=2 in seconds: a 500 pt axis under a 150-character title (a saved
    // timeline's schedule name is free text).
    auto timeline = replayed("dualpipe", 2, 2);
    timeline.schedule =
        "dualpipe (two model copies fed from both ends of the pipeline, as measured on the "
        "test cluster)";
    for (auto& ops : timeline.device_ops)
        for (auto& op : ops) {
            op.start *= 1.234567;
            op.end *= 1.234567;
        }
    timeline.transfers.clear();
    timeline.time_unit = "s";
    const Image image = decode_png(
        viz::render_dot(viz::timeline_dot(timeline, unit_memory(timeline)), viz::ImageFormat::png));
    // The title's band: the top 0.1 in pad and a 13 pt line, at 192 dpi about 55 pixels.
    unsigned left = image.width, right = 0;
    for (unsigned y = 0; y < 55; ++y)
        for (unsigned x = 0; x < image.width; ++x) {
            const auto p = image.pixel(std::size_t{y} * image.width + x);
            if (p[0] < 128 && p[1] < 128 && p[2] < 128) {
                left = std::min(left, x);
                right = std::max(right, x);
            }
        }
    REQUIRE(right > left);  // the title is there
    CHECK(left >= 10);      // and not clipped
    CHECK(right + 10 <= image.width);
    // Below the title the time axis (dark grey) spans the picture: the axis is widened to
    // the title's width instead of the title widening only a blank right margin.
    unsigned rows_left = image.width, rows_right = 0;
    for (unsigned y = 60; y < image.height; ++y)
        for (unsigned x = 0; x < image.width; ++x) {
            const auto p = image.pixel(std::size_t{y} * image.width + x);
            if (p[0] < 128 && p[1] < 128 && p[2] < 128) {
                rows_left = std::min(rows_left, x);
                rows_right = std::max(rows_right, x);
            }
        }
    CHECK(rows_left < image.width / 10);
    CHECK(rows_right > image.width * 95 / 100);
}

TEST_CASE("a rendered SVG shows the legend and the time axis' title as text", "[viz][render]") {
    const auto timeline = replayed("zb-v", 4, 8);
    viz::TimelinePictureOptions options;
    options.critical_path = true;
    const std::string svg = viz::render_dot(
        viz::timeline_dot(timeline, unit_memory(timeline), options), viz::ImageFormat::svg);
    for (const char* text : {">F forward</text>", ">B input gradient</text>",
                             ">W weight gradient</text>", ">chunk 0</text>", ">chunk 1</text>",
                             ">critical path</text>", ">time (cost units)</text>"}) {
        INFO(text);
        CHECK(svg.find(text) != std::string::npos);
    }
}

TEST_CASE("a rendered PDF is a PDF", "[viz][render]") {
    const auto timeline = replayed("1f1b", 2, 2);
    const std::string pdf =
        viz::render_dot(viz::timeline_dot(timeline, unit_memory(timeline)), viz::ImageFormat::pdf);
    CHECK(pdf.rfind("%PDF-", 0) == 0);
    CHECK(pdf.size() > 1000);
}

TEST_CASE("DOT that Graphviz cannot read is an internal error with Graphviz's words",
          "[viz][render]") {
    CHECK_THROWS_AS(viz::render_dot("digraph { a -> }", viz::ImageFormat::svg), std::runtime_error);
    CHECK_THROWS_WITH(viz::render_dot("digraph { a -> }", viz::ImageFormat::svg),
                      Catch::Contains("Graphviz could not parse"));
}

TEST_CASE("a wide timeline's DOT is read by the dot command, its strings in short pieces",
          "[viz][render]") {
    // 512 devices draw a background of some 700 KB in one quoted string: the dot command
    // refused it ("scanning a quoted string ... longer than 16384?"), and the library took
    // time quadratic in its length.
    const auto timeline = replayed("1f1b", 512, 2);
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline));
    // Every quoted string of the text, escapes skipped.
    std::size_t longest = 0, strings = 0;
    for (std::size_t i = 0; i < dot.size(); ++i) {
        if (dot[i] != '"') continue;
        const std::size_t begin = ++i;
        while (i < dot.size() && dot[i] != '"')
            i += dot[i] == '\\' ? 2 : 1;
        longest = std::max(longest, i - begin);
        ++strings;
    }
    CHECK(strings > 1000);
    CHECK(longest <= 8192);
    CHECK(dot.size() > 500000);
    const auto dir =
        std::filesystem::temp_directory_path() / ("pipesim_wide_dot_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    { std::ofstream((dir / "t.dot").string()) << dot; }
    const std::string command = "dot -Tsvg '" + (dir / "t.dot").string() + "' -o '" +
                                (dir / "t.svg").string() + "' 2> '" + (dir / "err").string() + "'";
    const int status = std::system(command.c_str());
    std::ifstream err((dir / "err").string());
    const std::string message((std::istreambuf_iterator<char>(err)), {});
    INFO(message);
    CHECK(status == 0);
    // The same picture as the library draws.
    std::ifstream svg((dir / "t.svg").string());
    const std::string drawn((std::istreambuf_iterator<char>(svg)), {});
    CHECK(drawn.size() == viz::render_dot(dot, viz::ImageFormat::svg).size());
    std::filesystem::remove_all(dir);
}
