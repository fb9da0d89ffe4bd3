// The scatter plot: axes zoomed to the data, labels that do not overlap, markers hidden under
// other series named in the legend, and the DOT it writes.
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "viz/scatter_plot.hpp"

namespace viz = pipesim::viz;

namespace {

// Every pair of placed labels, checked for overlap.
std::size_t overlapping_pairs(const viz::ScatterLayout& layout) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < layout.labels.size(); ++i)
        for (std::size_t j = i + 1; j < layout.labels.size(); ++j)
            n += layout.labels[i].box.overlaps(layout.labels[j].box) ? 1 : 0;
    return n;
}

bool inside(const viz::Box& inner, const viz::Box& outer) {
    return inner.left >= outer.left && inner.right <= outer.right && inner.bottom >= outer.bottom &&
           inner.top <= outer.top;
}

viz::ScatterSeries labelled_series(const std::string& name, int n, double x0, double dx, double y0,
                                   double dy) {
    viz::ScatterSeries s{name, {}};
    for (int i = 0; i < n; ++i)
        s.points.push_back({{x0 + dx * i, y0 + dy * i}, fmt::format("{} config {}", name, i), ""});
    return s;
}

}  // namespace

TEST_CASE("an axis zooms to its data with a margin instead of starting at 0", "[viz]") {
    const viz::AxisRange r = viz::axis_range({78.5, 82, 95.25});
    const double width = 95.25 - 78.5;
    CHECK(r.lo == Approx(78.5 - 0.05 * width));
    CHECK(r.hi == Approx(95.25 + 0.05 * width));
    REQUIRE(r.ticks.size() >= 3);
    CHECK(r.ticks.front() >= r.lo);
    CHECK(r.ticks.back() <= r.hi);
    // Round ticks: multiples of 1, 2 or 5 × 10^k, evenly spaced.
    const double step = r.ticks[1] - r.ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    CHECK((mantissa == Approx(1) || mantissa == Approx(2) || mantissa == Approx(5)));
    for (double t : r.ticks)
        CHECK(std::remainder(t, step) == Approx(0).margin(1e-9 * step));
}

TEST_CASE("an axis of non-negative values stops at 0, one of a single value surrounds it",
          "[viz]") {
    CHECK(viz::axis_range({0, 5}).lo == 0);
    CHECK(viz::axis_range({0.2, 10}).lo == 0);  // 0.2 − 0.49 would be negative
    CHECK(viz::axis_range({-1, 1}).lo < -1);
    const viz::AxisRange noise = viz::axis_range({79, 78.99999999999996});
    CHECK(noise.lo == Approx(79 * 0.9));
    CHECK(noise.hi == Approx(79 * 1.1));
    CHECK(viz::axis_range({0}).hi == 1);
}

TEST_CASE("labels of crowded points never overlap and stay inside the plot", "[viz]") {
    viz::ScatterPlot plot;
    // Thirty labelled points on a tight diagonal, a stack of five at one place, and a second
    // series crossing the first: far more text than room next to each point.
    plot.series.push_back(labelled_series("zb-h1", 30, 10, 0.01, 5, 0.005));
    plot.series.push_back(labelled_series("interleaved-1f1b", 5, 10.1, 0, 5.1, 0));
    plot.series.push_back(labelled_series("1f1b", 20, 10.3, -0.01, 5, 0.006));
    const viz::ScatterLayout layout = viz::scatter_layout(plot);
    CHECK(overlapping_pairs(layout) == 0);
    for (const viz::PlacedLabel& label : layout.labels)
        CHECK(inside(label.box, layout.plot));
    CHECK(layout.labels.size() + layout.labels_left_out == 55);
    CHECK(layout.labels.size() >= 20);  // the greedy search does find room for many
}

TEST_CASE("a label goes right next to a lone point", "[viz]") {
    viz::ScatterPlot plot;
    plot.series.push_back({"a", {{{1, 1}, "alone", ""}, {{2, 2}, "", ""}}});
    const viz::ScatterLayout layout = viz::scatter_layout(plot);
    REQUIRE(layout.labels.size() == 1);
    CHECK_FALSE(layout.labels[0].leader);
    CHECK(layout.labels_left_out == 0);
}

TEST_CASE("a label keeps off the lines, and one not level with its point has a leader", "[viz]") {
    // A front ran through two labels of the pareto example, and a label put below and left of
    // its point sat beside another series' markers with nothing tying it to its own.
    viz::ScatterPlot plot;
    plot.series.push_back({"a", {{{1, 1}, "a labelled point", ""}, {{3, 3}, "", ""}}});
    // A line from the point straight to the right edge: the first spot (right of the point,
    // level with it) is crossed.
    plot.lines.push_back({"", 0, {{1, 1}, {3, 1}}});
    const viz::ScatterLayout layout = viz::scatter_layout(plot);
    REQUIRE(layout.labels.size() == 1);
    const viz::PlacedLabel& label = layout.labels[0];
    const double y = layout.plot.bottom + (1 - layout.y.lo) / (layout.y.hi - layout.y.lo) *
                                              (layout.plot.top - layout.plot.bottom);
    CHECK_FALSE((label.box.bottom <= y && y <= label.box.top));  // not across the line
    // Left of the point the label would run out of the plot: it went above or below, with a
    // leader.
    CHECK(label.leader);
}

TEST_CASE("points under a later series' markers are counted, named in the legend and ringed",
          "[viz]") {
    viz::ScatterPlot plot;
    plot.series.push_back({"1f1b", {{{1, 1}, "", ""}, {{2, 3}, "", ""}, {{3, 2}, "", ""}}});
    plot.series.push_back({"zb-h1", {{{1, 1}, "", ""}, {{2, 3}, "", ""}}});
    const viz::ScatterLayout layout = viz::scatter_layout(plot);
    CHECK(layout.covered == std::vector<std::size_t>{2, 0});
    const std::string dot = viz::scatter_plot_dot(plot);
    CHECK(layout.stacked == std::vector<std::vector<int>>{{0, 0, 0}, {1, 1}});
    CHECK_THAT(dot, Catch::Contains("1f1b (2 of 3 share their spot with a later marker)"));
    // The covering markers are drawn at 0.6 of the size, so the covered ones ring them.
    CHECK_THAT(dot, Catch::Contains(fmt::format("width={0:.4f}, height={0:.4f}]", 9 * 0.6 / 72.0)));
    CHECK_THAT(dot, !Catch::Contains("zb-h1 ("));
    // The two series differ in shape too, so a covered marker still shows its outline.
    CHECK_THAT(dot, Catch::Contains("s0_0 [pos=") && Catch::Contains("shape=circle"));
    CHECK_THAT(dot, Catch::Contains("s1_0 [pos=") && Catch::Contains("shape=square"));
}

TEST_CASE("the scatter plot's DOT has a node per point, the axis titles and data-range ticks",
          "[viz]") {
    viz::ScatterPlot plot;
    plot.title = "sweep \"a\"";
    plot.x = {"peak memory per GPU", "GiB", "lower is better"};
    plot.y = {"samples per second per GPU", "samples/s", "higher is better"};
    plot.series.push_back({"1f1b", {{{60.5, 78}, "", "job 0"}, {{71, 80}, "", "job 1"}}});
    plot.series.push_back({"zb-v", {{{64, 95}, "zb-v v=2", "job 2"}}});
    plot.lines.push_back({"Pareto front", -1, {{60.5, 78}, {64, 95}}});
    const std::string dot = viz::scatter_plot_dot(plot);
    CHECK_THAT(dot, Catch::StartsWith("digraph scatter {") && Catch::Contains("layout=nop2"));
    CHECK_THAT(dot, Catch::Contains("label=\"sweep \\\"a\\\"\""));
    CHECK_THAT(dot, Catch::Contains("peak memory per GPU (GiB), lower is better"));
    CHECK_THAT(dot, Catch::Contains("samples per second per GPU (samples/s), higher is better"));
    CHECK_THAT(dot, Catch::Contains("tooltip=\"job 2\"") && Catch::Contains("Pareto front"));
    CHECK_THAT(dot, Catch::Contains("zb-v v=2"));
    const std::regex nodes(R"(\n  s\d+_\d+ \[pos=)");
    CHECK(std::distance(std::sregex_iterator(dot.begin(), dot.end(), nodes), {}) == 3);
    // y ticks from the data (78 … 95), right-aligned xdot text: 80, 85, 90, 95 are drawn,
    // 0 and 50 are not.
    for (const char* tick :
         {" 1 11.0 2 -80 ", " 1 11.0 2 -85 ", " 1 11.0 2 -90 ", " 1 11.0 2 -95 "})
        CHECK_THAT(dot, Catch::Contains(tick));
    CHECK_THAT(dot, !Catch::Contains(" 1 5.5 1 -0 ") && !Catch::Contains(" 1 11.0 2 -50 "));
}

TEST_CASE("with several series a label takes its series' colour", "[viz]") {
    // In grey, six groups' "zb-v v=2" labels could be told apart only by the nearest marker.
    const auto label_in = [](const std::string& dot, const std::string& colour,
                             const std::string& text) {
        return std::regex_search(
            dot, std::regex("c 7 -" + colour + R"( T [0-9.]+ [0-9.]+ -?1 [0-9.]+ \d+ -)" + text));
    };
    viz::ScatterPlot plot;
    plot.series.push_back({"p=4", {{{1, 1}, "first v=1", ""}}});
    plot.series.push_back({"p=8", {{{3, 2}, "second v=2", ""}}});
    const std::string two = viz::scatter_plot_dot(plot);
    CHECK(label_in(two, "#1f77b4", "first v=1"));  // the palette's first two colours
    CHECK(label_in(two, "#ff7f0e", "second v=2"));
    plot.series.pop_back();  // one series: its markers are the only ones, the label stays dark
    CHECK_FALSE(label_in(viz::scatter_plot_dot(plot), "#1f77b4", "first v=1"));
    CHECK_THAT(viz::scatter_plot_dot(plot), Catch::Contains("first v=1"));
}

TEST_CASE("a scatter plot without points or with a non-finite value is refused", "[viz]") {
    viz::ScatterPlot empty;
    CHECK_THROWS_WITH(viz::scatter_plot_dot(empty), Catch::Contains("no point"));
    viz::ScatterPlot bad;
    bad.series.push_back({"x", {{{1, std::nan("")}, "", ""}}});
    CHECK_THROWS_WITH(viz::scatter_layout(bad),
                      Catch::Contains("'x'") && Catch::Contains("finite"));
}
