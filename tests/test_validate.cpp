// Validation of hand-made schedules: each broken one is rejected with a message that names
// the device, its position and the op it waits for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "schedules/op_dependencies.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"

using namespace pipesim;

namespace {

// 1F1B-like hand schedule on p=2, m=2 with fused backward; the base for the broken variants.
Schedule two_device_schedule() {
    Schedule s = make_empty_schedule("hand", 2, 2, 1, looped_placement(2, 1));
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::F, 1, 0}, {Pass::BW, 0, 0}, {Pass::BW, 1, 0}};
    s.device_ops[1] = {{Pass::F, 0, 1}, {Pass::BW, 0, 1}, {Pass::F, 1, 1}, {Pass::BW, 1, 1}};
    return s;
}

std::string issue_of(const Schedule& s) {
    const auto issue = validate(s);
    REQUIRE(issue.has_value());
    return issue->message;
}

}  // namespace

TEST_CASE("a hand-written 1F1B schedule is valid", "[schedules][validate]") {
    CHECK_FALSE(validate(two_device_schedule()).has_value());
}

TEST_CASE("a missing op is named with the device it belongs on", "[schedules][validate]") {
    Schedule s = two_device_schedule();
    s.device_ops[1].erase(s.device_ops[1].begin() + 2);  // F(mb 1, stage 1)
    CHECK(issue_of(s) == "F(mb 1, stage 1) is missing (it belongs on device 1)");
}

TEST_CASE("of several missing ops, the first microbatch's is named", "[schedules][validate]") {
    Schedule s = two_device_schedule();
    s.device_ops[0].pop_back();                          // BW(mb 1, stage 0)
    s.device_ops[1].erase(s.device_ops[1].begin() + 1);  // BW(mb 0, stage 1)
    CHECK(issue_of(s) == "BW(mb 0, stage 1) is missing (it belongs on device 1)");
    s.device_ops[1].push_back({Pass::BW, 0, 1});
    CHECK(issue_of(s) == "BW(mb 1, stage 0) is missing (it belongs on device 0)");
}

TEST_CASE("of an op's several faults, the first checked is named", "[schedules][validate]") {
    Schedule s = two_device_schedule();
    s.device_ops[0][1] = {Pass::F, 1, 1};  // on the wrong device, and F(mb 1, stage 1) twice
    CHECK(issue_of(s) ==
          "device 0 position 1: F(mb 1, stage 1) belongs on device 1, which holds stage 1");
    s.device_ops[0][1] = {Pass::F, 7, 9};  // microbatch and stage out of range
    CHECK(issue_of(s) == "device 0 position 1: F(mb 7, stage 9) has microbatch outside 0..1");
    s.device_ops[0][1] = {Pass::F, -1, 0};
    CHECK(issue_of(s) == "device 0 position 1: F(mb -1, stage 0) has microbatch outside 0..1");
    s.device_ops[0][1] = {Pass::F, 1, -1};
    CHECK(issue_of(s) == "device 0 position 1: F(mb 1, stage -1) has stage outside 0..1");
}

TEST_CASE("a duplicated op is rejected with both positions", "[schedules][validate]") {
    Schedule s = two_device_schedule();
    s.device_ops[0].push_back({Pass::F, 0, 0});
    const auto issue = validate(s);
    REQUIRE(issue);
    CHECK(issue->device == 0);
    CHECK(issue->position == 4);
    CHECK(issue->message ==
          "device 0 position 4: F(mb 0, stage 0) appears twice (first at position 0)");
}

TEST_CASE("B before F on the same device is rejected", "[schedules][validate]") {
    Schedule s = make_empty_schedule("hand", 1, 1, 1, looped_placement(1, 1));
    s.device_ops[0] = {{Pass::B, 0, 0}, {Pass::F, 0, 0}, {Pass::W, 0, 0}};
    const auto issue = validate(s);
    REQUIRE(issue);
    CHECK(issue->device == 0);
    CHECK(issue->position == 0);
    CHECK(issue->message ==
          "device 0 position 0: B(mb 0, stage 0) needs F(mb 0, stage 0), which device 0 runs "
          "later in its order");
}

TEST_CASE("W before its B on the same device is rejected", "[schedules][validate]") {
    Schedule s = make_empty_schedule("hand", 1, 1, 1, looped_placement(1, 1));
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::W, 0, 0}, {Pass::B, 0, 0}};
    CHECK(issue_of(s) ==
          "device 0 position 1: W(mb 0, stage 0) needs B(mb 0, stage 0), which device 0 runs "
          "later in its order");
}

TEST_CASE("a cross-device wait cycle is reported as a deadlock naming each wait",
          "[schedules][validate]") {
    Schedule s = two_device_schedule();
    // Device 1 wants microbatch 1's forward before it returns microbatch 0's backward, but
    // device 0 waits for that backward before it sends microbatch 1.
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::BW, 0, 0}, {Pass::F, 1, 0}, {Pass::BW, 1, 0}};
    s.device_ops[1] = {{Pass::F, 0, 1}, {Pass::F, 1, 1}, {Pass::BW, 0, 1}, {Pass::BW, 1, 1}};
    const auto issue = validate(s);
    REQUIRE(issue);
    CHECK(issue->message ==
          "deadlock: device 0 at position 1 (BW(mb 0, stage 0)) waits for BW(mb 0, stage 1) on "
          "device 1; device 1 at position 1 (F(mb 1, stage 1)) waits for F(mb 1, stage 0) on "
          "device 0, which closes the cycle");
    CHECK(issue->device == 0);
    CHECK(issue->position == 1);
}

TEST_CASE("structural errors name what is wrong", "[schedules][validate]") {
    SECTION("op on the wrong device") {
        Schedule s = two_device_schedule();
        s.device_ops[0][1] = {Pass::F, 1, 1};
        CHECK(issue_of(s) ==
              "device 0 position 1: F(mb 1, stage 1) belongs on device 1, which holds stage 1");
    }
    SECTION("microbatch out of range") {
        Schedule s = two_device_schedule();
        s.device_ops[1][3] = {Pass::BW, 5, 1};
        CHECK(issue_of(s) == "device 1 position 3: BW(mb 5, stage 1) has microbatch outside 0..1");
    }
    SECTION("fused and split backward for the same microbatch and stage") {
        Schedule s = two_device_schedule();
        s.device_ops[1].push_back({Pass::W, 1, 1});
        CHECK(issue_of(s) ==
              "device 1: microbatch 1 stage 1 has both BW and W: use either the fused backward "
              "or B and W");
    }
    SECTION("B without W") {
        Schedule s = make_empty_schedule("hand", 1, 1, 1, looped_placement(1, 1));
        s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::B, 0, 0}};
        CHECK(issue_of(s) == "W(mb 0, stage 0) is missing (it belongs on device 0)");
    }
    SECTION("placement that gives a device too many stages") {
        Schedule s = two_device_schedule();
        s.stage_device = {0, 0};
        CHECK(issue_of(s) == "device 0 holds 2 stages, expected 1 (chunks)");
    }
    SECTION("wrong number of device lists") {
        Schedule s = two_device_schedule();
        s.device_ops.pop_back();
        CHECK(issue_of(s) == "schedule has 1 device op lists for 2 devices");
    }
}

TEST_CASE("require_valid throws InvalidSchedule with the schedule's name",
          "[schedules][validate]") {
    Schedule s = two_device_schedule();
    s.device_ops[0].pop_back();
    CHECK_THROWS_WITH(require_valid(s), Catch::StartsWith("schedule 'hand' is invalid: "));
    CHECK_THROWS_AS(require_valid(s), std::invalid_argument);
}

TEST_CASE("mixing fused and split backwards across stages is valid", "[schedules][validate]") {
    // Stage 1 splits its backward, stage 0 fuses it: B(mb, 0) waits for B(mb, 1).
    Schedule s = make_empty_schedule("mixed", 2, 1, 1, looped_placement(2, 1));
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::BW, 0, 0}};
    s.device_ops[1] = {{Pass::F, 0, 1}, {Pass::B, 0, 1}, {Pass::W, 0, 1}};
    CHECK_FALSE(validate(s).has_value());
}

TEST_CASE("the classic generators give valid schedules over a grid of shapes",
          "[schedules][validate]") {
    for (std::string_view name : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2"}) {
        const ScheduleGenerator& g = *find_generator(name);
        for (int p : {1, 2, 3, 4, 8}) {
            for (int m : {1, 2, 3, 5, 8, 16}) {
                const int v = g.default_chunks;
                CAPTURE(g.name, p, m, v);
                GeneratorOptions o{p, m, v, 0};
                if (g.name == "interleaved-1f1b" && m % p != 0 && m > p) {
                    // Megatron's order needs whole microbatch groups unless m ≤ p; when it
                    // cannot run, the error must say so rather than return a broken schedule.
                    try {
                        const Schedule s = generate_schedule(g.name, o);
                        CHECK_FALSE(validate(s).has_value());
                    } catch (const std::invalid_argument& e) {
                        CHECK_THAT(e.what(), Catch::Contains("deadlock"));
                    }
                    continue;
                }
                const Schedule s = generate_schedule(g.name, o);
                CHECK_FALSE(validate(s).has_value());
                const int passes = g.name.substr(0, 2) == "zb" ? 3 : 2;  // F,B,W or F,BW
                CHECK(s.op_count() == static_cast<std::size_t>(m * p * v * passes));
            }
        }
    }
}

TEST_CASE("the dependency rule names DESIGN.md's inputs and successors invert predecessors",
          "[schedules][validate]") {
    // The rule as written in DESIGN.md, for stages 2..5 of a routed microbatch 3.
    const StageRange route{2, 5};
    auto list = [](const OpLinks& links) { return std::vector<Op>(links.begin(), links.end()); };
    using V = std::vector<Op>;
    CHECK(list(predecessors(Op{Pass::F, 3, 2}, route, true)) == V{});
    CHECK(list(predecessors(Op{Pass::F, 3, 4}, route, true)) == V{{Pass::F, 3, 3}});
    CHECK(list(predecessors(Op{Pass::B, 3, 4}, route, true)) ==
          V{{Pass::F, 3, 4}, {Pass::B, 3, 5}});
    CHECK(list(predecessors(Op{Pass::BW, 3, 4}, route, false)) ==
          V{{Pass::F, 3, 4}, {Pass::BW, 3, 5}});
    CHECK(list(predecessors(Op{Pass::B, 3, 5}, route, true)) == V{{Pass::F, 3, 5}});
    CHECK(list(predecessors(Op{Pass::W, 3, 4}, route, true)) == V{{Pass::B, 3, 4}});
    CHECK(list(successors(Op{Pass::F, 3, 5}, route, false)) == V{{Pass::BW, 3, 5}});
    CHECK(list(successors(Op{Pass::B, 3, 2}, route, true)) == V{{Pass::W, 3, 2}});
    CHECK(list(successors(Op{Pass::W, 3, 3}, route, true)) == V{});

    // Over whole schedules (routed DualPipe, split, fused, mixed): Y waits for X exactly when
    // X is waited for by Y, and every op named is in the schedule.
    Schedule mixed = make_empty_schedule("mixed", 2, 1, 1, looped_placement(2, 1));
    mixed.device_ops[0] = {{Pass::F, 0, 0}, {Pass::BW, 0, 0}};
    mixed.device_ops[1] = {{Pass::F, 0, 1}, {Pass::B, 0, 1}, {Pass::W, 0, 1}};
    for (const Schedule& s :
         {generate_schedule("dualpipe", {4, 8, 0, 0}), generate_schedule("zb-h1", {3, 5, 0, 0}),
          generate_schedule("1f1b", {3, 5, 0, 0}), mixed}) {
        CAPTURE(s.name);
        std::vector<char> present(dense_op_count(s.microbatches, s.stages()), 0);
        for (const auto& ops : s.device_ops)
            for (const Op& op : ops)
                present[dense_op_index(op, s.stages())] = 1;
        for (const auto& ops : s.device_ops) {
            for (const Op& op : ops) {
                CAPTURE(to_string(op));
                const StageRange op_route = s.stages_of(op.microbatch);
                auto split = [&](int stage) {
                    return present[dense_op_index(Op{Pass::B, op.microbatch, stage}, s.stages())] !=
                           0;
                };
                for (const Op& before : predecessors(op, op_route, split)) {
                    CHECK(present[dense_op_index(before, s.stages())]);
                    const V after = list(successors(before, op_route, split));
                    CHECK(std::find(after.begin(), after.end(), op) != after.end());
                }
                for (const Op& after : successors(op, op_route, split)) {
                    CHECK(present[dense_op_index(after, s.stages())]);
                    const V before = list(predecessors(after, op_route, split));
                    CHECK(std::find(before.begin(), before.end(), op) != before.end());
                }
            }
        }
    }
}
