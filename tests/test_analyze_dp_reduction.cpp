// The analytic engine's data-parallel gradient reduction: a ring over each device's rail in
// closed form, held to hand-computed figures and to the SimGrid engine's simulated reduction.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/grad_reduce.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "child_process.hpp"
#include "cli_runner.hpp"
#include "models/gpu.hpp"
#include "models/transformer.hpp"
#include "pipeline_specs.hpp"

using namespace pipesim;
using namespace pipesim::analysis;
using pipesim::test::run_in_child;
using pipesim::test::run_pipesim;

namespace {

// NVIDIA's datasheet and nccl-tests figures the closed form runs at (models/src/gpu.cpp):
// A100's all-reduce bus bandwidth inside a DGX node, and its 200 Gb/s NIC.
constexpr double a100_bus = 200e9;
constexpr double a100_nic = 200e9 / 8;

PipelineSpec dp_spec(int dp, int tp, int p = 4) {
    return pipesim::test::zb_1_5b_spec("1f1b", p, 8, dp, tp);
}

AnalyticEngine overlapped(bool overlap, bool record_ops = false) {
    AnalyticEngine engine;
    engine.record_ops = record_ops;
    engine.record_transfers = false;
    engine.overlap_grad_reduce = overlap;
    return engine;
}

// The fp32 gradient bytes of each device's GPU: 4 bytes per parameter of its stages.
std::vector<double> device_gradient_bytes(const Analysis& a) {
    std::vector<double> bytes(static_cast<std::size_t>(a.schedule.devices), 0.0);
    for (std::size_t s = 0; s < a.model->plan.stages.size(); ++s)
        bytes[static_cast<std::size_t>(a.schedule.stage_device[s])] +=
            4.0 * a.model->plan.stages[s].params;
    return bytes;
}

double largest(const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
}

}  // namespace

TEST_CASE("dp=4 without overlap adds the ring all-reduce 2(n-1)/n S/B at the NVLink bus rate",
          "[analysis][dp]") {
    const Analysis one = run(dp_spec(1, 1), overlapped(false));
    const Analysis four = run(dp_spec(4, 1), overlapped(false));
    const std::vector<double> bytes = device_gradient_bytes(four);
    // The devices together hold every parameter once (t = 1), and the last stage its own copy
    // of the tied embedding matrix (as Megatron-LM keeps it there).
    double total = 0;
    for (double b : bytes)
        total += b;
    const auto& config = four.model->config;
    REQUIRE(config.tied_embeddings);
    const double embedding = static_cast<double>(config.vocab) * config.hidden;
    CHECK(total == Approx(4.0 * (models::total_params(config) + embedding)).epsilon(1e-9));
    // Four GPUs of one node (t·dp = 4 ≤ 8): the ring moves 2·3/4 of S at the bus bandwidth,
    // after the pipeline; the slowest device (the most parameters) sets the iteration.
    const double reduce = 2.0 * 3 / 4 * largest(bytes) / a100_bus;
    CHECK(four.metrics.makespan == Approx(one.metrics.makespan).epsilon(1e-12));
    CHECK(four.grad_reduce_time == Approx(reduce).epsilon(1e-9));
    CHECK(four.iteration_time == Approx(one.metrics.makespan + reduce).epsilon(1e-9));
    // Throughput is over the longer iteration (and the optimizer step): 4 replicas' samples.
    CHECK(four.model->samples_per_second ==
          Approx(4 * 8 * four.model->plan.samples_per_microbatch /
                 (one.metrics.makespan + reduce + four.model->optimizer_seconds))
              .epsilon(1e-9));
}

TEST_CASE("16-bit gradients halve the ring's bytes and two of the 18 bytes per parameter",
          "[analysis][dp]") {
    PipelineSpec half = dp_spec(4, 1);
    half.costs.model->optimizer.grad_bytes = 2;
    const Analysis fp32 = run(dp_spec(4, 1), overlapped(false));
    const Analysis fp16 = run(half, overlapped(false));
    std::vector<double> bytes = device_gradient_bytes(fp32);
    // The same parameters per device, 2 bytes each: the ring of the dp=4 case above.
    CHECK(fp16.grad_reduce_time ==
          Approx(2.0 * 3 / 4 * largest(bytes) / 2 / a100_bus).epsilon(1e-9));
    for (std::size_t s = 0; s < fp16.model->plan.stages.size(); ++s)
        CHECK(fp16.model->plan.stages[s].static_bytes ==
              Approx(16 * fp16.model->plan.stages[s].params).epsilon(1e-12));
    // Fused accumulation into 16-bit gradients moves fewer bytes in W, never more.
    CHECK(fp16.metrics.makespan <= fp32.metrics.makespan);
}

TEST_CASE("dp=1 has no reduction: the iteration is the makespan and the JSON has no such field",
          "[analysis][dp]") {
    const PipelineSpec spec = dp_spec(1, 1);
    const Analysis a = run(spec, overlapped(true));
    CHECK(a.grad_reduce_time == 0);
    CHECK(a.iteration_time == a.metrics.makespan);
    const auto j = analysis_json(a, spec);
    CHECK_FALSE(j.contains("grad_reduce_time"));
    const Analysis dp = run(dp_spec(2, 1), overlapped(true));
    CHECK(analysis_json(dp, dp_spec(2, 1))["grad_reduce_algorithm"] == "ring");
}

TEST_CASE("the overlapped reduction starts with each device's last W or BW", "[analysis][dp]") {
    const Analysis late = run(dp_spec(4, 1), overlapped(false));
    const Analysis early = run(dp_spec(4, 1), overlapped(true, /*record_ops=*/true));
    CHECK(early.grad_reduce_time == Approx(late.grad_reduce_time).epsilon(1e-12));
    CHECK(early.iteration_time >= early.metrics.makespan);
    CHECK(early.iteration_time < late.iteration_time);
    // Independently, from the recorded ops: device d's reduction runs from the start of its
    // last backward, over its own bytes.
    const std::vector<double> bytes = device_gradient_bytes(early);
    double end = early.metrics.makespan;
    for (int d = 0; d < early.schedule.devices; ++d) {
        double start = 0;
        for (const TimedOp& op : early.timeline.device_ops[static_cast<std::size_t>(d)])
            if (op.op.pass == Pass::W || op.op.pass == Pass::BW) start = op.start;
        end = std::max(end, start + 1.5 * bytes[static_cast<std::size_t>(d)] / a100_bus);
    }
    CHECK(early.iteration_time == Approx(end).epsilon(1e-9));
}

TEST_CASE("each device's reduction is in the timeline, where the iteration counts it",
          "[analysis][dp]") {
    // The picture, trace and saved timeline of `analyze` showed the makespan's ops alone, while
    // its title and table counted the reduction after them. Now one record per device, from
    // the makespan (or its last backward's start, overlapped) for ring_reduce_seconds().
    for (const bool overlap : {false, true}) {
        const Analysis a = run(dp_spec(4, 1), overlapped(overlap, /*record_ops=*/true));
        const std::vector<double> bytes = device_gradient_bytes(a);
        std::vector<int> seen(static_cast<std::size_t>(a.schedule.devices), 0);
        double last = 0;
        for (const Transfer& x : a.timeline.transfers) {
            REQUIRE(x.kind == TransferKind::data_parallel);
            REQUIRE(x.src_device == x.dst_device);
            const auto d = static_cast<std::size_t>(x.src_device);
            ++seen[d];
            double last_backward = 0;
            for (const TimedOp& op : a.timeline.device_ops[d])
                if (op.op.pass == Pass::W || op.op.pass == Pass::BW) last_backward = op.start;
            CHECK(x.start == Approx(overlap ? last_backward : a.metrics.makespan).epsilon(1e-12));
            CHECK(x.end - x.start == Approx(1.5 * bytes[d] / a100_bus).epsilon(1e-9));
            CHECK(x.bytes == Approx(bytes[d]).epsilon(1e-12));
            last = std::max(last, x.end);
        }
        CHECK(seen == std::vector<int>(seen.size(), 1));
        CHECK(last == Approx(a.iteration_time).epsilon(1e-12));
    }
    // A moved parameter all-gather runs from the iteration's start; without ops recorded,
    // nothing is.
    PipelineSpec sharded = dp_spec(4, 1);
    sharded.costs.model->optimizer.distributed = true;
    AnalyticEngine gather = overlapped(true, /*record_ops=*/true);
    gather.overlap_param_gather = true;
    const Analysis moved = run(sharded, gather);
    int at_start = 0;
    for (const Transfer& x : moved.timeline.transfers)
        at_start += x.start == 0 && x.end == Approx(moved.param_gather_time).epsilon(0.5) ? 1 : 0;
    CHECK(at_start == moved.schedule.devices);
    CHECK(run(dp_spec(4, 1), overlapped(false)).timeline.transfers.empty());
}

TEST_CASE(
    "a rail across nodes runs one ring per NIC, and dist-opt reduce-scatters then all-gathers",
    "[analysis][dp]") {
    // dp = 16, t = 1: 8 of the rail's GPUs per node, 8 rings each through its own NIC.
    const Analysis wide = run(dp_spec(16, 1, 2), overlapped(false));
    const double s = largest(device_gradient_bytes(wide));
    CHECK(wide.grad_reduce_time == Approx(2.0 * 15 / 16 * s / (8 * a100_nic)).epsilon(1e-9));
    // dp = 2, t = 8: one GPU of the rail per node, one NIC.
    const Analysis tall = run(dp_spec(2, 8, 2), overlapped(false));
    CHECK(tall.grad_reduce_time ==
          Approx(2.0 * 1 / 2 * largest(device_gradient_bytes(tall)) / a100_nic).epsilon(1e-9));
    // The distributed optimizer: reduce-scatter of S (fp32) + all-gather of S/2 (bf16 params).
    PipelineSpec sharded = dp_spec(8, 1, 2);
    sharded.costs.model->optimizer.distributed = true;
    const Analysis dist = run(sharded, overlapped(false));
    const double sd = largest(device_gradient_bytes(dist));
    CHECK(dist.grad_reduce_time == Approx(7.0 / 8 * (sd + sd / 2) / a100_bus).epsilon(1e-9));
    CHECK(dist.grad_reduce_time < run(dp_spec(8, 1, 2), overlapped(false)).grad_reduce_time);
}

TEST_CASE("the speed-up over 1F1B compares iterations that both include the reduction",
          "[analysis][dp]") {
    PipelineSpec spec = dp_spec(4, 1);
    spec.schedule = "zb-h1";
    const Analysis zb = run_with_baseline(spec, overlapped(false));
    const Analysis one_f_one_b = run(dp_spec(4, 1), overlapped(false));
    CHECK(one_f_one_b.iteration_time > one_f_one_b.metrics.makespan);
    CHECK(zb.baseline_1f1b_time == Approx(one_f_one_b.iteration_time).epsilon(1e-12));
    CHECK(zb.speedup_1f1b == Approx(one_f_one_b.iteration_time / zb.iteration_time));
}

// SimGrid adds each step's link latency (2 µs NVLink, 5 µs NIC on the preset): 2(n−1) = 30
// steps, well under 1 % of a 33 ms reduction; the makespans differ by the pipeline transfers
// SimGrid times on the links (< 1 %). Hence 1 % on the reduction, 2 % on the iteration.
TEST_CASE("analyze's reduction agrees with simulate's ring on an idle DGX A100 cluster",
          "[analysis][dp][simgrid]") {
    const bool overlap = GENERATE(false, true);
    const PipelineSpec spec = dp_spec(16, 1, 2);
    const Analysis replayed = run(spec, overlapped(overlap));
    const std::string result = run_in_child([&] {
        SimGridEngine engine = pipesim::test::ring_simgrid("dgx-a100");
        engine.options.overlap_grad_reduce = overlap;
        const Analysis simulated = run(spec, engine);
        return fmt::format("{:.17g} {:.17g}", simulated.grad_reduce_time, simulated.iteration_time);
    });
    INFO(result);
    double reduce = 0, iteration = 0;
    REQUIRE(std::sscanf(result.c_str(), "%lf %lf", &reduce, &iteration) == 2);
    CHECK(replayed.grad_reduce_time == Approx(reduce).epsilon(0.01));
    CHECK(replayed.iteration_time == Approx(iteration).epsilon(0.02));
    CHECK(replayed.iteration_time > replayed.metrics.makespan);
}

TEST_CASE("a ring long enough for link latency to matter is said to leave it out",
          "[analysis][dp]") {
    // At dp 65,536 the closed form gave 0.07 s where the ring's steps alone wait 0.66 s.
    auto latency_warnings = [](const Analysis& a) {
        return std::count_if(a.warnings.begin(), a.warnings.end(), [](const std::string& w) {
            return w.find("without link latency") != std::string::npos;
        });
    };
    const Analysis short_ring = run(dp_spec(16, 1), overlapped(false));
    CHECK(short_ring.grad_reduce_time > 0);
    CHECK(latency_warnings(short_ring) == 0);
    const Analysis long_ring = run(dp_spec(4096, 1), overlapped(false));
    REQUIRE(latency_warnings(long_ring) == 1);
    // 2(n − 1) steps of 5 µs, against the bandwidth's time.
    const double added = 2.0 * 4095 * 5e-6;
    CHECK(added > 0.1 * long_ring.grad_reduce_time);
    const auto warning = std::find_if(
        long_ring.warnings.begin(), long_ring.warnings.end(),
        [](const std::string& w) { return w.find("without link latency") != std::string::npos; });
    CHECK_THAT(*warning, Catch::StartsWith("the gradient reduction's ring of 4096 GPUs") &&
                             Catch::Contains(fmt::format("its 8190 steps at 5 µs each would add "
                                                         "{:.3g} s",
                                                         added)));
}

TEST_CASE("analyze refuses --overlap-grad-reduce without a reduction, naming the flag",
          "[analysis][dp][cli]") {
    const auto r = run_pipesim(
        "analyze -s 1f1b -p 2 -m 4 --model zb-1.5b --gpu a100-80gb "
        "--mb 1 --no-overlap-grad-reduce");
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "pipesim analyze: --no-overlap-grad-reduce needs data or context parallelism (--dp D "
          "or --cp C above 1): there is no gradient reduction\n");
    const auto ok = run_pipesim(
        "analyze -s 1f1b -p 2 -m 4 --model zb-1.5b --gpu a100-80gb "
        "--mb 1 --dp 2 --no-overlap-grad-reduce --json");
    REQUIRE(ok.exit_code == 0);
    CHECK(ok.out.find("\"grad_reduce_time\"") != std::string::npos);
    // The exposed reduction lowers the microbatch throughput with the samples per second.
    const auto j = nlohmann::json::parse(ok.out);
    const double iteration = j["iteration_time"].get<double>();
    REQUIRE(iteration > j["makespan"].get<double>());
    CHECK(j["throughput"].get<double>() == Approx(4 / iteration).epsilon(1e-12));
}

TEST_CASE(
    "an overlapped parameter all-gather leaves the reduction and hides behind the first "
    "forward",
    "[analysis][dp]") {
    // Two members in one node: a collective moves (n − 1)/n of its buffer at the bus rate.
    const models::GpuSpec& a100 = models::find_gpu("a100-80gb");
    const Rail rail = gradient_rail(1, 2);
    const std::vector<double> gradient = {4e9, 4e9}, gather = {2e9, 2e9};
    const std::vector<double> last_w = {0.5, 0.6}, first_f = {0.002, 0.01};
    const double scatter = 4e9 / 2 / a100_bus, all_gather = 2e9 / 2 / a100_bus;
    // After the pipeline: reduce-scatter and all-gather back to back, hidden by the makespan.
    const GradientReduction both =
        gradient_reduction(a100, rail, gradient, gather, last_w, 1.0, true);
    CHECK(both.longest == Approx(scatter + all_gather));
    CHECK(both.gather_exposed == 0);
    CHECK(both.iteration_time == Approx(1.0));
    // Moved: the end reduce-scatters only, and device 0's first forward (2 ms) hides 2 of the
    // gather's 5 ms, device 1's (10 ms) all of it; the iteration starts 3 ms late.
    const GradientReduction moved =
        gradient_reduction(a100, rail, gradient, gather, last_w, 1.0, true, first_f, true);
    CHECK(moved.longest == Approx(scatter));
    CHECK(moved.gather_seconds == Approx(all_gather));
    CHECK(moved.gather_exposed == Approx(all_gather - 0.002));
    CHECK(moved.iteration_time == Approx(1.0 + all_gather - 0.002));
    // Never longer than the gather after the reduce-scatter at the end of a pipeline that
    // leaves it exposed (makespan 0.5: both devices' reductions end the iteration).
    const GradientReduction late =
        gradient_reduction(a100, rail, gradient, gather, last_w, 0.5, false);
    const GradientReduction late_moved =
        gradient_reduction(a100, rail, gradient, gather, last_w, 0.5, false, first_f, true);
    CHECK(late.iteration_time == Approx(0.5 + scatter + all_gather));
    CHECK(late_moved.iteration_time == Approx(0.5 + scatter + all_gather - 0.002));
    CHECK(late_moved.iteration_time <= late.iteration_time);
}

TEST_CASE("analyze and simulate agree on an overlapped parameter all-gather",
          "[analysis][dp][simgrid]") {
    // 64 replicas across DGX A100 nodes, the gradients reduced after the pipeline: moving the
    // all-gather to the first forward takes it off the end of the iteration, less what that
    // forward does not hide, in both engines.
    PipelineSpec spec = dp_spec(64, 1, 2);
    spec.generator.microbatches = 2;
    spec.costs.model->optimizer.distributed = true;
    AnalyticEngine engine = overlapped(false);
    const Analysis after = run(spec, engine);
    engine.overlap_param_gather = true;
    const Analysis moved = run(spec, engine);
    REQUIRE(moved.param_gather_time > 0);
    CHECK(moved.param_gather_exposed < moved.param_gather_time);
    CHECK(moved.iteration_time ==
          Approx(after.iteration_time - moved.param_gather_time + moved.param_gather_exposed));
    const auto simulated = [&](bool move) {
        const std::string result = run_in_child([&] {
            SimGridEngine sim = pipesim::test::ring_simgrid("dgx-a100:16");
            sim.options.overlap_grad_reduce = false;
            sim.options.overlap_param_gather = move;
            return fmt::format("{:.17g}", run(spec, sim).iteration_time);
        });
        INFO(result);
        double time = 0;
        REQUIRE(std::sscanf(result.c_str(), "%lf", &time) == 1);
        return time;
    };
    const double before = simulated(false), after_moving = simulated(true);
    CHECK(after_moving < before);
    CHECK(after_moving == Approx(moved.iteration_time).epsilon(0.02));
    CHECK(before == Approx(after.iteration_time).epsilon(0.02));
}

TEST_CASE("moving the parameter all-gather needs an optimizer that gathers parameters",
          "[analysis][dp][cli]") {
    const std::string model = "analyze -s 1f1b -p 2 -m 4 --model zb-1.5b --gpu a100-80gb --mb 1 ";
    const auto plain = run_pipesim(model + "--dp 2 --overlap-param-gather");
    CHECK(plain.exit_code == 2);
    CHECK_THAT(plain.err, Catch::Contains("give --dist-opt or --zero 1|2"));
    const auto zero3 = run_pipesim(model + "--dp 2 --zero 3 --overlap-param-gather");
    CHECK(zero3.exit_code == 2);
    CHECK_THAT(zero3.err, Catch::Contains("ZeRO-3 gathers the parameters before every pass"));
    const auto ok = run_pipesim(model + "--dp 2 --dist-opt --overlap-param-gather --json");
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("\"param_gather_time\"") != std::string::npos);
}
