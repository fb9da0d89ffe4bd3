// The analysis layer: one spec, prepared once, run on either engine into the same Analysis.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "analysis/cluster_workload.hpp"
#include "analysis/compare.hpp"
#include "analysis/device_cap.hpp"
#include "analysis/model_plan.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "analysis/time_budget.hpp"
#include "child_process.hpp"
#include "models/roofline.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;
using namespace pipesim::sim;
using namespace pipesim::analysis;
using pipesim::test::run_in_child;

namespace {

ModelSpec model_spec(const char* model, int microbatch) {
    ModelSpec m;
    m.model = model;
    m.gpu = "a100-80gb";
    m.workload.microbatch = microbatch;
    return m;
}

// A cluster whose links take no time: SimGrid then times every op like the replay.
ClusterSpec instant_cluster(int gpus) {
    ClusterSpec c;
    c.name = "instant";
    c.gpus_per_node = gpus;
    c.nodes = {NodeGroup{1, "a100-80gb", 0}};
    c.intra_node = LinkSpec{1e18, 0};
    c.nic = LinkSpec{1e18, 0};
    return c;
}

}  // namespace

TEST_CASE("a cost-aware schedule is planned with the model's stage times, computed once",
          "[analysis][models]") {
    PipelineSpec spec;
    spec.schedule = "zb-1p";
    spec.generator = {4, 8, 0, 0};
    spec.costs.model = model_spec("zb-14.6b", 1);
    // Unfused attention: its stored s×s scores make W's share of the memory small enough
    // that planning with the model's times gives another order than unit times.
    spec.costs.model->workload.attention = pipesim::models::AttentionKernel::unfused;
    const Pipeline prepared = prepare(spec);
    REQUIRE(prepared.model);

    // Independently: plan the model for 4 stages, hand its times to the generator.
    const ModelAnalysis plan = plan_model(*spec.costs.model, 4);
    GeneratorOptions planned = spec.generator;
    const MemoryModel memory = memory_model_from_plan(plan.plan);
    double w_share = 0;
    for (std::size_t s = 0; s < memory.activation.size(); ++s)
        w_share = std::max(w_share, memory.held_for_w[s] / memory.activation[s]);
    planned.planning = PlanningCosts{stage_costs_from_plan(plan.plan), 0, w_share};
    CHECK(prepared.schedule == generate_schedule("zb-1p", planned));
    CHECK(prepared.model->plan.stages.size() == 4);
    CHECK(prepared.costs == stage_costs_from_plan(plan.plan));
    // Planned with these times, not unit ones: for these stage times the orders differ.
    CHECK(prepared.schedule != generate_schedule("zb-1p", spec.generator));
}

TEST_CASE("a model's layers are split by device where that replays faster than by stage",
          "[analysis][models]") {
    // Each schedule replayed with the split that balances the stages (plan_model's) and with
    // the one that balances the devices, both planned here: the run takes the faster.
    const auto replayed = [](const Schedule& schedule, const ModelAnalysis& model) {
        ReplayOptions options;
        options.record_ops = false;
        return replay_with_metrics(schedule, stage_costs_from_plan(model.plan),
                                   memory_model_from_plan(model.plan), options)
            .metrics.makespan;
    };
    const auto layers = [](const ModelAnalysis& model) {
        std::vector<int> counts;
        for (const auto& stage : model.plan.stages)
            counts.push_back(stage.layers);
        return counts;
    };
    // Schedules whose order does not depend on the times: one schedule, two splits.
    struct Case {
        const char* schedule;
        const char* model;
        int tp;
        bool device_faster;
    };
    for (const Case& c : {Case{"interleaved-1f1b", "llama3-8b", 2, false},
                          Case{"dualpipe-v", "llama2-13b", 4, true}}) {
        PipelineSpec spec;
        spec.schedule = c.schedule;
        spec.generator = {8, 32, 0, 0};
        spec.costs.model = model_spec(c.model, 1);
        spec.costs.model->gpu = "h100-sxm";
        spec.tp = spec.costs.model->workload.tp = c.tp;
        const Analysis a = run(spec);
        const ModelAnalysis by_stage = plan_model(*spec.costs.model, a.schedule.stages());
        const ModelAnalysis by_device =
            plan_model(*spec.costs.model, a.schedule.stages(), a.schedule.stage_device);
        INFO(c.schedule);
        REQUIRE(layers(by_stage) != layers(by_device));
        const bool device_faster = replayed(a.schedule, by_device) < replayed(a.schedule, by_stage);
        CHECK(device_faster == c.device_faster);
        CHECK(layers(*a.model) == (device_faster ? layers(by_device) : layers(by_stage)));
    }
    // zb-v plans its order with the stage times: planned with the device split, it is 9.9 %
    // faster on this model than planned with the stage split.
    PipelineSpec zbv;
    zbv.schedule = "zb-v";
    zbv.generator = {8, 32, 0, 0};
    zbv.costs.model = model_spec("llama2-13b", 1);
    zbv.costs.model->gpu = "h100-sxm";
    zbv.tp = zbv.costs.model->workload.tp = 4;
    const ModelAnalysis by_stage = plan_model(*zbv.costs.model, 16);
    GeneratorOptions planned = zbv.generator;
    planned.planning = PlanningCosts{stage_costs_from_plan(by_stage.plan), 0,
                                     largest_w_share(memory_model_from_plan(by_stage.plan))};
    const double stage_split = replayed(generate_schedule("zb-v", planned), by_stage);
    CHECK(run(zbv).metrics.makespan < 0.92 * stage_split);
}

TEST_CASE("memory over a limit is printed with the decimals that tell the two apart",
          "[analysis]") {
    constexpr double gib = 1024.0 * 1024.0 * 1024.0;
    using texts = std::pair<std::string, std::string>;
    using pipesim::analysis::memory_over;
    CHECK(memory_over(81 * gib, 80 * gib) == texts{"81.0 GiB", "80.0 GiB"});
    CHECK(memory_over(80.04 * gib, 80 * gib) == texts{"80.04 GiB", "80.00 GiB"});
    CHECK(memory_over(80.004 * gib, 80 * gib) == texts{"80.004 GiB", "80.000 GiB"});
    // Three decimals at most: beyond them the bytes, not the text, say which is larger.
    CHECK(memory_over(80.0001 * gib, 80 * gib) == texts{"80.000 GiB", "80.000 GiB"});
    // An H100's 81,559 MiB against a device just over it.
    CHECK(memory_over(79.66 * gib, 81559.0 * 1024 * 1024) == texts{"79.7 GiB", "79.6 GiB"});
}

TEST_CASE("memory under a GiB is printed in a smaller unit", "[analysis]") {
    constexpr double mib = 1024.0 * 1024.0;
    using texts = std::pair<std::string, std::string>;
    using pipesim::analysis::memory_over;
    // A GPU file's 5 MB: in GiB both "0.0", the limit unreadable.
    CHECK(memory_over(15.9 * 1024 * mib, 5e6) == texts{"15.9 GiB", "4.8 MiB"});
    CHECK(memory_over(3 * mib, 512 * 1024) == texts{"3.0 MiB", "512.0 KiB"});
    CHECK(memory_over(1.0004 * mib, mib) == texts{"1.000 MiB", "1.000 MiB"});
    CHECK(memory_over(2000, 1000) == texts{"2.0 KiB", "1000 bytes"});
}

TEST_CASE("model figures count every data-parallel replica", "[analysis][models]") {
    PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.generator = {4, 16, 0, 0};
    spec.costs.model = model_spec("zb-1.5b", 1);
    const Analysis one = run(spec);
    spec.dp = 2;
    const Analysis two = run(spec);
    REQUIRE(one.model);
    REQUIRE(two.model);
    // Two replicas run the same pipeline, then reduce their gradients (what is exposed of it
    // lengthens the step: test_analyze_dp_reduction.cpp): twice the work over that step.
    CHECK(two.metrics.makespan == one.metrics.makespan);
    CHECK(two.iteration_time > one.iteration_time);
    CHECK(two.model->gpus == 2 * one.model->gpus);
    const double longer = one.model->step_time / two.model->step_time;
    CHECK(two.model->samples_per_second == Approx(2 * one.model->samples_per_second * longer));
    CHECK(two.model->mfu == Approx(one.model->mfu * longer));
    // MFU from its definition: model FLOPs per second of a step (the iteration, then the
    // optimizer step) over the GPUs' dense peak.
    const double flops = 2.0 * 16 * one.model->plan.model_flops_per_microbatch;
    CHECK(two.model->step_time == two.iteration_time + two.model->optimizer_seconds);
    CHECK(two.model->mfu ==
          Approx(flops / (two.model->step_time * 8 * two.model->gpu.peak_bf16_flops)));
}

TEST_CASE("the analytic engine fills the Analysis from the replay", "[analysis]") {
    PipelineSpec spec;
    spec.schedule = "zb-h1";
    spec.generator = {4, 8, 0, 0};
    spec.costs.passes = {PassCosts{1, 2, 1}};
    spec.costs.mem_w_ratio = 0.5;
    spec.comm_latency = 0.25;
    const Analysis a = run(spec);
    const Schedule s = generate_schedule("zb-h1", spec.generator);
    const Timeline t = replay(s, uniform_stage_costs(4, 1, 1, 2, 1), {0.25});
    CHECK(a.schedule == s);
    CHECK(a.metrics.makespan == compute_metrics(t, unit_memory_model(4, 1)).makespan);
    CHECK(a.iteration_time == a.metrics.makespan);
    CHECK(a.memory.held_for_w == unit_memory_model(4, 1, 0.5).held_for_w);
    CHECK_FALSE(a.cluster);
    CHECK_FALSE(a.model);
}

TEST_CASE("both engines fill the same Analysis: memory, metrics and model figures",
          "[analysis][simgrid]") {
    PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.generator = {4, 8, 0, 0};
    spec.costs.model = model_spec("zb-1.5b", 1);
    const Analysis replayed = run(spec);
    const std::string result = run_in_child([&] {
        SimGridEngine engine;
        engine.cluster = instant_cluster(4);
        const Analysis simulated = run(spec, engine);
        return fmt::format(
            "{} {} {:.17g} {:.17g} {:.17g} {:.17g}", simulated.memory.activation.size(),
            static_cast<int>(simulated.cluster.has_value()), simulated.metrics.peak_activation_max,
            simulated.iteration_time, simulated.model->samples_per_second, simulated.model->mfu);
    });
    INFO(result);
    std::size_t stages = 0;
    int has_cluster = 0;
    double peak = 0, iteration = 0, samples = 0, mfu = 0;
    REQUIRE(std::sscanf(result.c_str(), "%zu %d %lf %lf %lf %lf", &stages, &has_cluster, &peak,
                        &iteration, &samples, &mfu) == 6);
    CHECK(stages == replayed.memory.activation.size());
    CHECK(has_cluster == 1);
    CHECK(peak == Approx(replayed.metrics.peak_activation_max).epsilon(1e-12));
    // No gradient bytes cross an instant link: the iteration is the pipeline's makespan.
    CHECK(iteration == Approx(replayed.iteration_time).epsilon(1e-9));
    CHECK(samples == Approx(replayed.model->samples_per_second).epsilon(1e-9));
    CHECK(mfu == Approx(replayed.model->mfu).epsilon(1e-9));
}

TEST_CASE("cost lists are one full stage or one triple per virtual stage", "[analysis][errors]") {
    const StageCosts given = stage_costs_from_passes({{1, 2, 3}, {4, 5, 6}}, 2, 1);
    CHECK(given.forward == std::vector<double>{1, 4});
    CHECK(given.backward_weight == std::vector<double>{3, 6});
    const StageCosts split = stage_costs_from_passes({{2, 4, 6}}, 2, 2);
    CHECK(split.forward == std::vector<double>(4, 1.0));
    CHECK_THROWS_WITH(stage_costs_from_passes({{1, 1, 1}, {1, 1, 1}}, 4, 1),
                      "costs list 2 triples; give one (a full stage) or p·v = 4 (one per "
                      "virtual stage)");
    PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.generator = {2, 2, 0, 0};
    spec.dp = 0;
    CHECK_THROWS_WITH(run(spec), "dp must be ≥ 1, got 0");
    spec.dp = 1;
    spec.costs.passes = {PassCosts{0, 0, 0}};
    CHECK_THROWS_WITH(run(spec), Catch::StartsWith("every pass takes no time"));
    spec.costs.passes = {PassCosts{1e308, 1e308, 1e308}};
    CHECK_THROWS_WITH(run(spec), Catch::StartsWith("the iteration time is not a finite number"));
    // Subnormal times: microbatches per time unit overflow to infinity.
    spec.costs.passes = {PassCosts{1e-320, 1e-320, 1e-320}};
    CHECK_THROWS_WITH(run(spec), Catch::StartsWith("the pass times and latencies are too small"));
    spec.costs.passes = {PassCosts{1e-300, 1e-300, 1e-300}};
    CHECK(std::isfinite(run(spec).metrics.throughput));
}

TEST_CASE(
    "pass times too far apart to keep the short ones are refused — far apart ones that "
    "keep them run exactly",
    "[analysis]") {
    PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.generator = {4, 8, 0, 0};
    // A 1e30 stage beside unit ones: at 1e30 a unit op rounds away (busy 0, bubble 100 %).
    spec.costs.passes = {{1e30, 1e30, 1e30}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    CHECK_THROWS_WITH(run(spec),
                      "the times are too far apart to compute with: the shortest "
                      "pass time, latency (--comm or the cluster's) or all-to-all, 1, would "
                      "round away beside 16 ops of "
                      "1e+30 on one device (doubles keep about 16 digits); keep the "
                      "longest within about 2.81e+11 times the shortest");
    // A latency counts among the times.
    spec.costs.passes = {{1, 1, 1}};
    spec.comm_latency = 1e-20;
    CHECK_THROWS_WITH(run(spec), Catch::StartsWith("the times are too far apart"));
    // So does DualPipe's all-to-all: at 1e30 the unit passes rounded away unnoticed.
    spec.comm_latency = 0;
    spec.schedule = "dualpipe";
    spec.all_to_all = 1e30;
    CHECK_THROWS_WITH(run(spec), Catch::StartsWith("the times are too far apart"));
    spec.all_to_all = 0;
    spec.schedule = "1f1b";
    // 1e9 apart: every op keeps its length exactly (integers below 2^53), device 1 busy
    // 8 microbatches × (F + B + W) = 24.
    spec.comm_latency = 0;
    spec.costs.passes = {{1e9, 1e9, 1e9}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    const Analysis a = run(spec);
    CHECK(a.metrics.devices[1].busy == 24);
    CHECK(a.metrics.devices[0].busy == 24e9);
    CHECK(a.metrics.bubble_rate < 1);
}

TEST_CASE("the cluster workload carries the collectives the analytic pass times include",
          "[analysis][models]") {
    ModelSpec m = model_spec("zb-6.2b", 2);
    m.workload.tp = 4;
    m.workload.sequence_parallel = false;
    m.workload.recompute = pipesim::models::Recompute::full;
    const ModelAnalysis plan = plan_model(m, 4);
    const Schedule s = generate_schedule("1f1b", GeneratorOptions{4, 4, 1, 0});
    const simgrid::SimWorkload w = workload_from_plan(plan.plan, s, 4, /*zero_stage=*/1);
    // One collective as the analytic engine times it (models/roofline.hpp).
    const double one = pipesim::models::tp_allreduce_seconds(plan.gpu, plan.plan.tp_comm.bytes, 4);
    REQUIRE(one > 0);
    for (std::size_t i = 0; i < plan.plan.stages.size(); ++i) {
        const auto& stage = plan.plan.stages[i];
        CAPTURE(i, stage.layers);
        // 2 per layer in F, 2 in B and 2 again for the recomputed forward; the embedding's in F
        // on the first stage, the logits' input gradient in B on the last.
        CHECK(w.tp_allreduces_forward[i] == 2 * stage.layers + (i == 0 ? 1 : 0));
        CHECK(w.tp_allreduces_backward[i] == 4 * stage.layers + (i == 3 ? 1 : 0));
        CHECK(w.tp_allreduces_forward[i] * one == Approx(stage.tp_comm_times.forward));
        CHECK(w.tp_allreduces_backward[i] * one == Approx(stage.tp_comm_times.backward_input));
        // Megatron's scatter/gather: each of the t GPUs sends s·b·h·2/t bytes.
        CHECK(w.message_bytes[i] == Approx(2.0 * 1024 * 2 * 4096 / 4));
    }
    // The distributed optimizer all-gathers bf16 parameters after reduce-scattering fp32
    // gradients: half the bytes.
    REQUIRE(w.param_gather_bytes.size() == 4);
    for (std::size_t d = 0; d < 4; ++d)
        CHECK(w.param_gather_bytes[d] == Approx(w.gradient_bytes[d] / 2));
}

TEST_CASE(
    "with tensor parallelism each GPU reduces its own shard's gradients, and the rates "
    "count the reduction",
    "[analysis][simgrid]") {
    PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.generator = {1, 2, 0, 0};
    spec.costs.model = model_spec("zb-1.5b", 1);
    spec.dp = 2;
    spec.tp = 2;
    const double nic = 1e10;
    const std::string result = run_in_child([&] {
        SimGridEngine engine;
        engine.cluster = instant_cluster(2);
        engine.cluster.nodes = {NodeGroup{2, "a100-80gb", 0}};
        engine.cluster.nic = LinkSpec{nic, 0};
        engine.cluster.nic_per_gpu = true;
        engine.options.overlap_grad_reduce = false;
        const Analysis a = run(spec, engine);
        return fmt::format("{:.17g} {:.17g} {:.17g} {:.17g} {:.17g}",
                           a.cluster->result.grad_reduce_time, a.iteration_time, a.metrics.makespan,
                           a.model->samples_per_second, a.model->optimizer_seconds);
    });
    INFO(result);
    double reduce = 0, iteration = 0, makespan = 0, samples = 0, optimizer = 0;
    REQUIRE(std::sscanf(result.c_str(), "%lf %lf %lf %lf %lf", &reduce, &iteration, &makespan,
                        &samples, &optimizer) == 5);
    // Each GPU holds params/t and all-reduces its fp32 gradients with its peer in the other
    // node: 2(n−1)/n · 4·params/t bytes through its NIC, n = 2.
    const ModelAnalysis plan = plan_model(*spec.costs.model, 1);
    ModelSpec sharded = *spec.costs.model;
    sharded.workload.tp = 2;
    const double params = plan_model(sharded, 1).plan.stages[0].params;
    CHECK(params == Approx(plan.plan.stages[0].params / 2).epsilon(0.01));
    CHECK(reduce == Approx(4 * params / nic).epsilon(1e-6));
    CHECK(iteration == Approx(makespan + reduce).epsilon(1e-9));
    // Samples over the step: the iteration with its reduction, then the optimizer step.
    CHECK(samples == Approx(2.0 * 2 / (iteration + optimizer)).epsilon(1e-9));
}

TEST_CASE("a device's memory curve never dips below nothing", "[analysis][metrics]") {
    // M_W = 0.1: B releases 0.9 of M_B and W 0.1, which in doubles need not add up to 1. The
    // curve ended at -2.8e-17 after the last W (a negative counter in traces).
    PipelineSpec spec;
    spec.schedule = "zb-h1";
    spec.generator = {2, 4, 0, 0};
    spec.costs.mem_w_ratio = 0.1;
    const Analysis a = run(spec);
    for (int d = 0; d < 2; ++d) {
        const auto curve = memory_over_time(a.timeline, a.memory, d);
        REQUIRE(!curve.empty());
        for (const MemoryPoint& point : curve)
            CHECK(point.activation >= 0);
        CHECK(curve.back().activation == 0);
    }
}

TEST_CASE("a huge latency's coarse times are not read as communication",
          "[analysis][time-budget]") {
    // At a makespan of 1e8 s an op's end − start is exact to 2e-8 s: the busy time summed op
    // by op differed from the kernels by that, shown as negative communication.
    PipelineSpec spec;
    spec.schedule = "gpipe";
    spec.generator = {4, 8, 0, 0};
    spec.comm_latency = 16777217;
    ModelSpec model;
    model.model = "cm-21b";
    model.gpu = "a100-40gb";
    model.workload.microbatch = 2;
    spec.costs.model = model;
    const Analysis a = run(spec);
    const TimeBudget b = time_budget(a);
    for (const DeviceTime& t : b.devices)
        CHECK(t.communication == 0);
}

TEST_CASE("full recomputation with a split backward says its peak memory is a lower bound",
          "[analysis][models]") {
    const auto warned = [](const char* schedule, models::Recompute recompute) {
        PipelineSpec spec;
        spec.schedule = schedule;
        spec.generator = {4, 8, 0, 0};
        spec.costs.model = model_spec("zb-1.5b", 1);
        spec.costs.model->workload.recompute = recompute;
        const Analysis a = run(spec);
        return std::any_of(a.warnings.begin(), a.warnings.end(), [](const std::string& w) {
            return w.find("peak memory is a lower bound") != std::string::npos;
        });
    };
    CHECK(warned("zb-h1", models::Recompute::full));
    CHECK(warned("zb-v", models::Recompute::full));
    CHECK_FALSE(warned("1f1b", models::Recompute::full));  // B and W fused: counted in full
    CHECK_FALSE(warned("zb-h1", models::Recompute::selective));
    CHECK_FALSE(warned("zb-h1", models::Recompute::none));
}

TEST_CASE("messages of no bytes take the links' latency in the cluster simulation",
          "[analysis][simgrid]") {
    // Links of no transfer time but a 1 s latency, messages of no bytes (no model): every
    // message arrives 1 s after it is sent, so the simulation is the replay with --comm 1.
    // SimGrid handed some such messages over at once, as the receiver became free.
    for (const char* schedule : {"1f1b", "dualpipe", "interleaved-1f1b", "zb-h2"}) {
        PipelineSpec spec;
        spec.schedule = schedule;
        spec.generator = {std::string_view(schedule) == "zb-h2" ? 4 : 2, 4, 0, 0};
        spec.comm_latency = 1;
        const double replayed = run(spec).metrics.makespan;
        spec.comm_latency = 0;
        const std::string simulated = run_in_child([&] {
            SimGridEngine engine;
            engine.cluster = instant_cluster(8);
            engine.cluster.intra_node.latency = 1;
            engine.cluster.nic.latency = 1;
            return fmt::format("{:.17g}", run(spec, engine).metrics.makespan);
        });
        INFO(schedule);
        CHECK(std::stod(simulated) == Approx(replayed).epsilon(1e-12));
    }
}

TEST_CASE("a warning several schedules give alike is listed once with their names",
          "[analysis][compare]") {
    std::vector<std::string> warnings, texts;
    add_schedule_warning(warnings, texts, "1f1b", "device 0 needs 9 GiB");
    add_schedule_warning(warnings, texts, "zb-h1", "x: device 0 needs 9 GiB");
    add_schedule_warning(warnings, texts, "zb-h1", "device 0 needs 9 GiB");
    add_schedule_warning(warnings, texts, "zb-v", "device 0 needs 9 GiB");
    // A text that ends like another (after ": ") is another warning.
    add_schedule_warning(warnings, texts, "zb-v", "needs 9 GiB");
    // A warning that begins with its schedule's name keeps it once ("interleaved-1f1b:
    // interleaved-1f1b with m = 7 ..." before); a name within a longer word is no such start.
    add_schedule_warning(warnings, texts, "interleaved-1f1b",
                         "interleaved-1f1b with m = 7 in groups of 4 leaves 3");
    add_schedule_warning(warnings, texts, "zb", "zb-v is faster");
    CHECK(warnings ==
          std::vector<std::string>{"1f1b, zb-h1, zb-v: device 0 needs 9 GiB",
                                   "zb-h1: x: device 0 needs 9 GiB", "zb-v: needs 9 GiB",
                                   "interleaved-1f1b with m = 7 in groups of 4 leaves 3",
                                   "zb: zb-v is faster"});
    CHECK(texts.size() == warnings.size());
}

TEST_CASE("a schedule's failure in a comparison names the schedule once", "[analysis][compare]") {
    CHECK(schedule_failed("1f1b", "1f1b: p·v·m = 4096·1·1048576 gives more than 2e+08 ops") ==
          "1f1b: p·v·m = 4096·1·1048576 gives more than 2e+08 ops");
    CHECK(schedule_failed("dualpipe", "needs an even number of devices") ==
          "dualpipe: needs an even number of devices");
    CHECK(schedule_failed("zb", "zb-v: no") == "zb: zb-v: no");
}
