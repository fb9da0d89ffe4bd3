// What the replay records: only the ops and transfers asked for, the same metrics either way,
// and one validation per run (validated schedules are not checked again).
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/run.hpp"
#include "cli_runner.hpp"
#include "random_costs.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/metrics.hpp"
#include "schedules/phases.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

void check_same_metrics(const Metrics& a, const Metrics& b) {
    CHECK(a.makespan == b.makespan);
    CHECK(a.bubble_rate == b.bubble_rate);
    CHECK(a.bubble_time == b.bubble_time);
    CHECK(a.bubble_device == b.bubble_device);
    CHECK(a.peak_activation_max == b.peak_activation_max);
    CHECK(a.throughput == b.throughput);
    REQUIRE(a.devices.size() == b.devices.size());
    for (std::size_t d = 0; d < a.devices.size(); ++d) {
        CHECK(a.devices[d].busy == b.devices[d].busy);
        CHECK(a.devices[d].span == b.devices[d].span);
        CHECK(a.devices[d].idle == b.devices[d].idle);
        CHECK(a.devices[d].bubble_rate == b.devices[d].bubble_rate);
        CHECK(a.devices[d].peak_activation == b.devices[d].peak_activation);
    }
}

}  // namespace

TEST_CASE("a replay without op records gives exactly the metrics of the full timeline",
          "[sim][replay]") {
    std::mt19937 rng(20261201);
    const auto [name, p, m, v] = GENERATE(table<std::string, int, int, int>({
        {"1f1b", 4, 8, 1},
        {"zb-h2", 5, 7, 1},
        {"interleaved-1f1b", 4, 8, 2},
        {"zb-v", 4, 10, 2},
        {"dualpipe", 4, 8, 2},
    }));
    CAPTURE(name, p, m, v);
    const Schedule s = generate_schedule(name, GeneratorOptions{p, m, v, 0});
    const StageCosts costs = test::random_costs(s.stages(), rng, 0.5, 2.0);
    const MemoryModel memory = unit_memory_model(s.devices, s.chunks, 0.4);
    ReplayOptions full;
    full.comm_latency = 0.3;
    const Timeline timeline = replay(s, costs, full);
    const Metrics expected = compute_metrics(timeline, memory);
    REQUIRE(expected.makespan > 0);

    ReplayOptions bare = full;
    bare.record_ops = false;
    bare.record_transfers = false;
    bare.validated = true;
    const ReplayResult r = replay_with_metrics(s, costs, memory, bare);
    check_same_metrics(r.metrics, expected);
    CHECK(r.timeline.transfers.empty());
    REQUIRE(r.timeline.device_ops.size() == static_cast<std::size_t>(s.devices));
    for (const auto& ops : r.timeline.device_ops)
        CHECK(ops.empty());
    Timeline shape = timeline;
    for (auto& ops : shape.device_ops)
        ops.clear();
    shape.transfers.clear();
    CHECK(r.timeline == shape);

    SECTION("with records, the timeline is replay()'s, transfers included") {
        const ReplayResult all = replay_with_metrics(s, costs, memory, full);
        CHECK(all.timeline == timeline);
        CHECK_FALSE(all.timeline.transfers.empty());
        check_same_metrics(all.metrics, expected);
    }
}

TEST_CASE("a replay refuses an invalid order with validate()'s message", "[sim][replay]") {
    Schedule s = generate_schedule("1f1b", GeneratorOptions{3, 4, 1, 0});
    std::string kind;
    SECTION("an input later on the same device") {
        std::swap(s.device_ops[2][0], s.device_ops[2][1]);  // BW(mb 0) before F(mb 0)
        kind = "runs later in its order";
    }
    SECTION("a deadlock across devices") {
        // Device 0: F0 BW0 F1 ...; its BW0 waits (through devices 1 and 2) for device 1's
        // F1, which needs device 0's F1.
        auto& ops = s.device_ops[0];
        std::swap(ops[2], ops[3]);
        std::swap(ops[1], ops[2]);
        kind = "deadlock";
    }
    const auto issue = validate(s);
    REQUIRE(issue);
    CHECK_THAT(issue->message, Catch::Contains(kind));
    const std::string expected = "schedule '1f1b' is invalid: " + issue->message;
    const StageCosts costs = uniform_stage_costs(3, 1, 1, 2, 1);
    CHECK_THROWS_WITH(replay(s, costs), expected);
    ReplayOptions bare;
    bare.record_ops = false;
    bare.record_transfers = false;
    CHECK_THROWS_WITH(replay_with_metrics(s, costs, unit_memory_model(3, 1), bare), expected);
}

TEST_CASE("a generated schedule that cannot run is refused as generate_schedule refuses it",
          "[analysis][replay]") {
    // The analytic engine leaves the order and deadlock checks to the replay's walk.
    analysis::PipelineSpec spec;
    spec.schedule = "interleaved-1f1b";
    spec.generator = GeneratorOptions{8, 12, 2, 0};
    std::string expected;
    try {
        generate_schedule(spec.schedule, spec.generator);
    } catch (const std::invalid_argument& e) {
        expected = e.what();
    }
    REQUIRE_THAT(expected, Catch::StartsWith("interleaved-1f1b cannot run with p=8 m=12 v=2: "
                                             "the last microbatch group holds 4 of a group's 8") &&
                               Catch::Contains("; deadlock: device"));
    CHECK_THROWS_WITH(analysis::run(spec), expected);
    CHECK_THROWS_WITH(analysis::run_with_baseline(spec), expected);
    spec.generator.chunks = 0;  // the generator's default v, named in the message
    CHECK_THROWS_WITH(analysis::run(spec), expected);
}

TEST_CASE("the analytic engine records ops and transfers only when asked", "[analysis][replay]") {
    analysis::PipelineSpec spec;
    spec.schedule = "zb-h1";
    spec.generator = GeneratorOptions{4, 8, 0, 0};
    spec.costs.passes = {{1, 2, 1}};
    spec.comm_latency = 0.2;
    const analysis::Analysis full = analysis::run(spec);
    const analysis::Analysis bare = analysis::run(
        spec, analysis::AnalyticEngine{.record_transfers = false, .record_ops = false});
    check_same_metrics(bare.metrics, full.metrics);
    CHECK(bare.iteration_time == full.iteration_time);
    CHECK(bare.timeline.transfers.empty());
    CHECK(bare.timeline.device_ops.at(0).empty());
    CHECK(full.timeline.device_ops.at(0).size() == full.schedule.device_ops.at(0).size());
    CHECK(full.timeline.transfers.size() == 2u * 8u * 3u);  // m·(p−1) each way
}

TEST_CASE("analyze gives the same report whether or not it keeps a timeline", "[cli][replay]") {
    using test::run_pipesim;
    const std::string args = "analyze -s zb-v -p 4 -m 8 --costs 1,2,1 --comm 0.1 --json";
    const auto bare = run_pipesim(args);
    const auto path = std::filesystem::temp_directory_path() /
                      ("pipesim_records_" + std::to_string(::getpid()) + ".json");
    const auto with_timeline = run_pipesim(args + " --save-timeline " + path.string());
    const std::string saved = test::read_file(path);
    std::filesystem::remove(path);
    REQUIRE(bare.exit_code == 0);
    REQUIRE(with_timeline.exit_code == 0);
    CHECK(bare.out == with_timeline.out);
    // The saved timeline has its transfers (asked for by --save-timeline).
    CHECK_THAT(saved, Catch::Contains("\"transfers\": [\n"));
    CHECK_THAT(saved, Catch::Contains("\"producer\""));
}

TEST_CASE("the replay's walk visits and times ops exactly as asap_walk", "[sim][replay]") {
    std::mt19937 rng(7);
    for (const ScheduleGenerator& g : schedule_generators()) {
        CAPTURE(g.name);
        Schedule s = generate_schedule(g.name, GeneratorOptions{4, 8, 0, 0});
        s.fb_pairs.clear();  // asap_walk times every op on its own
        const StageCosts costs = test::random_costs(s.stages(), rng, 0.5, 2.0);
        std::vector<TimedOp> expected;
        std::vector<double> end;
        REQUIRE_FALSE(asap_walk(
            s, pass_durations(costs), 0.25, end,
            [&](int, int, const Op& op, const Predecessors&, double start, double finish) {
                expected.push_back({op, start, finish});
            }));
        std::vector<TimedOp> visited;
        REQUIRE(asap_dataflow(
            s, pass_durations(costs), 0.25,
            [&](int, const Op& op, const DataflowInput*, int, double start, double finish) {
                visited.push_back({op, start, finish});
            }));
        CHECK(visited == expected);
    }
}

TEST_CASE("a long replay tells how far it is every 2^20 ops and stops where its reporter throws",
          "[sim][replay]") {
    // 1F1B at p = 8, m = 140,000: 2,240,000 ops, so two reports (at 2^20 and 2^21 ops).
    const Schedule s = generate_schedule("1f1b", {8, 140000, 0, 0});
    REQUIRE(s.op_count() == 2240000);
    const StageCosts costs = uniform_stage_costs(8, 1, 1, 1, 1);
    const MemoryModel memory = unit_memory_model(8, 1);
    for (const bool record : {false, true}) {
        ReplayOptions options;
        options.record_ops = options.record_transfers = record;
        std::vector<std::string> phases;
        {
            const ReportPhases reporter(
                [&](std::string_view phase) { phases.emplace_back(phase); });
            (void)replay_with_metrics(s, costs, memory, options);
        }
        CHECK(phases == std::vector<std::string>{"replaying 1f1b (2240000 ops), 47 %",
                                                 "replaying 1f1b (2240000 ops), 94 %"});
        int reports = 0;
        const ReportPhases stop([&](std::string_view) {
            ++reports;
            throw std::runtime_error("stopped");
        });
        CHECK_THROWS_WITH(replay_with_metrics(s, costs, memory, options), "stopped");
        CHECK(reports == 1);
    }
}
