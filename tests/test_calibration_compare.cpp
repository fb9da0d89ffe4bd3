// gpu-run's host side: the ops-to-streams plan, where the pipeline devices go, the
// prediction and the predicted-versus-measured comparison on hand-made timelines.
#include <catch2/catch.hpp>

#include "analysis/predict.hpp"
#include "calibration/comparison.hpp"
#include "calibration/stream_plan.hpp"
#include "schedules/costs.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;
using namespace pipesim::calibration;

namespace {

// Two devices, one microbatch, F and BW on each: device 0 runs F(0,0) and BW(0,0),
// device 1 runs F(0,1) and BW(0,1).
Timeline two_stage(double f0, double f1, double bw1, double bw0) {
    Timeline t;
    t.schedule = "hand-made";
    t.devices = 2;
    t.microbatches = 1;
    t.stage_device = {0, 1};
    t.time_unit = "s";
    t.device_ops.resize(2);
    const double a = f0, b = a + f1, c = b + bw1, d = c + bw0;
    t.device_ops[0] = {{{Pass::F, 0, 0}, 0, a}, {{Pass::BW, 0, 0}, c, d}};
    t.device_ops[1] = {{{Pass::F, 0, 1}, a, b}, {{Pass::BW, 0, 1}, b, c}};
    return t;
}

}  // namespace

TEST_CASE("median of an even count is the mean of the middle two", "[calibration]") {
    CHECK(median({}) == 0);
    CHECK(median({3}) == 3);
    CHECK(median({4, 1, 3, 2}) == 2.5);
    CHECK(median({5, -1, 2}) == 2);
}

TEST_CASE("comparison reports makespans, bubbles and per-pass median op-time errors",
          "[calibration]") {
    const Timeline predicted = two_stage(1, 1, 2, 2);
    const Timeline measured = two_stage(1.1, 1.3, 1.8, 2.0);
    const RunComparison c = compare_timelines(predicted, measured);
    CHECK(c.predicted_makespan == Approx(6));
    CHECK(c.measured_makespan == Approx(6.2));
    CHECK(c.makespan_error == Approx(0.2 / 6));
    // Device 0 idles while device 1 works: 3 of 6 predicted, 3.1 of 6.2 measured.
    CHECK(c.predicted_bubble == Approx(0.5));
    CHECK(c.measured_bubble == Approx(3.1 / 6.2));
    REQUIRE(c.passes.size() == 2);
    CHECK(c.passes[0].pass == Pass::F);
    CHECK(c.passes[0].ops == 2);
    CHECK(c.passes[0].median_error == Approx((0.1 + 0.3) / 2));
    CHECK(c.passes[1].pass == Pass::BW);
    CHECK(c.passes[1].median_error == Approx((-0.1 + 0.0) / 2));
    CHECK(c.passes[1].median_abs_error == Approx(0.05));
    CHECK_THAT(comparison_table(c), Catch::Contains("makespan") && Catch::Contains("BW op time"));
}

TEST_CASE("a timeline compared with itself has no error", "[calibration]") {
    const Timeline t =
        replay(generate_schedule("zb-h1", {4, 8, 0, 0}), uniform_stage_costs(4, 1, 1.0, 1.0, 1.0));
    const RunComparison c = compare_timelines(t, t);
    CHECK(c.makespan_error == 0);
    CHECK(c.predicted_bubble == c.measured_bubble);
    REQUIRE(c.passes.size() == 3);
    for (const PassError& e : c.passes)
        CHECK(e.median_abs_error == 0);
}

TEST_CASE("timelines of different runs cannot be compared", "[calibration]") {
    Timeline missing = two_stage(1, 1, 1, 1);
    missing.device_ops[1].pop_back();
    CHECK_THROWS_WITH(compare_timelines(two_stage(1, 1, 1, 1), missing),
                      "op BW(mb 0, stage 1) is only in the predicted timeline");
    Timeline wider = two_stage(1, 1, 1, 1);
    wider.microbatches = 2;
    CHECK_THROWS_WITH(compare_timelines(two_stage(1, 1, 1, 1), wider),
                      Catch::StartsWith("predicted and measured timelines differ in shape"));
}

TEST_CASE("the prediction replays the stages' layer counts times the layer's pass times",
          "[calibration]") {
    const Schedule s = generate_schedule("1f1b", {4, 8, 0, 0});
    const std::vector<int> layers = {2, 2, 2, 2};
    const Timeline t = analysis::predict_timeline(s, layers, {0.001, 0.002, 0.0015}, 0.0001, 1e6);
    ReplayOptions options;
    options.comm_latency = 0.0001;
    options.message_bytes = 1e6;
    const Timeline expected = replay(s, uniform_stage_costs(4, 1, 0.002, 0.004, 0.003), options);
    REQUIRE(t.device_ops.size() == expected.device_ops.size());
    for (std::size_t d = 0; d < t.device_ops.size(); ++d)
        for (std::size_t i = 0; i < t.device_ops[d].size(); ++i) {
            CHECK(t.device_ops[d][i].op == expected.device_ops[d][i].op);
            CHECK(t.device_ops[d][i].end == Approx(expected.device_ops[d][i].end));
        }
    CHECK(t.time_unit == "s");
}

TEST_CASE("the stream plan issues every op after the ops it waits for", "[calibration]") {
    const auto [name, p, m, cross_boundaries] = GENERATE(table<std::string, int, int, int>({
        {"1f1b", 4, 16, 3},
        {"zb-h1", 4, 16, 3},
        {"v-half", 4, 16, 6},  // V-shape: stages 3 and 4 share device 3
        {"interleaved-1f1b", 2, 4, 3},
    }));
    const Schedule s = generate_schedule(name, {p, m, 0, 0});
    const std::vector<int> layers(static_cast<std::size_t>(s.stages()), 1);
    const StreamPlan plan = plan_streams(s, layers);
    INFO(name);
    REQUIRE(plan.ops.size() == s.op_count());
    // Each device's ops in the schedule's order.
    std::vector<int> next(static_cast<std::size_t>(p), 0);
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const PlannedOp& o = plan.ops[i];
        CHECK(o.position == next[static_cast<std::size_t>(o.device)]++);
        CHECK(s.device_ops[static_cast<std::size_t>(o.device)]
                          [static_cast<std::size_t>(o.position)] == o.op);
        for (int k = 0; k < o.input_count; ++k) {
            const CrossInput& in = o.inputs[static_cast<std::size_t>(k)];
            REQUIRE(in.producer < static_cast<int>(i));
            const PlannedOp& producer = plan.ops[static_cast<std::size_t>(in.producer)];
            CHECK(producer.device == in.producer_device);
            CHECK(producer.device != o.device);
            CHECK(producer.op.microbatch == o.op.microbatch);
            if (o.op.pass == Pass::F) CHECK(producer.op.stage == o.op.stage - 1);
            if (o.op.pass != Pass::F) CHECK(producer.op.stage == o.op.stage + 1);
        }
    }
    // One activation and one gradient copy per microbatch per cross-device boundary.
    CHECK(plan.transfers() == 2 * m * cross_boundaries);
}

TEST_CASE("the stream plan runs each stage's layers and checks the counts", "[calibration]") {
    const Schedule s = generate_schedule("1f1b", {2, 2, 0, 0});
    const std::vector<int> layers = {3, 2};
    const StreamPlan plan = plan_streams(s, layers);
    for (const PlannedOp& o : plan.ops)
        CHECK(o.layers == (o.op.stage == 0 ? 3 : 2));
    CHECK_THROWS_WITH(plan_streams(s, std::vector<int>{1}), "1 layer counts for 2 virtual stages");
    CHECK_THROWS_WITH(plan_streams(s, std::vector<int>{1, 0}),
                      "virtual stage 1 has 0 layers; every stage needs at least one");
}

TEST_CASE("layers split evenly over stages, the first ones taking the remainder", "[calibration]") {
    CHECK(even_stage_layers(22, 4) == std::vector<int>{6, 6, 5, 5});
    CHECK(even_stage_layers(22, 8) == std::vector<int>{3, 3, 3, 3, 3, 3, 2, 2});
    CHECK(even_stage_layers(30, 4) == std::vector<int>{8, 8, 7, 7});
    CHECK_THROWS_WITH(even_stage_layers(3, 4),
                      "cannot split 3 layers into 4 stages of at least one layer");
}

TEST_CASE("pipeline devices go to GPUs when there are enough, else to SM partitions",
          "[calibration]") {
    const GpuInventory eight{8, 132, true, 8, 8};
    const GpuInventory h200{1, 132, true, 8, 8};
    const GpuInventory old_driver{1, 132, false, 0, 1};
    CHECK(choose_placement(RunMode::automatic, 4, eight).mode == RunMode::multi_gpu);
    const RunPlacement p = choose_placement(RunMode::automatic, 4, h200);
    CHECK(p.mode == RunMode::partitions);
    CHECK(p.partition_sms == 32);
    CHECK(choose_placement(RunMode::partitions, 4, eight).partition_sms == 32);
    CHECK(choose_placement(RunMode::automatic, 3, h200).partition_sms == 40);
    CHECK_THROWS_WITH(choose_placement(RunMode::multi_gpu, 4, h200),
                      "4 pipeline devices need 4 GPUs, found 1 (use SM partitions of one GPU "
                      "instead)");
    CHECK_THROWS_WITH(choose_placement(RunMode::automatic, 4, old_driver),
                      Catch::Contains("need SM partitions (CUDA green contexts, driver and "
                                      "toolkit 12.4 or later)"));
    CHECK_THROWS_WITH(choose_placement(RunMode::partitions, 32, h200),
                      "32 SM partitions of a 132-SM GPU would have 0 SMs each, below the "
                      "driver's minimum of 8");
}
