// Where the step goes: every device's parts add up to the step time, and each part agrees with
// what the plan, the replay and the closed-form reduction say on their own.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "analysis/time_budget.hpp"
#include "cli_runner.hpp"
#include "pipeline_specs.hpp"

using namespace pipesim;
using namespace pipesim::analysis;
using pipesim::test::run_pipesim;
using pipesim::test::zb_1_5b_spec;

namespace {

AnalyticEngine engine(bool post_validation) {
    AnalyticEngine e;
    e.record_transfers = false;
    e.post_validation = post_validation;
    return e;
}

// Every part ≥ 0 and the parts of every device add up to the step time; the shares add up to
// the kernels, which for a device are its passes' computation in the plan.
void check_adds_up(const Analysis& a, const TimeBudget& b) {
    REQUIRE(b.devices.size() == static_cast<std::size_t>(a.schedule.devices));
    CHECK(b.step_time == Approx(a.model->step_time));
    for (const DeviceTime& t : b.devices) {
        CHECK(t.total() == Approx(b.step_time).epsilon(1e-9));
        for (double part : {t.kernels, t.communication, t.pipeline_idle, t.data_parallel,
                            t.optimizer, t.recompute})
            CHECK(part >= 0);
        CHECK(t.recompute <= t.kernels);
        if (b.kernel_shares) CHECK(t.shares[0] + t.shares[1] + t.shares[2] == Approx(t.kernels));
    }
}

}  // namespace

TEST_CASE("a device's time budget adds up to the step time", "[analysis][time-budget]") {
    const std::string schedule =
        GENERATE(as<std::string>{}, "1f1b", "interleaved-1f1b", "zb-h1", "zb-v", "dualpipe");
    const bool post_validation = GENERATE(false, true);
    const int tp = GENERATE(1, 2);
    CAPTURE(schedule, post_validation, tp);
    PipelineSpec spec = zb_1_5b_spec(schedule, 4, 8, 2, tp);
    spec.costs.model->workload.recompute = models::Recompute::selective;
    spec.costs.model->optimizer.distributed = true;
    const Analysis a = run(spec, engine(post_validation));
    const TimeBudget b = time_budget(a);
    check_adds_up(a, b);
    CHECK(b.kernel_shares);
    // Each microbatch's passes through the stages a device holds, summed from the plan.
    for (int d = 0; d < a.schedule.devices; ++d) {
        double passes = 0;
        for (std::size_t s = 0; s < a.model->plan.stages.size(); ++s)
            if (a.schedule.stage_device[s] == d) {
                int through = 0;  // microbatches passing through stage s
                for (int mb = 0; mb < a.schedule.microbatches; ++mb) {
                    const StageRange r = a.schedule.stages_of(mb);
                    if (static_cast<int>(s) >= r.first && static_cast<int>(s) <= r.last) ++through;
                }
                passes += through * a.model->plan.stages[s].times.total();
            }
        CHECK(b.devices[static_cast<std::size_t>(d)].kernels == Approx(passes));
    }
    CHECK(b.all.kernels + b.all.communication + b.all.pipeline_idle + b.all.data_parallel +
              b.all.optimizer ==
          Approx(a.schedule.devices * b.step_time));
}

TEST_CASE("the budget's communication is the plan's exposed collectives, its idle the replay's",
          "[analysis][time-budget]") {
    // 1F1B, TP 2 without overlap: every collective is exposed and lengthens its pass; one
    // iteration without data parallelism ends at the makespan and then steps.
    const int p = 4, m = 6;
    const PipelineSpec spec = zb_1_5b_spec("1f1b", p, m, 1, 2);
    const Analysis a = run(spec, engine(false));
    const TimeBudget b = time_budget(a);
    check_adds_up(a, b);
    for (int d = 0; d < p; ++d) {
        const models::StagePlan& stage = a.model->plan.stages[static_cast<std::size_t>(d)];
        const DeviceTime& t = b.devices[static_cast<std::size_t>(d)];
        CHECK(stage.tp_comm_times.total() > 0);
        CHECK(t.communication == Approx(m * stage.tp_comm_times.total()));
        CHECK(t.kernels == Approx(m * stage.times.total()));
        CHECK(t.pipeline_idle ==
              Approx(a.metrics.makespan - a.metrics.devices[static_cast<std::size_t>(d)].busy));
        CHECK(t.data_parallel == 0);
        CHECK(t.optimizer == Approx(a.model->optimizer_seconds));
        CHECK(t.recompute == 0);
    }
    // Summed over the devices, the idle time is the pipeline's inefficiency.
    CHECK(b.all.pipeline_idle ==
          Approx(p * a.metrics.makespan * (1 - a.metrics.efficiency)).epsilon(1e-9));
}

TEST_CASE("the budget's data-parallel part is the reduction the pipeline leaves exposed",
          "[analysis][time-budget]") {
    // The reduction after the whole pipeline: all of it is exposed, on every device.
    PipelineSpec spec = zb_1_5b_spec("1f1b", 4, 8, 4);
    AnalyticEngine e = engine(false);
    e.overlap_grad_reduce = false;
    const Analysis a = run(spec, e);
    const TimeBudget b = time_budget(a);
    check_adds_up(a, b);
    REQUIRE(a.grad_reduce_time > 0);
    for (const DeviceTime& t : b.devices)
        CHECK(t.data_parallel == Approx(a.iteration_time - a.metrics.makespan));
    CHECK(b.devices.front().data_parallel == Approx(a.grad_reduce_time));
}

TEST_CASE("full recomputation re-runs a middle stage's forward kernels",
          "[analysis][time-budget]") {
    // A middle stage holds no embedding or head: what it recomputes before each B is exactly
    // the forward it ran, so its recomputed seconds equal its F passes' seconds.
    const int p = 4, m = 8;
    PipelineSpec spec = zb_1_5b_spec("1f1b", p, m, 1);
    spec.costs.model->workload.recompute = models::Recompute::full;
    const Analysis a = run(spec, engine(false));
    const TimeBudget b = time_budget(a);
    check_adds_up(a, b);
    for (int d = 1; d < p - 1; ++d) {
        const models::StagePlan& stage = a.model->plan.stages[static_cast<std::size_t>(d)];
        CHECK(b.devices[static_cast<std::size_t>(d)].recompute == Approx(m * stage.times.forward));
    }
    CHECK(b.devices.front().recompute > 0);
}

TEST_CASE("without the operator model the budget has kernels but no shares",
          "[analysis][time-budget]") {
    PipelineSpec spec = zb_1_5b_spec("zb-h1", 4, 8, 1);
    spec.costs.model->efficiency = 0.5;
    const Analysis a = run(spec, engine(false));
    const TimeBudget b = time_budget(a);
    check_adds_up(a, b);
    CHECK_FALSE(b.kernel_shares);
    const nlohmann::ordered_json j = time_budget_json(b);
    CHECK_FALSE(j.at("all").contains("gemm"));
    CHECK(j.at("all").at("kernels").get<double>() == Approx(b.all.kernels));
    CHECK(j.at("devices").size() == 4);
}

TEST_CASE("analyze prints where the step goes and writes it in its JSON", "[cli][time-budget]") {
    const std::string args =
        "analyze -s 1f1b -p 2 -m 4 --model zb-1.5b --gpu a100-80gb --mb 1 -t 2 --dp 2";
    const auto text = run_pipesim(args);
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("where the step goes") != std::string::npos);
    CHECK(text.out.find("memory-bound") != std::string::npos);
    const auto json = run_pipesim(args + " --json");
    REQUIRE(json.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(json.out);
    const nlohmann::json& budget = j.at("time_budget");
    REQUIRE(budget.at("devices").size() == 2);
    const double step = budget.at("step_time").get<double>();
    for (const nlohmann::json& d : budget.at("devices")) {
        CHECK(d.at("communication").get<double>() > 0);  // TP 2, no overlap
        CHECK(d.at("gemm").get<double>() + d.at("attention").get<double>() +
                  d.at("memory_bound").get<double>() ==
              Approx(d.at("kernels").get<double>()));
        CHECK(d.at("kernels").get<double>() + d.at("communication").get<double>() +
                  d.at("pipeline_idle").get<double>() + d.at("data_parallel").get<double>() +
                  d.at("optimizer").get<double>() ==
              Approx(step));
    }
}

TEST_CASE("compare shows where each schedule's step goes", "[cli][time-budget]") {
    const std::string args =
        "compare -s 1f1b,zb-h1 -p 4 -m 8 --model zb-1.5b --gpu a100-80gb --mb 1";
    const auto text = run_pipesim(args);
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("where the step goes") != std::string::npos);
    CHECK(text.out.find("pipeline idle") != std::string::npos);
    // The analytic replay and SimGrid (whose rows come back from a child process).
    for (const std::string& engine : {std::string(), std::string(" --cluster dgx-a100:1")}) {
        CAPTURE(engine);
        const auto json = run_pipesim(args + engine + " --json");
        REQUIRE(json.exit_code == 0);
        const nlohmann::json j = nlohmann::json::parse(json.out);
        std::vector<double> idle;
        for (const nlohmann::json& row : j.at("schedules")) {
            const nlohmann::json& shares = row.at("step_shares");
            double sum = 0;
            for (const auto& [key, share] : shares.items())
                sum += share.get<double>();
            CHECK(sum == Approx(1));
            CHECK(shares.contains("gemm"));
            idle.push_back(shares.at("pipeline_idle").get<double>());
            if (engine.empty()) {
                // One replica, no collectives: the idle share is the pipeline's inefficiency
                // over the iteration, as a share of the step (iteration + optimizer step).
                const double iteration = row.at("iteration_time").get<double>();
                const double step = iteration / (1 - shares.at("optimizer").get<double>());
                CHECK(shares.at("pipeline_idle").get<double>() ==
                      Approx((1 - row.at("efficiency").get<double>()) * iteration / step));
            }
        }
        // Zero Bubble's H1 fills most of 1F1B's bubble.
        REQUIRE(idle.size() == 2);
        CHECK(idle[1] < idle[0]);
    }
}

TEST_CASE("on other GPUs than the costs', or with a straggler, the kernels are the time they took",
          "[cli][time-budget][simgrid]") {
    // No tensor parallelism, so a pass is nothing but kernels: each device's kernel seconds
    // must be its simulated busy time. A100 costs on H100 nodes ran about 3.2 times faster
    // (the budget had 168 % GEMMs and −125 % communication), a straggler 2 times slower (the
    // slowdown was billed as communication).
    for (const std::string& flags :
         {std::string("--gpu a100-80gb --cluster dgx-h100:1"),
          std::string("--gpu h100-sxm --cluster dgx-h100:1 --straggler 1:2"),
          std::string("--gpu h100-sxm --cluster dgx-h100:1 --straggler 0:1.5")}) {
        CAPTURE(flags);
        const auto r =
            run_pipesim("simulate -s 1f1b -p 2 -m 4 --model zb-1.5b --mb 1 --json " + flags);
        REQUIRE(r.exit_code == 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        const nlohmann::json& devices = j.at("time_budget").at("devices");
        REQUIRE(devices.size() == 2);
        for (std::size_t d = 0; d < 2; ++d) {
            CHECK(devices[d].at("kernels").get<double>() ==
                  Approx(j.at("busy")[d].get<double>()).epsilon(1e-9));
            CHECK(devices[d].at("communication").get<double>() >= 0);
        }
        CHECK(j.at("mfu").get<double>() < 1);
    }
    // MFU counts the peak of the GPUs that ran: the same run's model FLOPs per second, over
    // the H100's 989.4 TFLOP/s instead of the A100's 312.
    const auto on_h100 = nlohmann::json::parse(
        run_pipesim("simulate -s 1f1b -p 2 -m 4 --model zb-1.5b --mb 1 --json --gpu a100-80gb "
                    "--cluster dgx-h100:1")
            .out);
    const double flops_per_second = on_h100.at("mfu").get<double>() * 2 * 989.4e12;
    const double samples = on_h100.at("samples_per_second").get<double>();
    // zb-1.5b's model FLOPs per sample, as analyze gives them on the A100: MFU × GPUs × peak
    // / samples per second.
    const auto on_a100 = nlohmann::json::parse(
        run_pipesim("analyze -s 1f1b -p 2 -m 4 --model zb-1.5b --mb 1 --json --gpu a100-80gb").out);
    const double per_sample = on_a100.at("mfu").get<double>() * 2 * 312e12 /
                              on_a100.at("samples_per_second").get<double>();
    CHECK(flops_per_second / samples == Approx(per_sample).epsilon(1e-9));
}
