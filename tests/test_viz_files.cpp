// The saved Timeline JSON format: round trips and located errors for bad files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "viz/timeline_file.hpp"
#include "viz_fixtures.hpp"

using pipesim::test::replayed;
using pipesim::test::unit_memory;
namespace viz = pipesim::viz;

TEST_CASE("a saved timeline reads back equal, transfers and memory model included", "[viz]") {
    auto timeline = GENERATE(replayed("1f1b", 4, 8, 0, 0.1), replayed("interleaved-1f1b", 4, 8, 2),
                             replayed("zb-h1", 3, 5, 0, 0.3));
    const auto memory = pipesim::unit_memory_model(timeline.devices, timeline.chunks, 0.25);
    const auto saved = viz::parse_timeline_json(viz::timeline_json(timeline, &memory), "t.json");
    CHECK(saved.timeline == timeline);
    REQUIRE(saved.memory.has_value());
    CHECK(saved.memory->activation == memory.activation);
    CHECK(saved.memory->held_for_w == memory.held_for_w);
}

TEST_CASE("a saved timeline's text is handed on in pieces of about a megabyte", "[viz]") {
    // 1F1B with p = 8, m = 2048: 32,768 ops and 28,672 transfers, several megabytes of text.
    const auto timeline = replayed("1f1b", 8, 2048, 0, 0.1);
    std::string joined;
    std::size_t pieces = 0, largest = 0;
    viz::write_timeline_json(timeline, nullptr, false, [&](std::string_view piece) {
        ++pieces;
        largest = std::max(largest, piece.size());
        joined += piece;
    });
    CHECK(joined == viz::timeline_json(timeline));
    CHECK(pieces >= joined.size() >> 20);
    CHECK(largest < (std::size_t{1} << 20) + 1024);  // a megabyte and at most one entry
}

TEST_CASE("times that are not short decimals survive the round trip exactly", "[viz]") {
    auto timeline = replayed("1f1b", 2, 3);
    timeline.device_ops[0][0].end = 1.0 / 3.0;
    timeline.device_ops[0][1].start = 0.1 + 0.2 + 0.1;  // 0.40000000000000002
    timeline.time_unit = "s";
    // A collective runs on one device: source and destination are that device.
    auto& collective = timeline.transfers.front();
    collective.kind = pipesim::TransferKind::data_parallel;
    collective.dst_device = collective.src_device;
    const auto saved = viz::parse_timeline_json(viz::timeline_json(timeline), "t.json");
    CHECK(saved.timeline == timeline);
    CHECK_FALSE(saved.memory.has_value());
}

TEST_CASE("every transfer kind is written by its name and read back", "[viz]") {
    using pipesim::TransferKind;
    auto timeline = replayed("1f1b", 2, 3);
    REQUIRE(timeline.transfers.size() >= 4);
    const TransferKind kinds[] = {TransferKind::pipeline, TransferKind::tensor_parallel,
                                  TransferKind::data_parallel, TransferKind::context_parallel};
    const char* names[] = {"pipeline", "tensor-parallel", "data-parallel", "context-parallel"};
    for (std::size_t i = 0; i < 4; ++i) {
        timeline.transfers[i].kind = kinds[i];
        if (i > 0) timeline.transfers[i].dst_device = timeline.transfers[i].src_device;
    }
    const std::string text = viz::timeline_json(timeline);
    for (std::size_t i = 1; i < 4; ++i)  // pipeline is the default and left out
        CHECK_THAT(text, Catch::Contains(std::string("\"kind\": \"") + names[i] + "\""));
    CHECK(viz::parse_timeline_json(text, "t.json").timeline == timeline);
    std::string wrong = text;
    wrong.replace(wrong.find("context-parallel"), 16, "context-paralel");
    CHECK_THROWS_WITH(viz::parse_timeline_json(wrong, "t.json"),
                      Catch::Contains("expected pipeline, tensor-parallel, data-parallel or "
                                      "context-parallel, got \"context-paralel\""));
    // An unknown kind on a transfer between two devices is named as such (it was reported as
    // a collective that must stay on one device).
    auto between = replayed("1f1b", 2, 3);
    std::string unknown = viz::timeline_json(between);
    const auto first = unknown.find("\"bytes\"", unknown.find("\"transfers\""));
    REQUIRE(first != std::string::npos);
    unknown.insert(first, "\"kind\": \"bogus\", ");
    CHECK_THROWS_WITH(viz::parse_timeline_json(unknown, "t.json"),
                      Catch::Contains("got \"bogus\""));
}

TEST_CASE("a DualPipe timeline keeps its per-microbatch stage ranges through the file", "[viz]") {
    const auto timeline = replayed("dualpipe", 4, 8, 0, 0.25);
    REQUIRE(timeline.microbatch_stages.size() == 8);
    const std::string text = viz::timeline_json(timeline);
    CHECK_THAT(text, Catch::Contains("\"microbatch_stages\": [[0, 3], [0, 3], [0, 3], [0, 3], "
                                     "[4, 7], [4, 7], [4, 7], [4, 7]],"));
    const auto saved = viz::parse_timeline_json(text, "t.json");
    CHECK(saved.timeline.microbatch_stages == timeline.microbatch_stages);
    CHECK(saved.timeline == timeline);
    // Without ranges (every other schedule) the field is left out.
    CHECK_THAT(viz::timeline_json(replayed("1f1b", 2, 2)), !Catch::Contains("microbatch_stages"));
}

TEST_CASE("the transfers limit is checked before they are read", "[viz]") {
    const auto timeline = replayed("1f1b", 4, 8, 0, 0.1);
    viz::TimelineFileLimits limits;
    limits.max_transfers = timeline.transfers.size() - 1;
    CHECK_THROWS_WITH(viz::parse_timeline_json(viz::timeline_json(timeline), "t.json", limits),
                      Catch::Contains("transfers: expected at most " +
                                      std::to_string(limits.max_transfers) + " elements"));
    limits.max_transfers = timeline.transfers.size();
    CHECK(viz::parse_timeline_json(viz::timeline_json(timeline), "t.json", limits).timeline ==
          timeline);
}

namespace {

// A small valid file, one op per line, to break in the table below.
std::string small_file() {
    return R"({
  "format": "pipesim-timeline",
  "version": 1,
  "schedule": "1f1b",
  "devices": 2,
  "microbatches": 1,
  "chunks": 1,
  "time_unit": "unit",
  "stage_device": [0, 1],
  "device_ops": [
    [
      {"pass": "F", "mb": 0, "stage": 0, "start": 0, "end": 1},
      {"pass": "BW", "mb": 0, "stage": 0, "start": 4, "end": 6}
    ],
    [
      {"pass": "F", "mb": 0, "stage": 1, "start": 1, "end": 2},
      {"pass": "BW", "mb": 0, "stage": 1, "start": 2, "end": 4}
    ]
  ]
}
)";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the small file used below is valid", "[viz]") {
    const auto saved = viz::parse_timeline_json(small_file(), "t.json");
    CHECK(saved.timeline.devices == 2);
    CHECK(saved.timeline.device_ops[1][1].end == 4.0);
}

TEST_CASE("a malformed timeline file is rejected with file:line:column and the field", "[viz]") {
    using row = std::tuple<std::string, std::string, std::string>;
    auto [from, to, expected] = GENERATE(table<std::string, std::string, std::string>({
        row{"\"devices\": 2,", "\"devices\": 2",
            "t.json:6:16: invalid JSON: syntax error while parsing object - unexpected string "
            "literal; expected '}'"},
        row{"\"devices\": 2", "\"devices\": \"two\"", "t.json:5:14: devices: expected an integer"},
        row{"\"devices\": 2", "\"devices\": 0", "t.json:5:14: devices: expected an integer in 1.."},
        row{"\"version\": 1", "\"version\": 2",
            "t.json:3:14: version 2 is not supported: this pipesim reads version 1"},
        row{"\"stage_device\": [0, 1]", "\"stage_device\": [0, 2]",
            "t.json:9:23: stage_device[1]: expected an integer in 0..1, got '2'"},
        row{"\"stage_device\": [0, 1]", "\"stage_device\": [0]",
            "t.json:9:19: stage_device: expected 2 devices"},
        row{"\"pass\": \"BW\", \"mb\": 0, \"stage\": 0", "\"pass\": \"Q\", \"mb\": 0, \"stage\": 0",
            "t.json:13:16: device_ops[0][1].pass: expected F, B, W or BW, got \"Q\""},
        row{"\"mb\": 0, \"stage\": 1, \"start\": 1", "\"mb\": 3, \"stage\": 1, \"start\": 1",
            "t.json:16:27: device_ops[1][0].mb: expected an integer in 0..0, got '3'"},
        row{"\"mb\": 0, \"stage\": 0, \"start\": 4, \"end\": 6",
            "\"mb\": 0, \"stage\": 1, \"start\": 4, \"end\": 6",
            "t.json:13:7: device_ops[0][1]: BW(mb 0, stage 1) is listed on device 0, but stage 1 "
            "is on device 1"},
        row{"\"start\": 4, \"end\": 6", "\"start\": 4, \"end\": 3",
            "t.json:13:62: device_ops[0][1].end: BW(mb 0, stage 0) ends at 3, before it starts at "
            "4"},
        row{"\"start\": 4, \"end\": 6", "\"start\": 0.5, \"end\": 6",
            "device_ops[0][1].start: BW(mb 0, stage 0) starts at 0.5, before the previous op on "
            "device 0"},
        row{"\"start\": 4, \"end\": 6", "\"start\": -4, \"end\": 6",
            "t.json:13:52: device_ops[0][1].start: expected a number in 0.."},
        row{"\"start\": 4, \"end\": 6", "\"strat\": 4, \"end\": 6",
            "t.json:13:43: unknown key 'strat' in device_ops[0][1]"},
        row{"\"start\": 4, \"end\": 6}", "\"end\": 6}", "t.json:13:7: missing device_ops[0][1]"},
        row{"  \"time_unit\": \"unit\",\n", "", "t.json:1:1: missing time_unit"},
        row{"\"time_unit\": \"unit\"", "\"time_unit\": \"fortnight\"",
            "t.json:8:16: time_unit: expected \"unit\", \"s\", \"ms\" or \"us\", got 'fortnight'"},
        row{"\"time_unit\": \"unit\"", "\"time_unit\": \"\"",
            "t.json:8:16: time_unit: expected \"unit\", \"s\", \"ms\" or \"us\", got ''"},
        row{"\"chunks\": 1,", "\"chunks\": 1, \"extra\": true,",
            "t.json:7:16: unknown key 'extra' in the document"},
        row{"\"format\": \"pipesim-timeline\"", "\"format\": \"pipesim-schedule\"",
            "t.json:2:13: not a saved pipesim timeline"},
        row{"\"chunks\": 1,", "\"chunks\": 1, \"microbatch_stages\": [[0, 2]],",
            "t.json:7:42: microbatch_stages[0][1]: expected an integer in 0..1, got '2'"},
        row{"\"chunks\": 1,", "\"chunks\": 1, \"microbatch_stages\": [[1, 0]],",
            "microbatch_stages[0][1]: expected an integer in 1..1, got '0'"},
        row{"\"chunks\": 1,", "\"chunks\": 1, \"microbatch_stages\": [[0, 1], [0, 1]],",
            "microbatch_stages: expected at most 1 elements"},
        row{"\"chunks\": 1,", "\"chunks\": 1, \"microbatch_stages\": [[0]],",
            "microbatch_stages[0]: expected a pair [first, last] of stages"},
        // Beyond the 1e100 a time may take: sums and scales of 1.7e308 overflowed into an
        // infinite picture and a trace that could not be written.
        row{"\"start\": 4, \"end\": 6", "\"start\": 4, \"end\": 1.7e308",
            "t.json:13:62: device_ops[0][1].end: expected a number in 0..1e+100, got '1.7e308'"},
        row{"\"chunks\": 1,",
            "\"chunks\": 1, \"memory\": {\"activation\": [1e307, 1], \"held_for_w\": [0, 0]},",
            "memory.activation[0]: expected a number in 0..1e+100, got '1e307'"},
        // Its title printed the name as it is: a right-to-left override turned it round.
        row{"\"schedule\": \"1f1b\"", "\"schedule\": \"1f1b\\u202e\"",
            "t.json:4:15: schedule: expected text without control characters"},
    }));
    CAPTURE(from, to);
    const std::string text = replaced(small_file(), from, to);
    CHECK_THROWS_WITH(viz::parse_timeline_json(text, "t.json"), Catch::Contains(expected));
    CHECK_THROWS_AS(viz::parse_timeline_json(text, "t.json"), std::invalid_argument);
}

TEST_CASE("a timeline whose ops all take no time, or that has none, is refused", "[viz]") {
    // Its picture's memory strips went from 0 to 1 while its title gave a peak of 2.
    std::string text = small_file();
    for (const char* times : {"\"start\": 0, \"end\": 1", "\"start\": 4, \"end\": 6",
                              "\"start\": 1, \"end\": 2", "\"start\": 2, \"end\": 4"})
        text = replaced(text, times, "\"start\": 0, \"end\": 0");
    CHECK_THROWS_WITH(viz::parse_timeline_json(text, "t.json"),
                      "t.json:10:17: device_ops: every op starts and ends at 0: a run that takes "
                      "no time has nothing to show");
    // One op that takes time is a run that does.
    std::string one = text;
    const std::string zero = "\"start\": 0, \"end\": 0";
    one.replace(one.rfind(zero), zero.size(), "\"start\": 0, \"end\": 1");
    CHECK(viz::parse_timeline_json(one, "t.json").timeline.device_ops[1][1].end == 1);
    // Nor has a timeline without ops (it was drawn as a run of makespan 0, with a warning).
    const std::string none =
        R"({"format": "pipesim-timeline", "version": 1, "schedule": "1f1b", "devices": 2,
  "microbatches": 1, "chunks": 1, "time_unit": "unit", "stage_device": [0, 1],
  "device_ops": [[], []]})";
    CHECK_THROWS_WITH(viz::parse_timeline_json(none, "t.json"),
                      "t.json:3:17: device_ops: no device holds an op: a timeline without ops "
                      "has nothing to show");
}

TEST_CASE("a timeline header that declares a run larger than analyze runs is refused", "[viz]") {
    // Checking a run takes a byte or more per (microbatch, stage) the header declares, however
    // few ops the file holds: 256 devices and 2^24 microbatches with one op took 4.2 GB.
    const auto with_shape = [](int devices, int microbatches) {
        std::string text =
            replaced(small_file(), "\"devices\": 2", fmt::format("\"devices\": {}", devices));
        std::string stage_device = "[0", empty_lists;
        for (int d = 1; d < devices; ++d)
            stage_device += fmt::format(", {}", d);
        for (int d = 2; d < devices; ++d)
            empty_lists += ",\n    []";
        text = replaced(text, "[0, 1]", stage_device + "]");
        text = replaced(text, "    ]\n  ]\n}", "    ]" + empty_lists + "\n  ]\n}");
        return replaced(text, "\"microbatches\": 1",
                        fmt::format("\"microbatches\": {}", microbatches));
    };
    CHECK(viz::parse_timeline_json(with_shape(8, 1), "t.json").warnings.size() == 1);
    // 2 ops (F, BW) × 8 stages × 2^24 microbatches: 2.7e8 ops.
    CHECK_THROWS_WITH(
        viz::parse_timeline_json(with_shape(8, 1 << 24), "t.json"),
        "t.json:6:19: microbatches: a whole run of p·v·m = 8·1·16777216 has at least 2.68e+08 "
        "ops, more than the 2e+08 pipesim runs");
    // 6 devices: 2.0e8 ops, as many as analyze runs, is read (a warning: ops are missing).
    CHECK(viz::parse_timeline_json(with_shape(6, 16666666), "t.json").warnings.size() == 1);
}

TEST_CASE("a timeline no run could produce is read with a warning naming the first problem",
          "[viz]") {
    CHECK(viz::parse_timeline_json(small_file(), "t.json").warnings.empty());
    using row = std::tuple<std::string, std::string, std::string>;
    auto [from, to, expected] = GENERATE(table<std::string, std::string, std::string>({
        // Five microbatches claimed, one held: the picture's title once read m=5 without a word.
        row{"\"microbatches\": 1", "\"microbatches\": 5",
            "t.json: not a whole run of p=2 m=5 v=1: F(mb 1, stage 0) is missing (it belongs on "
            "device 0); the picture and its figures are of the ops the file holds"},
        row{",\n      {\"pass\": \"BW\", \"mb\": 0, \"stage\": 1, \"start\": 2, \"end\": 4}", "",
            "t.json: not a whole run of p=2 m=1 v=1: BW(mb 0, stage 1) is missing"},
        // Stage 1's forward before stage 0's ends.
        row{"\"stage\": 1, \"start\": 1, \"end\": 2", "\"stage\": 1, \"start\": 0.5, \"end\": 2",
            "t.json: device_ops[1][0] F(mb 0, stage 1) starts at 0.5, before its input F(mb 0, "
            "stage 0) ends at 1 on device 0: the times do not follow the schedule's "
            "dependencies"},
        row{"  ]\n}",
            "  ],\n  \"transfers\": [{\"src\": 0, \"dst\": 1, \"producer\": "
            "{\"pass\": \"F\", \"mb\": 0, \"stage\": 0}, \"consumer\": {\"pass\": \"F\", "
            "\"mb\": 0, \"stage\": 1}, \"bytes\": 0, \"start\": 1, \"end\": 1.5}]\n}",
            "t.json: transfers[0] ends at 1.5, after F(mb 0, stage 1), its consumer, starts at 1"},
        // Stage 1's backward is one BW: its B and W are not in the file.
        row{"  ]\n}",
            "  ],\n  \"transfers\": [{\"src\": 1, \"dst\": 1, \"producer\": "
            "{\"pass\": \"B\", \"mb\": 0, \"stage\": 1}, \"consumer\": {\"pass\": \"W\", "
            "\"mb\": 0, \"stage\": 1}, \"bytes\": 0, \"start\": 4, \"end\": 4}]\n}",
            "t.json: transfers[0] carries B(mb 0, stage 1) to W(mb 0, stage 1), B(mb 0, stage 1) "
            "of which the file does not hold"},
    }));
    CAPTURE(from, to);
    const auto saved = viz::parse_timeline_json(replaced(small_file(), from, to), "t.json");
    REQUIRE(saved.warnings.size() == 1);
    CHECK_THAT(saved.warnings[0], Catch::StartsWith(expected));
}

TEST_CASE("a pipeline transfer the wrong way round is refused at the transfer", "[viz]") {
    const std::string text = replaced(
        small_file(), "  ]\n}",
        "  ],\n  \"transfers\": [{\"src\": 1, \"dst\": 0, \"producer\": {\"pass\": \"F\", "
        "\"mb\": 0, \"stage\": 0}, \"consumer\": {\"pass\": \"F\", \"mb\": 0, \"stage\": 1}, "
        "\"bytes\": 0, \"start\": 1, \"end\": 1}]\n}");
    CHECK_THROWS_WITH(viz::parse_timeline_json(text, "t.json"),
                      "t.json:20:17: transfers[0]: a pipeline transfer from F(mb 0, stage 0) to "
                      "F(mb 0, stage 1) goes from device 0 to device 1, which run their stages, "
                      "not from 1 to 0");
}

TEST_CASE("a transfer between ops that do not depend on each other is refused at the transfer",
          "[viz]") {
    using row = std::tuple<std::string, std::string>;
    auto [transfer, expected] = GENERATE(table<std::string, std::string>({
        // A W's output goes nowhere; stage 1's forward takes stage 0's.
        row{"{\"src\": 0, \"dst\": 1, \"producer\": {\"pass\": \"W\", \"mb\": 0, \"stage\": "
            "0}, \"consumer\": {\"pass\": \"F\", \"mb\": 0, \"stage\": 1}, \"bytes\": 0, "
            "\"start\": 1, \"end\": 1}",
            "t.json:20:17: transfers[0]: a pipeline transfer carries W(mb 0, stage 0)'s output to "
            "F(mb 0, stage 1), which does not take it as an input"},
        // Gradients flow down the stages, not up.
        row{"{\"src\": 0, \"dst\": 1, \"producer\": {\"pass\": \"BW\", \"mb\": 0, \"stage\": "
            "0}, \"consumer\": {\"pass\": \"BW\", \"mb\": 0, \"stage\": 1}, \"bytes\": 0, "
            "\"start\": 6, \"end\": 6}",
            "t.json:20:17: transfers[0]: a pipeline transfer carries BW(mb 0, stage 0)'s output "
            "to BW(mb 0, stage 1), which does not take it as an input"},
        // A collective's GPUs are one pipeline device's (its TP, CP or DP group).
        row{"{\"src\": 0, \"dst\": 1, \"producer\": {\"pass\": \"F\", \"mb\": 0, \"stage\": "
            "0}, \"consumer\": {\"pass\": \"F\", \"mb\": 0, \"stage\": 0}, \"bytes\": 8, "
            "\"start\": 0, \"end\": 1, \"kind\": \"tensor-parallel\"}",
            "t.json:20:17: transfers[0]: a collective runs among one device's GPUs, so src and dst "
            "are one device, got 0 and 1"},
    }));
    CAPTURE(transfer);
    const std::string text =
        replaced(small_file(), "  ]\n}", "  ],\n  \"transfers\": [" + transfer + "]\n}");
    CHECK_THROWS_WITH(viz::parse_timeline_json(text, "t.json"), expected);
}

TEST_CASE("the replay's and every schedule's saved timelines read back without a warning",
          "[viz]") {
    for (const char* name : {"1f1b", "interleaved-1f1b", "zb-v", "dualpipe"}) {
        INFO(name);
        const auto saved = viz::parse_timeline_json(
            viz::timeline_json(replayed(name, 4, 8, 0, 0.3), nullptr, false), "t.json");
        CHECK(saved.warnings.empty());
    }
}

TEST_CASE("every time unit a trace can show is read back", "[viz]") {
    for (const std::string unit : {"unit", "s", "ms", "us"}) {
        const auto saved = viz::parse_timeline_json(
            replaced(small_file(), "\"time_unit\": \"unit\"", "\"time_unit\": \"" + unit + "\""),
            "t.json");
        CHECK(saved.timeline.time_unit == unit);
    }
}

TEST_CASE("JSON that is not a timeline is told apart, so render can read it as a schedule",
          "[viz]") {
    CHECK_THROWS_AS(viz::parse_timeline_json(R"({"devices": 2})", "s.json"), viz::NotATimeline);
    CHECK_THROWS_AS(viz::parse_timeline_json("[1, 2]", "s.json"), viz::NotATimeline);
    CHECK_THROWS_WITH(viz::parse_timeline_json("{\n  \"devices\": 2", "s.json"),
                      Catch::StartsWith("s.json:2:15: invalid JSON"));
}

TEST_CASE("reading a missing file names it", "[viz]") {
    CHECK_THROWS_WITH(viz::read_timeline_file("/nonexistent/t.json"),
                      Catch::Contains("/nonexistent/t.json"));
}

TEST_CASE("the example in docs/timeline-format.md is what the replay saves", "[viz]") {
    std::ifstream in(PIPESIM_SOURCE_DIR "/docs/timeline-format.md");
    std::ostringstream doc;
    doc << in.rdbuf();
    const std::string text = doc.str();
    const auto begin = text.find("```json\n");
    REQUIRE(begin != std::string::npos);
    const auto end = text.find("```", begin + 8);
    const auto saved = viz::parse_timeline_json(text.substr(begin + 8, end - begin - 8), "doc");
    CHECK(saved.timeline == replayed("1f1b", 2, 1, 0, 0.5));
    REQUIRE(saved.memory.has_value());
    CHECK(saved.memory->activation == unit_memory(saved.timeline).activation);
}

TEST_CASE("a saved timeline's header gives the fewest ops it can hold", "[viz]") {
    const pipesim::Timeline one = replayed("1f1b", 4, 8);
    CHECK(viz::timeline_min_ops(viz::timeline_json(one)) == Approx(2 * 4 * 8));
    const pipesim::Timeline looped = replayed("interleaved-1f1b", 4, 8, 2);
    CHECK(viz::timeline_min_ops(viz::timeline_json(looped)) == Approx(2 * 4 * 2 * 8));
    // Every op of a complete timeline counted, the bound holds (zb-h1 splits its backwards).
    const pipesim::Timeline split = replayed("zb-h1", 4, 8);
    std::size_t ops = 0;
    for (const auto& list : split.device_ops)
        ops += list.size();
    CHECK(*viz::timeline_min_ops(viz::timeline_json(split)) <= static_cast<double>(ops));
    // Per-microbatch stage ranges (DualPipe: half the microbatches on stages 0–3, half on
    // 4–7): an F and a backward per microbatch on each stage of its range.
    const pipesim::Timeline dual = replayed("dualpipe", 4, 8);
    REQUIRE(dual.microbatch_stages.size() == 8);
    std::size_t dual_ops = 0;
    for (const auto& list : dual.device_ops)
        dual_ops += list.size();
    CHECK(viz::timeline_min_ops(viz::timeline_json(dual)) == Approx(2 * 4 * 8));
    CHECK(2 * 4 * 8 <= dual_ops);
    // Where the header does not say, the full reader decides: ranges that are not pairs of
    // stages, one range too few, keys in another order, another format, broken JSON.
    const std::string dual_text = viz::timeline_json(dual);
    const auto with_ranges = [&](const std::string& ranges) {
        const auto at = dual_text.find("\"microbatch_stages\": [");
        const auto end = dual_text.find("],\n", at);
        return dual_text.substr(0, at) + "\"microbatch_stages\": " + ranges + ",\n" +
               dual_text.substr(end + 3);
    };
    CHECK(viz::timeline_min_ops(
              with_ranges("[[0, 3], [0, 3], [0, 3], [0, 3], [4, 7], [4, 7], [4, 7], [4, 7]]")) ==
          Approx(2 * 4 * 8));
    CHECK_FALSE(viz::timeline_min_ops(with_ranges("[[0, 3], [0, 3]]")));
    CHECK_FALSE(viz::timeline_min_ops(
        with_ranges("[[3, 0], [0, 3], [0, 3], [0, 3], [4, 7], [4, 7], [4, 7], [4, 7]]")));
    CHECK_FALSE(viz::timeline_min_ops(
        with_ranges("[[0, \"3\"], [0, 3], [0, 3], [0, 3], [4, 7], [4, 7], [4, 7], [4, 7]]")));
    CHECK_FALSE(viz::timeline_min_ops(
        with_ranges("[[0, 3, 5], [0], [0, 3], [0, 3], [4, 7], [4, 7], [4, 7], [4, 7]]")));
    CHECK_FALSE(viz::timeline_min_ops(
        R"({"device_ops": [], "format": "pipesim-timeline", "devices": 2, "microbatches": 2,
           "chunks": 1})"));
    CHECK_FALSE(viz::timeline_min_ops(
        R"({"format": "pipesim-schedule", "devices": 2, "microbatches": 2, "chunks": 1,
           "device_ops": []})"));
    CHECK_FALSE(viz::timeline_min_ops(R"({"format": "pipesim-timeline", "devices": 2,)"));
}
