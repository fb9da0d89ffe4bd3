// Schedule files: every registered schedule survives JSON and PyTorch CSV round trips.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "schedules/placement.hpp"
#include "schedules/pytorch_csv.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_json.hpp"

using namespace pipesim;

namespace {

// Shapes each generator is asked for: its default chunks, and more where it takes them.
std::vector<GeneratorOptions> shapes_for(const ScheduleGenerator& g) {
    std::vector<GeneratorOptions> shapes;
    // m = p and p = 2: DualPipe and DualPipeV without F&B pairs (no key
    // in JSON, one per device in the generator's output).
    for (auto [p, m] :
         {std::pair{4, 8}, std::pair{3, 5}, std::pair{1, 2}, std::pair{4, 4}, std::pair{2, 2}}) {
        std::set<int> chunks = {g.default_chunks, g.min_chunks};
        if (g.max_chunks == 0 || g.max_chunks >= 3) chunks.insert(3);
        for (int v : chunks)
            shapes.push_back(GeneratorOptions{p, m, v, 0});
    }
    return shapes;
}

}  // namespace

TEST_CASE("every registered schedule round-trips exactly through schedule JSON", "[files]") {
    for (const ScheduleGenerator& g : schedule_generators()) {
        int checked = 0;
        for (const GeneratorOptions& options : shapes_for(g)) {
            Schedule schedule;
            try {
                schedule = generate_schedule(g.name, options);
            } catch (const std::invalid_argument&) {
                continue;  // a shape this schedule does not run (e.g. odd v for V-shapes)
            }
            CAPTURE(g.name, options.devices, options.microbatches, options.chunks);
            const std::string text = schedule_to_json(schedule);
            const Schedule back = parse_schedule_json(text, "roundtrip.json");
            CHECK(back == schedule);
            CHECK(schedule_to_json(back) == text);
            ++checked;
        }
        INFO("generator " << g.name << " ran for none of the shapes tried");
        REQUIRE(checked >= 1);
    }
}

TEST_CASE("every registered schedule round-trips through PyTorch CSV with its placement",
          "[files]") {
    for (const ScheduleGenerator& g : schedule_generators()) {
        int checked = 0;
        int refused = 0;  // schedules with per-microbatch stage ranges
        for (const GeneratorOptions& options : shapes_for(g)) {
            Schedule schedule;
            try {
                schedule = generate_schedule(g.name, options);
            } catch (const std::invalid_argument&) {
                continue;
            }
            CAPTURE(g.name, options.devices, options.microbatches, options.chunks);
            // PyTorch's CSV has no per-microbatch stage ranges (two model copies, DualPipe):
            // the only schedules left out of the round trip, and export must refuse them.
            if (!schedule.microbatch_stages.empty()) {
                CHECK_THROWS_WITH(schedule_to_pytorch_csv(schedule),
                                  Catch::Contains("PyTorch's pipelining CSV cannot express that"));
                ++refused;
                continue;
            }
            schedule.fb_pairs.clear();  // the CSV has no F&B pairs (DualPipeV's)
            const std::string csv = schedule_to_pytorch_csv(schedule);
            const PytorchCsvImport imported =
                parse_pytorch_csv(csv, "roundtrip.csv", schedule.name);
            CHECK(imported.schedule == schedule);
            CHECK(imported.placement ==
                  classify_placement(schedule.stage_device, schedule.devices));
            CHECK(imported.annotations.empty());
            CHECK(schedule_to_pytorch_csv(imported.schedule) == csv);
            ++checked;
        }
        INFO("generator " << g.name << ": " << checked << " CSV round trips, " << refused
                          << " schedules with per-microbatch stage ranges");
        REQUIRE(checked + refused >= 1);
    }
}

TEST_CASE("a custom placement is written as an array and read back", "[files]") {
    Schedule s = make_empty_schedule("custom", 2, 1, 2, {1, 0, 0, 1});
    s.device_ops[0] = {{Pass::F, 0, 1}, {Pass::F, 0, 2}, {Pass::BW, 0, 2}, {Pass::BW, 0, 1}};
    s.device_ops[1] = {{Pass::F, 0, 0}, {Pass::F, 0, 3}, {Pass::BW, 0, 3}, {Pass::BW, 0, 0}};
    const std::string text = schedule_to_json(s);
    CHECK_THAT(text, Catch::Contains("\"placement\": [1,0,0,1]"));
    CHECK(parse_schedule_json(text, "custom.json") == s);
    const auto imported = parse_pytorch_csv(schedule_to_pytorch_csv(s), "custom.csv", "custom");
    CHECK(imported.schedule == s);
    CHECK(imported.placement == PlacementKind::custom);
}

TEST_CASE("ops are separated by any ASCII whitespace, form feed and vertical tab included",
          "[files]") {
    // schedule-format.md says any ASCII whitespace; \f and \v were refused as part of an op.
    const std::string head =
        R"({"format":"pipesim-schedule","version":1,"name":"s","devices":2,"microbatches":1,)"
        R"("chunks":1,"placement":"looped","device_ops":[)";
    const Schedule spaced = parse_schedule_json(head + R"("F0:0 BW0:0","F0:1 BW0:1"]})", "s.json");
    for (const char* separator : {R"(\f)", R"(\u000b)", R"(\t)", R"(\r\n)"}) {
        INFO(separator);
        const std::string text =
            head + "\"F0:0" + separator + "BW0:0\",\"F0:1" + separator + "BW0:1\"]}";
        CHECK(parse_schedule_json(text, "s.json") == spaced);
    }
}

TEST_CASE("exported CSV puts each op after its inputs' steps, PyTorch's lock-step layout",
          "[files]") {
    const Schedule s = generate_schedule("1f1b", {4, 6, 0, 0});
    // 1F1B on 4 ranks: rank r starts after r idle steps; the last rank alternates F and B.
    CHECK(schedule_to_pytorch_csv(s) ==
          "0F0,0F1,0F2,0F3,,,,0B0,0F4,0B1,0F5,0B2,,0B3,,0B4,,0B5\n"
          ",1F0,1F1,1F2,,,1B0,1F3,1B1,1F4,1B2,1F5,1B3,,1B4,,1B5\n"
          ",,2F0,2F1,,2B0,2F2,2B1,2F3,2B2,2F4,2B3,2F5,2B4,,2B5\n"
          ",,,3F0,3B0,3F1,3B1,3F2,3B2,3F3,3B3,3F4,3B4,3F5,3B5\n");
}

TEST_CASE("split backward exports as PyTorch I and W, fused as B", "[files]") {
    const Schedule s = generate_schedule("zb-h1", {2, 2, 0, 0});
    const std::string csv = schedule_to_pytorch_csv(s);
    CHECK_THAT(csv, Catch::Contains("1I0") && Catch::Contains("1W0") && Catch::Contains("0I1"));
    CHECK_THAT(csv, !Catch::Contains("B"));
}

TEST_CASE("a schedule name that is not UTF-8 is written with replacement characters", "[files]") {
    Schedule s = generate_schedule("1f1b", {2, 1, 0, 0});
    s.name = "caf\xe9";
    const Schedule back = parse_schedule_json(schedule_to_json(s), "name.json");
    CHECK(back.name == "caf\xef\xbf\xbd");
    CHECK(back.device_ops == s.device_ops);
}

TEST_CASE("microbatch stage ranges round-trip through JSON — CSV export refuses them",
          "[files][json]") {
    // Two model copies on p = 2, V-shape: microbatch 0 on stages 0..1, microbatch 1 on 2..3.
    Schedule s = make_empty_schedule("two-way", 2, 2, 2, vshape_placement(2, 2));
    s.microbatch_stages = {{0, 1}, {2, 3}};
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::F, 1, 3}, {Pass::BW, 1, 3}, {Pass::BW, 0, 0}};
    s.device_ops[1] = {{Pass::F, 1, 2}, {Pass::F, 0, 1}, {Pass::BW, 0, 1}, {Pass::BW, 1, 2}};
    const std::string text = schedule_to_json(s);
    CHECK_THAT(text, Catch::Contains("\"microbatch_stages\": [\n    [0, 1],\n    [2, 3]\n  ]"));
    CHECK(parse_schedule_json(text, "two-way.json") == s);
    CHECK(schedule_to_json(parse_schedule_json(text, "two-way.json")) == text);
    CHECK_THROWS_WITH(schedule_to_pytorch_csv(s),
                      Catch::Contains("PyTorch's pipelining CSV cannot express that"));

    std::string bad = text;
    bad.replace(bad.find("[2, 3]"), 6, "[3, 2]");
    // Line 11 holds the second range, "[3, 2]"; column 9 is its last number.
    CHECK_THROWS_WITH(
        parse_schedule_json(bad, "bad.json"),
        "bad.json:11:9: microbatch_stages[1][1]: expected an integer in 3..3, got '2'");
}
