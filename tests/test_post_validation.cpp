// Optimizer post-validation: iterations repeat without a pipeline-wide synchronization, so
// their period is the longest device window. Held to a direct replay of several iterations
// run back to back, to the makespan where no device idles at the ends, and to the SimGrid
// engine.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "child_process.hpp"
#include "cli_runner.hpp"
#include "pipeline_specs.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/cluster.hpp"

using namespace pipesim;
using namespace pipesim::analysis;
using pipesim::test::run_in_child;
using pipesim::test::run_pipesim;

namespace {

// `one` run `k` times in a row as a single schedule: each device's order, then the same
// order again on microbatches shifted by m, and so on. Iteration i+1's ops on a device come
// after all of iteration i's there, and nothing else ties the iterations together: what
// post-validation lets a training run do.
Schedule back_to_back(const Schedule& one, int k) {
    const int m = one.microbatches;
    Schedule many = make_empty_schedule(one.name, one.devices, m * k, one.chunks, one.stage_device);
    for (int i = 0; i < k; ++i) {
        for (int d = 0; d < one.devices; ++d)
            for (Op op : one.device_ops[d]) {
                op.microbatch += i * m;
                many.device_ops[d].push_back(op);
            }
        many.microbatch_stages.insert(many.microbatch_stages.end(), one.microbatch_stages.begin(),
                                      one.microbatch_stages.end());
    }
    return many;
}

AnalyticEngine engine(bool post_validation) {
    AnalyticEngine e;
    e.record_transfers = false;
    e.post_validation = post_validation;
    return e;
}

PipelineSpec unit_spec(const std::string& schedule, int p, int m, PassCosts costs, double comm) {
    PipelineSpec spec;
    spec.schedule = schedule;
    spec.generator.devices = p;
    spec.generator.microbatches = m;
    spec.costs.passes = {costs};
    spec.comm_latency = comm;
    return spec;
}

}  // namespace

TEST_CASE("with post-validation, each further iteration run back to back adds the period",
          "[analysis][post-validation]") {
    const std::string schedule = GENERATE(as<std::string>{}, "1f1b", "interleaved-1f1b", "zb-h1",
                                          "zb-h2", "zb-1p", "zb-2p", "zb-v", "v-half");
    const PassCosts costs = GENERATE(PassCosts{1, 1, 1}, PassCosts{1, 1.4, 0.6});
    const double comm = GENERATE(0.0, 0.25);
    CAPTURE(schedule, costs.forward, costs.backward_input, costs.backward_weight, comm);
    const PipelineSpec spec = unit_spec(schedule, 6, 18, costs, comm);
    const Analysis one = run(spec, engine(true));
    REQUIRE(one.post_validation);
    CHECK(one.single_iteration_time == Approx(one.metrics.makespan));
    // The period is the longest device span, never more than one iteration alone.
    double longest_span = 0;
    for (const DeviceMetrics& d : one.metrics.devices)
        longest_span = std::max(longest_span, d.span);
    CHECK(one.iteration_time == Approx(longest_span));
    CHECK(one.iteration_time <= one.single_iteration_time + 1e-12);

    // The independent check: replay 2, 3 and 4 iterations as one schedule; from the second
    // on, each adds exactly the period.
    std::vector<double> makespans;
    for (int k : {2, 3, 4}) {
        PipelineSpec many = spec;
        many.given = back_to_back(one.schedule, k);
        makespans.push_back(run(many, engine(false)).metrics.makespan);
    }
    CHECK(makespans[1] - makespans[0] == Approx(one.iteration_time).epsilon(1e-9));
    CHECK(makespans[2] - makespans[1] == Approx(one.iteration_time).epsilon(1e-9));
}

TEST_CASE("post-validation changes nothing where a device spans the whole iteration",
          "[analysis][post-validation]") {
    // 1F1B: device 0 starts first and ends last (its last backward), so its span is the
    // makespan and the period is one iteration.
    const PipelineSpec spec = unit_spec("1f1b", 4, 12, PassCosts{1, 2, 0}, 0.0);
    const Analysis without = run(spec, engine(false));
    const Analysis with = run(spec, engine(true));
    CHECK(with.iteration_time == Approx(without.iteration_time));
    CHECK_FALSE(without.post_validation);
    // ZB-2p with F = B = W: p − 1 forward times of fill at the start of the last device,
    // and as many of drain at the end of the first: the period is the makespan less p − 1
    // forwards (its steady state is bubble-free: m(F+B+W) per device).
    const int p = 4, m = 12;
    const Analysis zb = run(unit_spec("zb-2p", p, m, PassCosts{1, 1, 1}, 0.0), engine(true));
    CHECK(zb.iteration_time == Approx(3.0 * m));
    CHECK(zb.single_iteration_time == Approx(3.0 * m + (p - 1)));
}

TEST_CASE("post-validation with a model: each device steps on its own after its reduction",
          "[analysis][post-validation][dp]") {
    const PipelineSpec spec = pipesim::test::zb_1_5b_spec("zb-2p", 4, 12, 4);
    AnalyticEngine e = engine(true);
    e.overlap_grad_reduce = false;
    const Analysis a = run(spec, e);
    // Without overlap each device reduces after its own last op (no device waits for the
    // pipeline): its window is its span plus its reduction; the step adds its optimizer step.
    AnalyticEngine synchronized = e;
    synchronized.post_validation = false;
    const Analysis s = run(spec, synchronized);
    REQUIRE(a.grad_reduce_time > 0);
    CHECK(a.single_iteration_time == Approx(s.iteration_time));
    double longest = 0;
    for (const DeviceMetrics& d : a.metrics.devices)
        longest = std::max(longest, d.span);
    CHECK(a.iteration_time > longest);
    CHECK(a.iteration_time <= longest + a.grad_reduce_time + 1e-12);
    CHECK(a.iteration_time < s.iteration_time);
    // The rates divide by the period plus an optimizer step, and no more than the longest.
    CHECK(a.model->step_time > a.iteration_time);
    CHECK(a.model->step_time <= a.iteration_time + a.model->optimizer_seconds + 1e-12);
    CHECK(a.model->samples_per_second > s.model->samples_per_second);
}

TEST_CASE("analyze --post-validation reports the period, and --json its three figures",
          "[cli][post-validation]") {
    const std::string zb = "analyze -s zb-2p -p 4 -m 12 --costs 1,1,1 ";
    const auto json = run_pipesim(zb + "--post-validation --json");
    REQUIRE(json.exit_code == 0);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(j.at("post_validation") == true);
    CHECK(j.at("period").get<double>() == Approx(36));
    CHECK(j.at("single_iteration_time").get<double>() == Approx(39));
    CHECK(j.at("makespan").get<double>() == Approx(39));
    CHECK(j.at("speedup_1f1b").get<double>() == Approx(45.0 / 36));  // 1F1B: (m+p−1)·3
    CHECK(j.at("throughput").get<double>() == Approx(12.0 / 36));    // per period, as compare
    const auto plain = run_pipesim(zb + "--json");
    REQUIRE(plain.exit_code == 0);
    CHECK_FALSE(nlohmann::json::parse(plain.out).contains("post_validation"));
    CHECK(nlohmann::json::parse(plain.out).at("throughput").get<double>() == Approx(12.0 / 39));
    const auto table = run_pipesim(zb + "--post-validation");
    REQUIRE(table.exit_code == 0);
    CHECK_THAT(table.out, Catch::Contains("period                36 unit"));
}

// The SimGrid engine's windows come from its own timeline and reductions; with the cluster's
// transfers and ring steps the two engines agree within 2 % (as without post-validation).
TEST_CASE("analyze and simulate agree on the post-validation period",
          "[analysis][post-validation][simgrid]") {
    const bool overlap = GENERATE(false, true);
    const PipelineSpec spec = pipesim::test::zb_1_5b_spec("zb-2p", 4, 12, 2);
    AnalyticEngine e = engine(true);
    e.overlap_grad_reduce = overlap;
    const Analysis replayed = run(spec, e);
    const std::string result = run_in_child([&] {
        SimGridEngine sim = pipesim::test::ring_simgrid("dgx-a100");
        sim.options.overlap_grad_reduce = overlap;
        sim.options.post_validation = true;
        const Analysis simulated = run(spec, sim);
        return fmt::format("{:.17g} {:.17g}", simulated.iteration_time,
                           simulated.single_iteration_time);
    });
    INFO(result);
    double period = 0, single = 0;
    REQUIRE(std::sscanf(result.c_str(), "%lf %lf", &period, &single) == 2);
    CHECK(replayed.iteration_time == Approx(period).epsilon(0.02));
    CHECK(period < single);
}

TEST_CASE("a straggler's replica does not change the post-validation period",
          "[cli][post-validation][simgrid]") {
    // p 4, t 2, dp 4: GPUs 0, 2, 4 and 6 are stage 0's in replicas 0 to 3. Post-validation
    // took replica 0's windows alone: a straggler in another replica came out 1.417 s, faster
    // than that replica's own iteration (1.515 s), where 1F1B gains nothing.
    const std::string base =
        "simulate -s 1f1b -p 4 -m 8 --model llama3-8b --gpu h100-sxm --mb 1 -t 2 --dp 4 "
        "--cluster dgx-h100 --post-validation --json --straggler ";
    std::vector<double> periods;
    for (const char* gpu : {"0:2", "2:2", "4:2", "6:2"}) {
        const auto r = run_pipesim(base + gpu);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        periods.push_back(j["iteration_time"].get<double>());
        // 1F1B's every device spans its replica's whole iteration: the period is one.
        CHECK(periods.back() == Approx(j["single_iteration_time"].get<double>()).epsilon(1e-9));
    }
    CHECK(periods[1] == Approx(periods[0]).epsilon(1e-9));
    CHECK(periods[2] == Approx(periods[0]).epsilon(1e-9));
    CHECK(periods[3] == Approx(periods[0]).epsilon(1e-9));
}

TEST_CASE("compare --post-validation ranks schedules by their periods", "[cli][post-validation]") {
    // F = B = W = 1, p = 8, m = 24: 1F1B repeats every (m + p − 1)·3 = 93 either way; ZB-2p
    // every 3m = 72 with post-validation, against a single iteration of 3m + p − 1 = 79.
    const auto csv = run_pipesim("compare -s 1f1b,zb-2p -p 8 -m 24 --post-validation --csv");
    REQUIRE(csv.exit_code == 0);
    const auto lines = pipesim::test::lines_of(csv.out);
    REQUIRE(lines.size() == 3);
    CHECK_THAT(lines[0], Catch::StartsWith("schedule,chunks,period,"));
    CHECK_THAT(lines[1], Catch::StartsWith("1f1b,1,93,"));
    CHECK_THAT(lines[2], Catch::StartsWith("zb-2p,1,72,"));
    const auto plain = run_pipesim("compare -s 1f1b,zb-2p -p 8 -m 24 --csv");
    REQUIRE(plain.exit_code == 0);
    CHECK_THAT(pipesim::test::lines_of(plain.out).at(2), Catch::StartsWith("zb-2p,1,79,"));
    // The efficiency over the period the row shows: every device busy 3m = 72 of ZB-2p's 72
    // (it read 72/79, the single iteration's, which the row leaves out), 1F1B 72 of 93.
    const auto j = nlohmann::json::parse(
        run_pipesim("compare -s 1f1b,zb-2p -p 8 -m 24 --post-validation --json").out);
    CHECK(j["schedules"][0]["efficiency"].get<double>() == Approx(72.0 / 93));
    CHECK(j["schedules"][1]["efficiency"].get<double>() == Approx(1.0));
}

TEST_CASE("search --post-validation times candidates by their periods", "[cli][post-validation]") {
    // F = B = W = 1, p = 8, m = 24, cap 8 M_B: ZB-V idles nowhere inside a device's span, so
    // its period is a device's work, 3m = 72 (its single iteration takes 75.5); 1F1B's is 93.
    const auto r = run_pipesim("search -p 8 -m 24 --mem-limit 8 --post-validation --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("post_validation") == true);
    CHECK(j.at("baseline_1f1b_time").get<double>() == Approx(93));
    CHECK(j.at("best").at("period").get<double>() == Approx(72));
    CHECK(j.at("best").at("speedup_1f1b").get<double>() == Approx(93.0 / 72));
    const auto plain = run_pipesim("search -p 8 -m 24 --mem-limit 8 --json");
    REQUIRE(plain.exit_code == 0);
    const auto k = nlohmann::json::parse(plain.out);
    CHECK_FALSE(k.contains("post_validation"));
    CHECK(k.at("best").at("makespan").get<double>() == Approx(75.5));
}
