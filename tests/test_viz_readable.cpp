// What makes the timeline picture and the Chrome trace readable: the legend, the time axis'
// title and unit, memory in binary units, microbatch labels that fit their boxes, DualPipe's
// two directions, the memory strips' share of the height, pass colours and dependency flows.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "cli_json.hpp"
#include "viz/chrome_trace.hpp"
#include "viz/timeline_file.hpp"
#include "viz/timeline_picture.hpp"
#include "viz_fixtures.hpp"

using pipesim::test::op_count;
using pipesim::test::replayed;
using pipesim::test::unit_memory;
namespace viz = pipesim::viz;

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The picture's size in points, from the invisible corner node.
std::pair<double, double> extent(const std::string& dot) {
    std::smatch m;
    REQUIRE(std::regex_search(dot, m, std::regex(R"re(corner_1 \[pos="([0-9.]+),([0-9.]+)")re")));
    return {std::stod(m[1]), std::stod(m[2])};
}

// A timeline's times multiplied by `factor`, in `unit`.
pipesim::Timeline scaled(pipesim::Timeline t, double factor, const std::string& unit) {
    for (auto& ops : t.device_ops)
        for (auto& op : ops) {
            op.start *= factor;
            op.end *= factor;
        }
    t.transfers.clear();
    t.time_unit = unit;
    return t;
}

struct Box {
    double width = 0;  // points
    double font = 9;
    std::string label;
    std::string style;
    std::string tooltip;
};

// Every op box of the picture's DOT, by node name.
std::map<std::string, Box> boxes(const std::string& dot) {
    std::map<std::string, Box> out;
    const std::regex node(
        R"re(\n  (d\d+_\d+) \[pos="[^"]*", width=([0-9.]+),[^\n]*label="([^"]*)", tooltip="([^"]*)"([^\n]*)\];)re");
    for (auto it = std::sregex_iterator(dot.begin(), dot.end(), node); it != std::sregex_iterator();
         ++it) {
        Box b{std::stod((*it)[2]) * 72, 9, (*it)[3], "", (*it)[4]};
        const std::string rest = (*it)[5];
        std::smatch m;
        if (std::regex_search(rest, m, std::regex(R"(fontsize=([0-9.]+))")))
            b.font = std::stod(m[1]);
        if (std::regex_search(rest, m, std::regex(R"re(style="([^"]*)")re"))) b.style = m[1];
        out[(*it)[1]] = b;
    }
    return out;
}

}  // namespace

TEST_CASE("the legend names each pass the timeline has, the chunk shades and the outline",
          "[viz]") {
    const auto zb = replayed("zb-h1", 4, 8);
    const std::string split = viz::timeline_dot(zb, unit_memory(zb));
    CHECK(has(split, "-F forward"));
    CHECK(has(split, "-B input gradient"));
    CHECK(has(split, "-W weight gradient"));
    CHECK_FALSE(has(split, "-BW full backward"));  // zb-h1 splits every backward
    CHECK_FALSE(has(split, "-chunk 0"));           // one chunk: no shades to explain
    CHECK_FALSE(has(split, "-critical path"));

    const auto looped = replayed("interleaved-1f1b", 4, 8, 2);
    viz::TimelinePictureOptions options;
    options.critical_path = true;
    const std::string dot = viz::timeline_dot(looped, unit_memory(looped), options);
    CHECK(has(dot, "-BW full backward"));
    CHECK_FALSE(has(dot, "-W weight gradient"));
    CHECK(has(dot, "-chunk 0"));
    CHECK(has(dot, "-chunk 1"));
    CHECK_FALSE(has(dot, "-chunk 2"));
    CHECK(has(dot, "-critical path"));
    CHECK_FALSE(has(dot, "-F&B pair"));

    // DualPipe's overlapped F&B pairs are drawn in one border, which the legend explains.
    const auto dualpipe = replayed("dualpipe", 4, 8, 2);
    CHECK(has(viz::timeline_dot(dualpipe, unit_memory(dualpipe)), "-F&B pair (one border)"));
}

TEST_CASE(
    "pairs that follow one another without a gap keep their own borders: a notch at "
    "each seam",
    "[viz]") {
    // Interleaved 1F1B exchanging once per step: steady-state pairs back to back.
    pipesim::Schedule s = pipesim::generate_schedule("interleaved-1f1b", {2, 4, 2, 0});
    pipesim::pair_steps(s);
    const pipesim::Timeline t = pipesim::sim::replay(
        s, pipesim::uniform_stage_costs(2, 2, 1.0, 2.0, 0.0), pipesim::sim::ReplayOptions{});
    // Seams counted from the times: a pair whose F starts when the device's previous pair ends.
    int seams = 0;
    for (std::size_t d = 0; d < t.fb_pairs.size(); ++d) {
        double previous_end = -1;
        for (const int k : t.fb_pairs[d]) {
            const auto& ops = t.device_ops[d];
            if (ops[static_cast<std::size_t>(k)].start == previous_end) ++seams;
            previous_end = ops[static_cast<std::size_t>(k) + 1].end;
        }
    }
    REQUIRE(seams >= 1);
    // The background draws the frames in black, then the notches in white: one polygon each.
    const std::string dot = viz::timeline_dot(t, unit_memory(t));
    const std::size_t black = dot.find("C 7 -#000000 ");
    const std::size_t white = dot.find("C 7 -#ffffff ", black);
    REQUIRE(black != std::string::npos);
    REQUIRE(white != std::string::npos);
    const std::size_t end = dot.find('"', white);
    int notches = 0;
    for (std::size_t at = dot.find("P 4 ", white); at < end; at = dot.find("P 4 ", at + 1))
        ++notches;
    CHECK(notches == seams);
}

TEST_CASE("the time axis has a title with its unit, and seconds become ms or µs on short runs",
          "[viz]") {
    const auto t = replayed("1f1b", 4, 8);  // makespan 33 units
    CHECK(has(viz::timeline_dot(t, unit_memory(t)), "-time (cost units)"));
    CHECK(has(viz::timeline_dot(scaled(t, 1, "s"), unit_memory(t)), "-time (s)"));
    // 33 ms: ticks at 0, 5, 10 ... ms, not 0.005 s.
    const std::string ms = viz::timeline_dot(scaled(t, 1e-3, "s"), unit_memory(t));
    CHECK(has(ms, "-time (ms)"));
    CHECK(has(ms, " 2 -10 "));  // the tick label "10", two characters
    CHECK_FALSE(has(ms, "-0.01 "));
    CHECK(has(viz::timeline_dot(scaled(t, 1e-6, "s"), unit_memory(t)), "-time (µs)"));
}

TEST_CASE("with a model, memory is shown in GiB or MiB, never as raw bytes", "[viz]") {
    const auto t = replayed("1f1b", 4, 8);
    // 1F1B holds p − i microbatches' activations on device i: 4, 3, 2, 1 × 2 GiB.
    pipesim::MemoryModel memory = unit_memory(t);
    for (double& a : memory.activation)
        a = 2.0 * 1024 * 1024 * 1024;
    memory.held_for_w = memory.activation;
    viz::TimelinePictureOptions options;
    options.memory_in_bytes = true;
    const std::string dot = viz::timeline_dot(t, memory, options);
    CHECK(has(dot, "peak activation 8 GiB"));
    CHECK(has(dot, "to 8 GiB (top line)"));
    for (const char* peak : {"-peak 8 GiB", "-peak 6 GiB", "-peak 4 GiB", "-peak 2 GiB"})
        CHECK(has(dot, peak));
    CHECK_FALSE(std::regex_search(dot, std::regex(R"([0-9]e\+[0-9])")));

    for (double& a : memory.activation)
        a = 3.0 * 1024 * 1024;
    memory.held_for_w = memory.activation;
    CHECK(has(viz::timeline_dot(t, memory, options), "-peak 12 MiB"));
    // Each peak in its own unit: a byte beside terabytes is "1 B", not "9.09e-13 TiB".
    memory.activation.assign(memory.activation.size(), 1);
    memory.activation[0] = 2.0 * 1024 * 1024 * 1024 * 1024;
    memory.held_for_w = memory.activation;
    const std::string mixed = viz::timeline_dot(t, memory, options);
    CHECK(has(mixed, "-peak 8 TiB"));
    CHECK(has(mixed, "-peak 1 B"));
    CHECK_FALSE(std::regex_search(mixed, std::regex(R"([0-9]e-[0-9])")));
    // Activation units stay plain numbers.
    const std::string units = viz::timeline_dot(t, unit_memory(t));
    CHECK(has(units, "-peak 4 "));
    CHECK_FALSE(has(units, "GiB"));
}

TEST_CASE("a label takes the largest of 9, 7.5 and 6 pt that fits its box, else none", "[viz]") {
    // Digits as DejaVu Sans draws them (0.636 em; fontconfig's "Helvetica" on Linux), with
    // 1 pt of room either side.
    CHECK(viz::label_font_size(2 * 0.64 * 9 + 2, 2) == 9);
    CHECK(viz::label_font_size(2 * 0.64 * 9 + 1.9, 2) == 7.5);
    CHECK(viz::label_font_size(2 * 0.64 * 7.5 + 2, 2) == 7.5);
    CHECK(viz::label_font_size(2 * 0.64 * 7.5 + 1.9, 2) == 6);
    CHECK(viz::label_font_size(2 * 0.64 * 6 + 2, 2) == 6);
    CHECK(viz::label_font_size(2 * 0.64 * 6 + 1.9, 2) == 0);
    CHECK(viz::label_font_size(0.64 * 9 + 2, 1) == 9);
    // Two digits at 9 pt drawn 11.4 pt wide: a 12.5 pt box (where 0.55 em put 9 pt) takes 7.5.
    CHECK(viz::label_font_size(12.5, 2) == 7.5);

    // DualPipe p=8 m=20 on a 660 pt axis: 0.5-unit chunk passes are 10 pt,
    // too short for two digits at 9 or 7.5 pt, so microbatches 10..19 get 6 pt instead of
    // no label.
    const auto t = replayed("dualpipe", 8, 20);
    viz::TimelinePictureOptions options;
    options.width = 660;
    const auto all = boxes(viz::timeline_dot(t, unit_memory(t), options));
    REQUIRE(all.size() == op_count(t));
    std::size_t small_two_digit = 0, unlabelled = 0;
    for (const auto& [name, b] : all) {
        INFO(name << " width " << b.width << " font " << b.font << " label " << b.label);
        if (b.label.empty()) {
            ++unlabelled;
            continue;
        }
        CHECK(b.width >= 0.64 * b.font * static_cast<double>(b.label.size()) + 2);
        CHECK(b.font == viz::label_font_size(b.width, b.label.size()));
        if (b.label.size() == 2 && b.font < 9) ++small_two_digit;
    }
    CHECK(small_two_digit > 0);
    CHECK(unlabelled == 0);
}

TEST_CASE("DualPipe's second copy, run from the last device to the first, is outlined dashed",
          "[viz]") {
    const int p = 4, m = 8;
    const auto t = replayed("dualpipe", p, m);
    const std::string dot = viz::timeline_dot(t, unit_memory(t));
    std::size_t dashed = 0;
    for (int d = 0; d < p; ++d)
        for (std::size_t i = 0; i < t.device_ops[d].size(); ++i) {
            const auto& op = t.device_ops[d][i].op;
            const Box b = boxes(dot).at("d" + std::to_string(d) + "_" + std::to_string(i));
            // Microbatches m/2.. enter at the last device (gen_dualpipe: copy B).
            const bool reverse = op.microbatch >= m / 2;
            CHECK(has(b.style, "dashed") == reverse);
            CHECK(has(b.tooltip, "d3 → d0") == reverse);
            dashed += reverse ? 1 : 0;
        }
    CHECK(dashed == op_count(t) / 2);
    CHECK(has(dot, "-d0 → d3 (solid)"));
    CHECK(has(dot, "-d3 → d0 (dashed)"));
    // One direction only: no direction entries.
    const auto v = replayed("dualpipe-v", p, m);
    CHECK_FALSE(has(viz::timeline_dot(v, unit_memory(v)), "dashed"));
}

TEST_CASE("the picture is at least as wide as its title", "[viz]") {
    // A short run with a long title: makespan in seconds with six digits.
    const auto t = scaled(replayed("dualpipe", 2, 2), 1.234567, "s");
    const std::string dot = viz::timeline_dot(t, unit_memory(t));
    std::smatch m;
    REQUIRE(std::regex_search(dot, m, std::regex(R"re(label="([^"]*)",)re")));
    // Graphviz's Helvetica at 13 pt takes about 0.57 em a character on such titles.
    CHECK(extent(dot).first >= 0.57 * 13 * static_cast<double>(m[1].length()));
}

TEST_CASE("a long schedule name is cut short in the title, not stretching the axis", "[viz]") {
    // A schedule file's 256-byte name made the picture 2590 pt wide against 632 and stretched
    // every box with it.
    auto t = replayed("1f1b", 4, 8);
    const double plain = extent(viz::timeline_dot(t, unit_memory(t))).first;
    // "é" is two bytes: the cut falls at a character's start, never inside one.
    t.schedule = std::string(30, 'x') + "é" + std::string(225, 'y');
    const std::string dot = viz::timeline_dot(t, unit_memory(t));
    CHECK(has(dot, std::string(30, 'x') + "…   p=4 m=8"));
    CHECK_FALSE(has(dot, "é"));
    CHECK_FALSE(has(dot, "yyyy"));
    CHECK(extent(dot).first < 1.5 * plain);
    // A name of 32 bytes stays whole.
    t.schedule = std::string(32, 'z');
    CHECK(has(viz::timeline_dot(t, unit_memory(t)), std::string(32, 'z') + "   p=4"));
}

TEST_CASE("memory strips take under half of a tall picture's height", "[viz]") {
    // Strips of 30 pt and gaps of 6 pt against rows of 22 pt took 60 % and more from p = 16.
    for (const int p : {4, 16, 32}) {
        const auto t = replayed("interleaved-1f1b", p, 2 * p, 2);
        viz::TimelinePictureOptions without;
        without.memory = false;
        const double with_memory = extent(viz::timeline_dot(t, unit_memory(t))).second;
        const double bare = extent(viz::timeline_dot(t, unit_memory(t), without)).second;
        INFO("p=" << p << ": " << with_memory << " pt with memory, " << bare << " without");
        CHECK((with_memory - bare) / with_memory < (p >= 16 ? 0.45 : 0.55));
    }
}

TEST_CASE("Chrome trace ops carry one colour name per pass", "[viz]") {
    std::map<std::string, std::set<std::string>> colours;  // pass → cnames
    for (const char* name : {"zb-h1", "1f1b"}) {
        const auto t = replayed(name, 4, 8);
        const auto trace = nlohmann::json::parse(viz::chrome_trace_json(t));
        for (const auto& e : trace["traceEvents"])
            if (e["ph"] == "X" && e["tid"] == 0) colours[e["cat"]].insert(e["cname"]);
    }
    REQUIRE(colours.size() == 4);  // F, B, W from zb-h1; BW from 1f1b
    std::set<std::string> distinct;
    for (const auto& [pass, names] : colours) {
        INFO(pass);
        CHECK(names.size() == 1);
        distinct.insert(*names.begin());
        pipesim::Pass parsed{};
        REQUIRE(pipesim::parse_pass(pass, parsed));
        CHECK(*names.begin() == viz::trace_colour(parsed));
    }
    CHECK(distinct.size() == 4);
}

TEST_CASE("trace flows pair up and follow the dependencies, one per data input", "[viz]") {
    // Dependencies (docs/units-and-metrics.md): F(mb,s) ← F(mb,s−1); B or BW(mb,s) ← F(mb,s)
    // and the backward of (mb,s+1); W(mb,s) ← B(mb,s). Inputs per microbatch over p stages:
    // fused 1F1B (p−1) + (2p−1); split ZB-H1 (p−1) + (2p−1) + p.
    struct Case {
        const char* schedule;
        int v;
        std::size_t flows;
    };
    const int p = 4, m = 8;
    for (const Case c : {Case{"1f1b", 1, m * (3 * p - 2)}, Case{"zb-h1", 1, m * (4 * p - 2)},
                         Case{"interleaved-1f1b", 2, m * (3 * 2 * p - 2)}}) {
        INFO(c.schedule);
        const auto t = replayed(c.schedule, p, m, c.v, 0.25);
        CHECK(!has(viz::chrome_trace_json(t), "\"ph\": \"s\""));  // only when asked
        const auto trace = nlohmann::json::parse(
            viz::chrome_trace_json(t, nullptr, viz::ChromeTraceOptions{true}));
        std::map<std::pair<int, std::string>, std::pair<double, double>> slice;  // (pid, name)
        for (const auto& e : trace["traceEvents"])
            if (e["ph"] == "X" && e["tid"] == 0)
                slice[{e["pid"], e["name"]}] = {e["ts"],
                                                e["ts"].get<double>() + e["dur"].get<double>()};
        std::map<long, std::pair<int, int>> ends;  // id → (starts, finishes)
        std::size_t flows = 0;
        const std::regex op_names(R"((F|B|W|BW)(\d+) s(\d+) → (F|B|W|BW)(\d+) s(\d+))");
        for (const auto& e : trace["traceEvents"]) {
            if (e["ph"] != "s" && e["ph"] != "f") continue;
            const std::string name = e["name"];
            std::smatch n;
            REQUIRE(std::regex_match(name, n, op_names));
            const std::string from = n[1].str() + n[2].str() + " s" + n[3].str();
            const std::string to = n[4].str() + n[5].str() + " s" + n[6].str();
            const bool start = e["ph"] == "s";
            // The event lies inside its op's slice on its device.
            const auto it = slice.find({e["pid"], start ? from : to});
            REQUIRE(it != slice.end());
            CHECK(e["ts"].get<double>() >= it->second.first);
            CHECK(e["ts"].get<double>() <= it->second.second);
            auto& [s, f] = ends[e["id"].get<long>()];
            (start ? s : f) += 1;
            if (!start) {
                CHECK(e["bp"] == "e");
                continue;
            }
            ++flows;
            // A real dependency, by the rules above.
            const std::string pf = n[1], pt = n[4];
            const int mf = std::stoi(n[2]), mt = std::stoi(n[5]);
            const int sf = std::stoi(n[3]), st = std::stoi(n[6]);
            const bool backward_t = pt == "B" || pt == "BW";
            const bool ok =
                mf == mt && ((pt == "F" && pf == "F" && sf == st - 1) ||
                             (backward_t && pf == "F" && sf == st) ||
                             (backward_t && (pf == "B" || pf == "BW") && sf == st + 1) ||
                             (pt == "W" && pf == "B" && sf == st));
            INFO(name);
            CHECK(ok);
        }
        CHECK(flows == c.flows);
        for (const auto& [id, count] : ends) {
            INFO("flow id " << id);
            CHECK(count == std::pair{1, 1});
        }
    }
}

TEST_CASE("a saved timeline keeps whether its memory is in bytes, so render shows GiB too",
          "[viz]") {
    const auto t = replayed("1f1b", 2, 2);
    pipesim::MemoryModel memory = unit_memory(t);
    for (double& a : memory.activation)
        a = 1024.0 * 1024 * 1024;
    memory.held_for_w = memory.activation;
    const std::string bytes = viz::timeline_json(t, &memory, true);
    CHECK(has(bytes, "\"memory\": {\"unit\": \"bytes\", "));
    CHECK(viz::parse_timeline_json(bytes, "t.json").memory_in_bytes);
    CHECK_FALSE(viz::parse_timeline_json(viz::timeline_json(t, &memory), "t.json").memory_in_bytes);
    std::string units = bytes;
    units.replace(units.find("\"bytes\""), 7, "\"units\"");
    CHECK_FALSE(viz::parse_timeline_json(units, "t.json").memory_in_bytes);
    std::string bad = bytes;
    bad.replace(bad.find("\"bytes\""), 7, "\"words\"");
    CHECK_THROWS_WITH(
        viz::parse_timeline_json(bad, "t.json"),
        Catch::Matches(
            R"(t\.json:\d+:\d+: memory\.unit: expected "bytes" or "units", got 'words')"));
}

TEST_CASE("the title gives the iteration time where it is not the makespan", "[viz]") {
    const auto t = replayed("1f1b", 4, 8);
    viz::TimelinePictureOptions options;
    // Unit costs: makespan (m+p−1)(F+B+W) = 33; an exposed reduction makes the iteration 35.
    CHECK_FALSE(has(viz::timeline_dot(t, unit_memory(t), options), "iteration"));
    options.iteration_time = 33;  // equal: not repeated
    CHECK_FALSE(has(viz::timeline_dot(t, unit_memory(t), options), "iteration"));
    options.iteration_time = 35;
    const std::string dot = viz::timeline_dot(t, unit_memory(t), options);
    CHECK(has(dot, "makespan 33 unit   iteration 35 unit"));
    CHECK(has(dot, "peak activation 4 M_B"));
    options.iteration_is_period = true;
    options.iteration_time = 30;
    CHECK(has(viz::timeline_dot(t, unit_memory(t), options), "makespan 33 unit   period 30 unit"));
    // Centred, except where asked (the HTML report opens wide pictures at their start).
    CHECK_FALSE(has(viz::timeline_dot(t, unit_memory(t), options), "labeljust=l"));
    options.title_at_left = true;
    CHECK(has(viz::timeline_dot(t, unit_memory(t), options), "labeljust=l"));
}

TEST_CASE("analyze's picture titles the iteration its table gives", "[viz][cli]") {
    // Data parallelism without overlap: the reduction after the last op is in the iteration.
    const std::string args =
        "analyze -s zb-v -p 4 -m 8 --model llama2-7b --gpu h100-sxm --mb 1 --dp 2 "
        "--no-overlap-grad-reduce";
    const auto j = pipesim::test::run_pipesim_json(args + " --json");
    const double iteration = j["iteration_time"].get<double>();
    REQUIRE(iteration > j["makespan"].get<double>());
    const auto dot = pipesim::test::run_pipesim(args + " --timeline - --format dot");
    REQUIRE(dot.exit_code == 0);
    // In the time axis's unit: ms, the makespan being under a second.
    REQUIRE(j["makespan"].get<double>() < 1);
    CHECK(has(dot.out, fmt::format("iteration {:.6g} ms", 1e3 * iteration)));
    CHECK(has(dot.out, fmt::format("makespan {:.6g} ms", 1e3 * j["makespan"].get<double>())));
    CHECK(has(dot.out, "time (ms)"));
}
