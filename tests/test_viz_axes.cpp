// Axis ticks for any positive finite range, and pictures of timelines whose times are near
// the smallest or the largest doubles (they used to hang the renderer).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "cli_runner.hpp"
#include "viz/axis_ticks.hpp"

using pipesim::test::read_file;
namespace fs = std::filesystem;
namespace viz = pipesim::viz;

TEST_CASE("the tick step is a positive round number giving about the asked number of ticks",
          "[viz]") {
    CHECK(viz::tick_step(10, 10) == 1);
    CHECK(viz::tick_step(7, 5) == 2);
    CHECK(viz::tick_step(0.3, 5) == Approx(0.1));
    CHECK(viz::tick_step(4000, 5) == 1000);
    CHECK(viz::tick_step(0, 5) == 1);
    CHECK(viz::tick_step(-3, 5) == 1);
}

TEST_CASE("every positive finite span gets a positive step and a handful of ticks", "[viz]") {
    const double tiny = std::numeric_limits<double>::denorm_min();
    const double huge = std::numeric_limits<double>::max();
    const double span = GENERATE_COPY(tiny, 2 * tiny, 20 * tiny, 1e-322, 1e-321, 1e-310, 3e-308,
                                      1e-300, 1e-9, 1.0, 1e300, 1e307, 9e307, huge);
    const int ticks = GENERATE(1, 5, 10);
    CAPTURE(span, ticks);
    const double step = viz::tick_step(span, ticks);
    CHECK(step > 0);
    CHECK(std::isfinite(step));
    const std::vector<double> marks = viz::axis_ticks(0, span, ticks);
    CHECK(marks.size() >= 1);
    CHECK(marks.size() <= static_cast<std::size_t>(2 * ticks + 2));
    CHECK(marks.front() >= 0);
    for (std::size_t i = 1; i < marks.size(); ++i)
        CHECK(marks[i] > marks[i - 1]);
}

TEST_CASE("axis ticks lie within the range at round values, also far from zero", "[viz]") {
    CHECK(viz::axis_ticks(0, 1, 5) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
    CHECK(viz::axis_ticks(73.2, 96.9, 5) == std::vector<double>{75, 80, 85, 90, 95});
    CHECK(viz::axis_ticks(-3, 3, 3) == std::vector<double>{-2, 0, 2});
    CHECK(viz::axis_ticks(2.5, 2.5, 5) == std::vector<double>{2.5});
    CHECK(viz::axis_ticks(3, 2, 5).empty());
    // A range a few ulps wide far from zero: the marks stay few and distinct.
    const double lo = 1e20, hi = std::nextafter(std::nextafter(lo, 2e20), 2e20);
    const std::vector<double> far = viz::axis_ticks(lo, hi, 10);
    CHECK(far.size() <= 22);
    // The whole double range, whose width overflows.
    const double huge = std::numeric_limits<double>::max();
    const std::vector<double> all = viz::axis_ticks(-huge, huge, 4);
    CHECK(!all.empty());
    CHECK(all.size() <= 10);
}

namespace {

// Runs pipesim under timeout(1), so that a hang fails the test instead of stalling the suite.
// Returns the exit status (124: killed by the timeout).
int run_bounded(const std::string& args, int seconds) {
    const std::string command = "timeout -k 5 " + std::to_string(seconds) + " " +
                                std::string(PIPESIM_BINARY) + " " + args +
                                " >/dev/null 2>&1 </dev/null";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The saved timeline of 1F1B p=2 m=2 (unit costs), its times replaced: op k of the file (in
// file order) starts at k·unit and ends at (k + 1)·unit.
std::string scaled_timeline(const fs::path& dir, double unit) {
    const fs::path original = dir / "unit.json";
    REQUIRE(run_bounded("analyze -s 1f1b -p 2 -m 2 --save-timeline " + original.string(), 60) == 0);
    std::string text = read_file(original);
    // Every "start": S, "end": E pair becomes consecutive multiples of `unit`.
    int k = 0;
    std::string out;
    std::size_t at = 0;
    for (std::size_t s; (s = text.find("\"start\": ", at)) != std::string::npos;) {
        const std::size_t e = text.find("\"end\": ", s);
        const std::size_t close = text.find_first_of(",}", e);
        out += text.substr(at, s - at);
        out += fmt::format("\"start\": {}, \"end\": {}", k * unit, (k + 1) * unit);
        ++k;
        at = close;
    }
    out += text.substr(at);
    const fs::path path = dir / "scaled.json";
    std::ofstream(path) << out;
    return path.string();
}

}  // namespace

TEST_CASE(
    "render draws timelines whose times are near the smallest doubles or the largest "
    "a timeline holds",
    "[viz][cli]") {
    // A saved timeline's times go up to 1e100 (docs/timeline-format.md): 12 ops of 1e98 end at
    // 1.2e99.
    const double unit = GENERATE(5e-324, 1e-323, 1e-322, 1e-300, 1e28, 1e98);
    CAPTURE(unit);
    const fs::path dir = fs::temp_directory_path() / ("pipesim_axes_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string timeline = scaled_timeline(dir, unit);
    for (const std::string out : {"t.dot", "t.svg", "t.png"}) {
        CAPTURE(out);
        CHECK(run_bounded("render " + timeline + " -o " + (dir / out).string(), 60) == 0);
        CHECK(run_bounded("render " + timeline + " --no-memory -o " + (dir / out).string(), 60) ==
              0);
    }
    // Every coordinate is a number (an overflowed scale used to give inf and nan).
    const std::string dot = read_file(dir / "t.dot");
    CHECK_FALSE(std::regex_search(dot, std::regex(R"(\b-?(nan|inf)\b)")));
    fs::remove_all(dir);
}

TEST_CASE("render refuses times beyond what a timeline holds, naming the op", "[viz][cli]") {
    const fs::path dir =
        fs::temp_directory_path() / ("pipesim_axes_big_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string timeline = scaled_timeline(dir, 1e300);
    const auto r =
        pipesim::test::run_pipesim("render " + timeline + " -o " + (dir / "t.svg").string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("device_ops[0][0].end: expected a number in 0..1e+100, got "
                                      "'1e+300'"));
    CHECK_FALSE(fs::exists(dir / "t.svg"));
    fs::remove_all(dir);
}
