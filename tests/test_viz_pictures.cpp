// The timeline picture's DOT (golden file), the critical path, the dependency graph, the
// Chrome trace and the terminal Gantt chart.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_runner.hpp"
#include "viz/chrome_trace.hpp"
#include "viz/critical_path.hpp"
#include "viz/dependency_graph.hpp"
#include "viz/gantt.hpp"
#include "viz/outputs.hpp"
#include "viz/timeline_picture.hpp"
#include "viz_fixtures.hpp"

using pipesim::test::lines_of;
using pipesim::test::op_count;
using pipesim::test::replayed;
using pipesim::test::unit_memory;
namespace viz = pipesim::viz;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::size_t count(const std::string& text, const std::regex& pattern) {
    return static_cast<std::size_t>(
        std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), {}));
}

}  // namespace

// Regenerate on purpose with: PIPESIM_UPDATE_GOLDEN=1 ctest -R golden
TEST_CASE("the 1F1B p=4 m=8 timeline picture matches its golden DOT file", "[viz][golden]") {
    const auto timeline = replayed("1f1b", 4, 8);
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline));
    const std::string path = PIPESIM_SOURCE_DIR "/tests/golden/timeline_1f1b_p4_m8.dot";
    if (std::getenv("PIPESIM_UPDATE_GOLDEN")) {
        std::ofstream(path, std::ios::binary) << dot;
        // Fail so that an update run is never mistaken for a passing comparison.
        FAIL("PIPESIM_UPDATE_GOLDEN is set: wrote " << path
                                                    << "; review the diff, then rerun without it");
    }
    const std::string golden = read_text(path);
    REQUIRE_FALSE(golden.empty());
    CHECK(dot == golden);
}

TEST_CASE("moving one box changes only that box's line of the picture's DOT", "[viz][golden]") {
    auto timeline = replayed("1f1b", 4, 8);
    // Without the memory curves, which would move with the box; the makespan (title, axis)
    // stays the same since device 0 still ends last.
    viz::TimelinePictureOptions options;
    options.memory = false;
    const auto before = lines_of(viz::timeline_dot(timeline, unit_memory(timeline), options));
    auto& last = timeline.device_ops[3].back();
    last.start += 0.5;
    last.end += 0.5;
    const auto after = lines_of(viz::timeline_dot(timeline, unit_memory(timeline), options));
    REQUIRE(before.size() == after.size());
    std::vector<std::string> changed;
    for (std::size_t i = 0; i < before.size(); ++i)
        if (before[i] != after[i]) changed.push_back(after[i]);
    REQUIRE(changed.size() == 1);
    CHECK_THAT(changed.front(), Catch::Contains("d3_15 [pos="));
}

TEST_CASE("the timeline picture has one box per op, each with position, width and tooltip",
          "[viz]") {
    const auto timeline = GENERATE(replayed("1f1b", 4, 8), replayed("interleaved-1f1b", 4, 8, 2),
                                   replayed("zb-h2", 4, 6));
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline));
    const std::regex box(R"re(d\d+_\d+ \[pos="[-0-9.]+,[-0-9.]+", width=[0-9.]+, fillcolor=)re");
    CHECK(count(dot, box) == op_count(timeline));
    CHECK(count(dot, std::regex("tooltip=\"[FBW]+\\(mb \\d+, stage \\d+\\) on device")) ==
          op_count(timeline));
    CHECK_THAT(dot, Catch::Contains("layout=nop2") && Catch::Contains("_background="));
}

TEST_CASE("boxes sit at their start time, with widths proportional to durations", "[viz]") {
    const auto timeline = replayed("1f1b", 2, 2);
    viz::TimelinePictureOptions options;
    options.width = 900;  // points for the whole makespan (9 units): 100 pt per unit
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline), options);
    // d0's first op F(0, 0) runs 0–1: centre x = left margin 44 + 50, width 100 pt.
    CHECK_THAT(dot, Catch::Contains("d0_0 [pos=\"94.00,") && Catch::Contains("width=1.3889"));
    // d1's BW(0, 1) runs 2–4: centre 44 + 300, width 200 pt.
    CHECK_THAT(dot, Catch::Contains("d1_1 [pos=\"344.00,") && Catch::Contains("width=2.7778"));
}

TEST_CASE("transfers are drawn as arrows only when asked", "[viz]") {
    const auto timeline = replayed("1f1b", 4, 3, 0, 0.5);
    viz::TimelinePictureOptions options;
    CHECK(count(viz::timeline_dot(timeline, unit_memory(timeline), options), std::regex(" -> ")) ==
          0);
    options.transfers = true;
    CHECK(count(viz::timeline_dot(timeline, unit_memory(timeline), options),
                std::regex(" -> d\\d+_\\d+ \\[pos=\"e,")) == timeline.transfers.size());
}

TEST_CASE("the data-parallel collectives are drawn, and the axis reaches their end", "[viz]") {
    // A simulate picture's title gave an iteration 9 ms past its axis's end: the exposed
    // gradient reduction was not drawn. Ops end at 9 units (1F1B, p 2, m 2); a reduction runs
    // 9–13 on d0 and 9–12 on d1.
    auto timeline = replayed("1f1b", 2, 2);
    const double ops_end = timeline.last_end();
    REQUIRE(ops_end == 9);
    viz::TimelinePictureOptions options;
    options.width = 1300;  // 100 pt per unit over 0–13
    const std::string plain = viz::timeline_dot(timeline, unit_memory(timeline), options);
    CHECK_THAT(plain, !Catch::Contains("data-parallel"));
    for (int d = 0; d < 2; ++d)
        timeline.transfers.push_back(pipesim::Transfer{
            d, d, {}, {}, 1e9, 9, 13.0 - d, pipesim::TransferKind::data_parallel});
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline), options);
    CHECK_THAT(dot, Catch::Contains("data-parallel gradient reduction"));
    // d0's F(0, 0) runs 0–1: 100 pt wide at 1300 pt for 13 units (it was 13/9 as wide).
    CHECK_THAT(dot, Catch::Contains("d0_0 [pos=\"94.00,") && Catch::Contains("width=1.3889"));
    // The bands: 9–13 on d0 (x 944 to 1344) and 9–12 on d1 (944 to 1244), in the background.
    CHECK_THAT(
        dot, Catch::Contains("944.00") && Catch::Contains("1344.00") && Catch::Contains("1244.00"));
    // The axis has a tick at 12, past the ops' end.
    CHECK_THAT(dot, Catch::Contains("-12 "));
}

TEST_CASE("the key names the data-parallel band only where some of it shows", "[viz]") {
    // A reduction the last backwards hide whole drew a key entry for nothing on the picture.
    // 1F1B, p 2, m 2, unit passes: d0 busy 0-2, 4-6 and 7-9, d1 busy 1-7.
    auto timeline = replayed("1f1b", 2, 2);
    // Grey boxes in the xdot text: each polygon drawn after the grey fill is set, up to the
    // next colour (the bands, then the legend's swatch).
    const auto grey_boxes = [](const std::string& dot) {
        std::size_t boxes = 0;
        for (std::size_t at = dot.find("C 7 -#bdbdbd"); at != std::string::npos;
             at = dot.find("C 7 -#bdbdbd", at + 1)) {
            const std::size_t next = std::min(dot.find(" c ", at), dot.find(" C ", at + 1));
            const std::string run = dot.substr(at, next - at);
            for (std::size_t p = run.find(" P 4 "); p != std::string::npos;
                 p = run.find(" P 4 ", p + 1))
                ++boxes;
        }
        return boxes;
    };
    const auto keyed = [&](double start, double end, int device) {
        auto t = timeline;
        t.transfers.push_back(pipesim::Transfer{
            device, device, {}, {}, 1e9, start, end, pipesim::TransferKind::data_parallel});
        const std::string dot = viz::timeline_dot(t, unit_memory(t), {});
        // Drawn where it shows, left out where the passes hide it: one grey box per stretch
        // on no op (it was drawn whole behind the boxes, peeking out at their edges).
        const bool in_legend = dot.find("data-parallel gradient") != std::string::npos;
        // One band and the legend's swatch, or neither.
        CHECK(grey_boxes(dot) == (in_legend ? 2u : 0u));
        return in_legend;
    };
    // Three stretches of one reduction over 1-10, d0's idle 2-4 and 6-7 and past its end at
    // 9, and the swatch.
    auto split = timeline;
    split.transfers.push_back(
        pipesim::Transfer{0, 0, {}, {}, 1e9, 1, 10, pipesim::TransferKind::data_parallel});
    CHECK(grey_boxes(viz::timeline_dot(split, unit_memory(split), {})) == 4);
    CHECK_FALSE(keyed(4.5, 5.5, 0));   // behind d0's BW(0)
    CHECK_FALSE(keyed(1.5, 6.5, 1));   // behind d1's passes
    CHECK(keyed(1, 5, 0));             // across d0's idle 2-4
    CHECK(keyed(6.5, 8, 1));           // past d1's last pass
    CHECK_FALSE(keyed(6.5, 7.01, 1));  // past it by 0.1 % of the run: a sliver no one sees
}

TEST_CASE("a memory step's fall and rise a moment apart draw no tick down", "[viz]") {
    // A backward's free and the next forward's allocation a moment apart (a simulated run's
    // event order) drew a vertical line down to the lower level and back on every steady step.
    // 1F1B, p 2, m 4, unit passes: d1 runs F and BW of each microbatch back to back, holding
    // one microbatch from 1 to 17. Its forwards moved 1e-6 later: a gap of 1e-6 after each BW.
    auto timeline = replayed("1f1b", 2, 4);
    for (pipesim::TimedOp& op : timeline.device_ops[1])
        if (op.op.pass == pipesim::Pass::F && op.op.microbatch > 0)
            op.start += 1e-6, op.end += 1e-6;
    const pipesim::MemoryModel memory = unit_memory(timeline);
    const auto curve = pipesim::memory_over_time(timeline, memory, 1);
    REQUIRE(std::any_of(curve.begin() + 1, curve.end() - 1,
                        [](const auto& p) { return p.activation == 0; }));
    const std::string dot = viz::timeline_dot(timeline, memory, {});
    // The outlines, one polyline per strip after its line colour: d0's, then d1's.
    const std::regex outline("c 7 -#2b6cb0 L (\\d+) ([0-9. ]+)");
    std::vector<std::vector<double>> ys;
    for (auto it = std::sregex_iterator(dot.begin(), dot.end(), outline);
         it != std::sregex_iterator(); ++it) {
        std::istringstream numbers((*it)[2].str());
        std::vector<double> y;
        double a = 0, b = 0;
        while (numbers >> a >> b)
            y.push_back(b);
        ys.push_back(y);
    }
    REQUIRE(ys.size() == 2);
    const std::vector<double>& d1 = ys[1];
    REQUIRE(d1.size() >= 4);
    // From the rise at its first forward to the fall at its last backward, d1's outline stays
    // at one microbatch: above the strip's bottom, which its first point is on.
    const double bottom = d1.front();
    CHECK(std::count(d1.begin() + 1, d1.end() - 2, bottom) == 0);
}

TEST_CASE("no peak label hides the memory curve", "[viz]") {
    // A label hung under a short peak covered the curve falling away under it (DualPipeV's
    // device 0, p 4, m 8). Each strip's outline (after its line colour) and its label's
    // backing (a 4-point polygon after the backing's colour) in the xdot text, strip by strip:
    // no step of the outline may cross the backing's inside.
    const auto numbers = [](const std::string& text) {
        std::istringstream in(text);
        std::vector<double> out;
        for (double x = 0; in >> x;)
            out.push_back(x);
        return out;
    };
    const std::regex outline_re("c 7 -#2b6cb0 L \\d+ ([0-9. ]+)");
    const std::regex backing_re("C 9 -#ffffffcc P 4 ([0-9. ]+)");
    int strips = 0;
    for (const auto& [name, p, m] : {std::tuple{"dualpipe-v", 4, 8}, std::tuple{"zb-v", 4, 8},
                                     std::tuple{"v-half", 4, 8}, std::tuple{"zb-h2", 4, 6}}) {
        const auto timeline = replayed(name, p, m);
        const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline), {});
        std::vector<std::vector<double>> outlines, backings;
        for (auto it = std::sregex_iterator(dot.begin(), dot.end(), outline_re);
             it != std::sregex_iterator(); ++it)
            outlines.push_back(numbers((*it)[1].str()));
        for (auto it = std::sregex_iterator(dot.begin(), dot.end(), backing_re);
             it != std::sregex_iterator(); ++it)
            backings.push_back(numbers((*it)[1].str()));
        REQUIRE(outlines.size() == static_cast<std::size_t>(p));
        REQUIRE(backings.size() == static_cast<std::size_t>(p));
        for (int d = 0; d < p; ++d) {
            CAPTURE(name, d);
            const auto& box = backings[static_cast<std::size_t>(d)];
            const double x0 = std::min(box[0], box[2]), x1 = std::max(box[0], box[2]);
            const double y0 = std::min(box[1], box[5]), y1 = std::max(box[1], box[5]);
            const auto& line = outlines[static_cast<std::size_t>(d)];
            for (std::size_t k = 0; k + 3 < line.size(); k += 2) {
                const double ax = line[k], ay = line[k + 1], bx = line[k + 2], by = line[k + 3];
                const bool crosses = std::max(ax, bx) > x0 && std::min(ax, bx) < x1 &&
                                     std::max(ay, by) > y0 && std::min(ay, by) < y1;
                CAPTURE(ax, ay, bx, by, x0, y0, x1, y1);
                CHECK_FALSE(crosses);
            }
            ++strips;
        }
    }
    CHECK(strips == 16);
}

TEST_CASE("lifespan bars of three chunks or more are drawn apart", "[viz]") {
    // Chunks 0 and 2 both go above the row: at v = 3 chunk 0's bar was drawn over chunk 2's
    // on every device. Each side's gap now has a lane per chunk.
    const auto timeline = replayed("interleaved-1f1b", 4, 8, 3);
    viz::TimelinePictureOptions options;
    options.memory = false;
    options.lifespan_microbatch = 5;
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline), options);
    const std::regex bar(
        R"(C 9 -#0b728566 P 4 ([-0-9.]+) ([-0-9.]+) [-0-9.]+ [-0-9.]+ ([-0-9.]+) ([-0-9.]+) )");
    struct Box {
        double left, right, low, high;
    };
    std::vector<Box> bars;
    for (auto it = std::sregex_iterator(dot.begin(), dot.end(), bar); it != std::sregex_iterator();
         ++it) {
        const double x0 = std::stod((*it)[1]), y0 = std::stod((*it)[2]);
        const double x1 = std::stod((*it)[3]), y1 = std::stod((*it)[4]);
        bars.push_back({std::min(x0, x1), std::max(x0, x1), std::min(y0, y1), std::max(y0, y1)});
    }
    REQUIRE(bars.size() == 12);  // one per virtual stage
    for (std::size_t i = 0; i < bars.size(); ++i)
        for (std::size_t j = i + 1; j < bars.size(); ++j) {
            const Box &a = bars[i], &b = bars[j];
            const double wide = std::min(a.right, b.right) - std::max(a.left, b.left);
            const double tall = std::min(a.high, b.high) - std::max(a.low, b.low);
            CAPTURE(i, j, wide, tall);
            CHECK((wide <= 0.01 || tall <= 0.01));
        }
}

TEST_CASE("back-to-back F&B pairs are parted by a white line across their boxes", "[viz]") {
    // DualPipe's steady state runs pair after pair: their black frames merged into one band
    // along every row. Counted independently: a seam wherever a pair's F starts as the
    // previous pair's backward ends on the same device.
    const auto timeline = replayed("dualpipe", 8, 32);
    std::size_t seams = 0;
    for (std::size_t d = 0; d < timeline.fb_pairs.size(); ++d) {
        const auto& ops = timeline.device_ops[d];
        const auto& pairs = timeline.fb_pairs[d];
        for (std::size_t k = 1; k < pairs.size(); ++k) {
            const double end = ops[static_cast<std::size_t>(pairs[k - 1]) + 1].end;
            seams += ops[static_cast<std::size_t>(pairs[k])].start == end ? 1 : 0;
        }
    }
    REQUIRE(seams > 8 * 10);  // most of the steady state's pairs
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline));
    CHECK(count(dot, std::regex(R"(seam_\d+ \[pos=)")) == seams);
    CHECK(count(viz::timeline_dot(replayed("1f1b", 4, 8), unit_memory(replayed("1f1b", 4, 8))),
                std::regex("seam_")) == 0);
}

TEST_CASE("box tooltips give their times in the axis's unit", "[viz]") {
    // A run in seconds under one second has its axis in ms; the tooltips gave seconds
    // without a unit ("0 – 0.0131532 (0.0131532 s)").
    auto timeline = replayed("1f1b", 2, 2);
    for (auto& ops : timeline.device_ops)
        for (pipesim::TimedOp& op : ops) {
            op.start *= 1e-3;
            op.end *= 1e-3;
        }
    timeline.time_unit = "s";
    const std::string dot = viz::timeline_dot(timeline, unit_memory(timeline));
    CHECK_THAT(dot, Catch::Contains("F(mb 0, stage 0) on device 0: 0 – 1 ms (1 ms)"));
    CHECK_THAT(dot, Catch::Contains("time (ms)"));
}

TEST_CASE("the critical path of 1F1B with zero latency is busy for the whole makespan", "[viz]") {
    const auto timeline = replayed("1f1b", 4, 8);
    const auto path = viz::critical_path(timeline);
    // (m + p − 1)·(F + BW) = 11·3: the path is never idle.
    CHECK(path.busy == Approx(33.0));
    CHECK(path.waiting == Approx(0.0));
    REQUIRE_FALSE(path.ops.empty());
    CHECK(path.ops.front() == viz::OpRef{0, 0});  // starts with F(0, 0)
    CHECK(path.ops.back() == viz::OpRef{0, 15});  // ends with d0's last backward
}

TEST_CASE("each latency on the critical path shows up as waiting time", "[viz]") {
    auto [p, m, comm] = GENERATE(table<int, int, double>({{4, 4, 0.5}, {4, 8, 0.25}, {2, 3, 1.0}}));
    const auto timeline = replayed("1f1b", p, m, 0, comm);
    const auto path = viz::critical_path(timeline);
    double makespan = 0;
    for (const auto& ops : timeline.device_ops)
        makespan = std::max(makespan, ops.back().end);
    CHECK(path.busy + path.waiting == Approx(makespan));
    // Consecutive ops on different devices are joined by one latency each.
    int hops = 0;
    for (std::size_t i = 1; i < path.ops.size(); ++i)
        hops += path.ops[i].device != path.ops[i - 1].device;
    CHECK(path.waiting == Approx(hops * comm));
}

TEST_CASE("the critical path needs an op order that is a valid schedule", "[viz]") {
    auto timeline = replayed("1f1b", 2, 2);
    std::swap(timeline.device_ops[0][0], timeline.device_ops[0][2]);  // BW(0, 0) before F(0, 0)
    CHECK_THROWS_WITH(viz::critical_path(timeline), Catch::Contains("not a valid schedule"));
}

TEST_CASE("the dependency graph has every op, every dependency and the critical path", "[viz]") {
    const auto timeline = replayed("1f1b", 4, 4, 0, 0.5);
    const std::string dot = viz::dependency_graph_dot(timeline);
    CHECK(count(dot, std::regex("\\n  d\\d+_\\d+ \\[label=")) == op_count(timeline));
    // Edges: device order (ops − p) plus data: F on stages 1..3 (12), BW on stages 0..3
    // (F input, 16) and BW on stages 0..2 (next stage's BW, 12).
    CHECK(count(dot, std::regex(" -> ")) == (32 - 4) + 12 + 16 + 12);
    const auto path = viz::critical_path(timeline);
    CHECK(count(dot, std::regex("\\[label=[^\\n]*color=\"#d62728\", penwidth=2\\]")) ==
          path.ops.size());
    CHECK_THAT(dot, Catch::Contains("waiting for"));
}

TEST_CASE("DualPipe timelines, whose microbatches use half the stages, have dependencies",
          "[viz]") {
    // Half of the microbatches run through stages 0..p−1, half through p..2p−1: without the
    // ranges F(mb 0, stage 4) would look missing.
    const auto timeline = replayed("dualpipe", 4, 8, 0, 0.25);
    REQUIRE(timeline.microbatch_stages.size() == 8);
    const auto path = viz::critical_path(timeline);
    double makespan = 0;
    for (const auto& ops : timeline.device_ops)
        makespan = std::max(makespan, ops.back().end);
    CHECK(path.busy + path.waiting == Approx(makespan));
    REQUIRE_FALSE(path.ops.empty());
    const std::string dot = viz::dependency_graph_dot(timeline);
    CHECK(count(dot, std::regex("\\n  d\\d+_\\d+ \\[label=")) == op_count(timeline));
    // At least the device-order edges, plus data edges inside each microbatch's copy.
    std::size_t device_order = 0;
    for (const auto& ops : timeline.device_ops)
        device_order += ops.size() - 1;
    CHECK(count(dot, std::regex(" -> ")) >= device_order);
    viz::TimelinePictureOptions options;
    options.critical_path = true;
    CHECK_NOTHROW(viz::timeline_dot(timeline, unit_memory(timeline), options));
}

TEST_CASE("the dependency graph refuses timelines too big to read", "[viz]") {
    const auto timeline = replayed("1f1b", 8, 64);
    CHECK_THROWS_WITH(viz::dependency_graph_dot(timeline),
                      Catch::Contains("1024 ops") && Catch::Contains("up to 600"));
}

TEST_CASE("the Chrome trace has one complete event per op and transfer, in microseconds", "[viz]") {
    auto timeline = replayed("interleaved-1f1b", 4, 8, 2, 0.25);
    const auto memory = unit_memory(timeline);
    const auto trace = nlohmann::json::parse(viz::chrome_trace_json(timeline, &memory));
    std::size_t ops = 0, transfers = 0, counters = 0;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] == "C") ++counters;
        if (e["ph"] != "X") continue;
        (e["cat"] == "transfer" ? transfers : ops) += 1;
        CHECK(e["ts"].get<double>() == Approx(e["args"]["start"].get<double>() * 1000.0));
        CHECK(e["pid"].is_number_integer());
    }
    CHECK(ops == op_count(timeline));
    CHECK(transfers == timeline.transfers.size());
    CHECK(counters > 0);
    timeline.time_unit = "s";
    const auto seconds = nlohmann::json::parse(viz::chrome_trace_json(timeline));
    int first_forwards = 0;
    for (const auto& e : seconds["traceEvents"]) {
        if (e["ph"] != "X" || e["name"] != "F0 s0") continue;
        ++first_forwards;
        CHECK(e["dur"].get<double>() == Approx(0.5e6));
    }
    CHECK(first_forwards == 1);
    timeline.time_unit = "fortnights";
    CHECK_THROWS_WITH(viz::chrome_trace_json(timeline), Catch::Contains("unknown time unit"));
}

TEST_CASE("a trace's slices on one thread never overlap", "[viz]") {
    // F0 s3 ended at 4899.9999999999995 µs and BW0 s3 started at 4899.999999999999: a
    // duration computed as (end − start)·µs rounds apart from the start's own µs.
    const auto trace = nlohmann::json::parse(
        pipesim::test::run_pipesim("analyze -s 1f1b -p 4 -m 8 --costs 1,2,1 --comm 0.3 --trace -")
            .out);
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> threads;
    for (const auto& e : trace["traceEvents"]) {
        if (e["ph"] != "X") continue;
        const std::pair<int, int> thread(e["pid"].get<int>(), e["tid"].get<int>());
        const double start = e["ts"].get<double>();
        threads[thread].emplace_back(start, start + e["dur"].get<double>());
    }
    REQUIRE(!threads.empty());
    for (auto& [thread, slices] : threads) {
        std::sort(slices.begin(), slices.end());
        for (std::size_t i = 1; i < slices.size(); ++i) {
            CAPTURE(thread.first, thread.second, i);
            CHECK(slices[i].first >= slices[i - 1].second);
        }
    }
}

TEST_CASE("the Gantt chart fits the width and shows who idles when", "[viz]") {
    const auto timeline = replayed("1f1b", 4, 8);  // makespan 33
    const int width = GENERATE(10, 20, 40, 80, 137);
    const std::string text = viz::text_gantt(timeline, {width, false});
    std::istringstream lines(text);
    std::string line;
    int rows = 0;
    while (std::getline(lines, line)) {
        CHECK(static_cast<int>(line.size()) <= width);
        if (line.rfind("d", 0) == 0) ++rows;
    }
    CHECK(rows == 4);
    CHECK_THAT(text, Catch::StartsWith("d0 |F"));
    // Device 3 waits 3 units for its first F: with cells of at most 1 unit, its row starts idle.
    if (width >= 40) CHECK_THAT(text, Catch::Contains("d3 |..."));
    if (width >= 40) CHECK_THAT(text, Catch::Contains("idle"));  // the legend
    CHECK_THROWS_WITH(viz::text_gantt(timeline, {8, false}), Catch::Contains("at least 4"));
}

TEST_CASE("with one column per time unit each cell shows that unit's op", "[viz]") {
    // 1F1B p=2 m=2, makespan 9. d0: F0 0–1, F1 1–2, BW0 4–6, BW1 7–9;
    // d1: F0 1–2, BW0 2–4, F1 4–5, BW1 5–7.
    const auto timeline = replayed("1f1b", 2, 2);
    const std::string text = viz::text_gantt(timeline, {3 + 9 + 2, false});
    CHECK_THAT(text, Catch::StartsWith("d0 |FF..XX.XX|\nd1 |.FXXFXX..|\n"));
}

TEST_CASE("a chart squeezed to the width marks columns of several passes", "[viz]") {
    // 1F1B at p = 32, m = 256 in 94 columns of about 9 units: in the steady state every
    // column holds F and BW ops. One sample per column drew runs of 54 units of F and 108 of
    // BW, which never happen.
    const auto timeline = replayed("1f1b", 32, 256);
    const std::string text = viz::text_gantt(timeline, {100, false});
    std::istringstream lines(text);
    std::string d0;
    std::getline(lines, d0);
    REQUIRE_THAT(d0, Catch::StartsWith(" d0 |FFF"));  // 31 warm-up forwards
    const std::size_t steady = d0.find('*');
    REQUIRE(steady != std::string::npos);
    const std::size_t drain = d0.find('X', steady);
    REQUIRE(drain != std::string::npos);
    // From the steady state to the drain: only mixed columns, no run of one pass.
    CHECK(d0.find_first_not_of('*', steady) == drain);
    CHECK(d0.find('F', steady) == std::string::npos);
    CHECK_THAT(text, Catch::Contains("* several passes"));
    // With one column per unit (the test above) no column holds two passes whole: no '*'.
    CHECK(viz::text_gantt(replayed("1f1b", 2, 2), {3 + 9 + 2, false}).find('*') ==
          std::string::npos);
}

TEST_CASE("the chart's legend names only what its cells show", "[viz]") {
    // ZB-H1's listed a fused B+W, later chunks and columns of several passes, none of which
    // its chart had.
    const std::string zb = viz::text_gantt(replayed("zb-h1", 4, 4), {100, false});
    CHECK_THAT(zb, Catch::Contains("F forward, B backward (input), W backward (weight); . idle"));
    CHECK_THAT(zb, !Catch::Contains("X fused") && !Catch::Contains("lower case") &&
                       !Catch::Contains("several passes"));
    const std::string one = viz::text_gantt(replayed("1f1b", 2, 2), {3 + 9 + 2 + 40, false});
    CHECK_THAT(one, Catch::Contains("F forward, X fused B+W; . idle"));
    const std::string v = viz::text_gantt(replayed("zb-v", 4, 8), {100, false});
    CHECK_THAT(v, Catch::Contains("lower case: chunk >= 1"));
    const std::string coloured = viz::text_gantt(replayed("zb-h1", 4, 4), {100, true});
    CHECK_THAT(coloured, Catch::Contains("coloured by pass: blue F, orange B, green W; . idle"));
}

TEST_CASE("a chart of ops that take no time says so", "[viz]") {
    pipesim::Timeline t = replayed("1f1b", 2, 2);
    for (auto& ops : t.device_ops)
        for (auto& op : ops)
            op.start = op.end = 5;
    CHECK(viz::text_gantt(t, {40, false}) ==
          "(8 ops, all at 5 unit and taking no time: nothing to draw)\n");
    for (auto& ops : t.device_ops)
        ops.clear();
    CHECK(viz::text_gantt(t, {40, false}) == "(empty timeline)\n");
}

TEST_CASE("a timeline picture over its op limit is refused before any layout", "[viz][errors]") {
    const pipesim::Timeline t = replayed("1f1b", 4, 8);  // 64 ops
    viz::TimelinePictureOptions options;
    options.max_ops = 63;
    CHECK_THROWS_WITH(viz::timeline_dot(t, unit_memory(t), options),
                      Catch::StartsWith("the timeline picture draws every op: 64 ops is more "
                                        "than the 63 it draws"));
    options.max_ops = 64;
    CHECK_NOTHROW(viz::timeline_dot(t, unit_memory(t), options));
}

TEST_CASE("a picture refused for its size leaves none of the other requested files",
          "[viz][errors]") {
    // The trace and the saved timeline have no op limit; written before the picture was
    // drawn they stayed behind when it refused (hundreds of MB for a large run).
    const pipesim::Timeline t = replayed("1f1b", 4, 8);  // 64 ops
    const auto dir = std::filesystem::temp_directory_path() / "pipesim_outputs_refused";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    viz::VizOutputs outputs;
    outputs.trace = (dir / "trace.json").string();
    outputs.saved_timeline = (dir / "timeline.json").string();
    outputs.timeline_picture = (dir / "picture.dot").string();
    outputs.picture.max_ops = 63;
    CHECK_THROWS_WITH(viz::write_outputs(t, unit_memory(t), outputs),
                      Catch::StartsWith("the timeline picture draws every op"));
    CHECK(std::filesystem::is_empty(dir));
    outputs.picture.max_ops = 64;  // within the limit all three are written
    CHECK_NOTHROW(viz::write_outputs(t, unit_memory(t), outputs));
    CHECK(std::filesystem::exists(outputs.trace));
    CHECK(std::filesystem::exists(outputs.saved_timeline));
    CHECK(std::filesystem::exists(outputs.timeline_picture));
    std::filesystem::remove_all(dir);
}

TEST_CASE("control bytes in a schedule's name reach no picture", "[viz][errors]") {
    // A NUL broke Graphviz's parser (exit 1); an escape byte made SVG that no XML parser reads.
    pipesim::Timeline t = replayed("1f1b", 2, 2);
    t.schedule = std::string("a\0b\x1b[2Jc", 8);
    const std::string dot = viz::timeline_dot(t, unit_memory(t), {});
    CHECK(dot.find('\0') == std::string::npos);
    CHECK(dot.find('\x1b') == std::string::npos);
    CHECK_THAT(dot, Catch::Contains("a\xEF\xBF\xBD"
                                    "b\xEF\xBF\xBD[2Jc"));
}
