#pragma once
// Builds an xdot drawing (Graphviz's `_background` attribute): lines, polygons and text drawn
// under the nodes. Used for what is not a node: axes, grid, memory curves, labels.

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace pipesim::viz::detail {

struct Point {
    double x = 0;
    double y = 0;
};

class XdotCanvas {
  public:
    void pen(std::string_view colour) { field("c", colour); }
    void fill(std::string_view colour) { field("C", colour); }
    /// Line style for what follows: "solid", "dashed", "setlinewidth(2)".
    void style(std::string_view style) { field("S", style); }
    void font(double size) {
        ops_ += fmt::format("F {:.1f} {} -{} ", size, font_name.size(), font_name);
        font_size_ = size;
    }
    void polyline(const std::vector<Point>& points) { shape("L", points); }
    void polygon(const std::vector<Point>& points) { shape("P", points); }
    void line(Point a, Point b) { polyline({a, b}); }
    void dot(Point centre, double radius) {
        ops_ += fmt::format("E {:.2f} {:.2f} {:.2f} {:.2f} ", centre.x, centre.y, radius, radius);
    }
    /// Text with its baseline at `at`; align −1 left, 0 centred, 1 right.
    void text(Point at, int align, std::string_view text) {
        ops_ += fmt::format("T {:.2f} {:.2f} {} {:.1f} {} -{} ", at.x, at.y, align,
                            text_width(font_size_, text), text.size(), text);
    }
    /// The width Graphviz is told a text takes: an average Helvetica glyph per byte.
    static double text_width(double size, std::string_view text) {
        return text_width(size, text.size());
    }
    static double text_width(double size, std::size_t characters) {
        return 0.55 * size * static_cast<double>(characters);
    }
    /// The width a text is drawn at, for laying things out around it: fontconfig draws
    /// "Helvetica" as DejaVu Sans where Helvetica is not installed (most Linux systems),
    /// about 0.6 em a character (0.57 measured on a 150-character picture title, 0.57 on the
    /// label "v-half v=2 mb=2"; its digits 0.636), wider than text_width's.
    static double drawn_width(double size, std::size_t characters) {
        return 0.6 * size * static_cast<double>(characters);
    }
    const std::string& ops() const { return ops_; }

    static constexpr std::string_view font_name = "Helvetica";

  private:
    void field(std::string_view op, std::string_view value) {
        ops_ += fmt::format("{} {} -{} ", op, value.size(), value);
    }
    void shape(std::string_view op, const std::vector<Point>& points) {
        ops_ += fmt::format("{} {} ", op, points.size());
        for (const Point& p : points)
            ops_ += fmt::format("{:.2f} {:.2f} ", p.x, p.y);
    }

    std::string ops_;
    double font_size_ = 10;
};

}  // namespace pipesim::viz::detail
