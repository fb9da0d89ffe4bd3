// ZB-1P and ZB-2P planned with real pass times: the Zero Bubble paper's published bubble rates
// (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Table 5, computed there from the
// profiled times of its Table 9), the round-based heuristic's guarantees on random costs, and
// the planning options' errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "analysis/run.hpp"
#include "schedules/auto_schedule.hpp"
#include "schedules/metrics.hpp"
#include "schedules/phases.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/replay.hpp"

#include "random_costs.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

struct PaperRow {
    const char* model;
    int p;
    int m;
    double f, b, w, comm;                            // Table 9, ms
    double one_f_one_b, zb_h1, zb_h2, zb_1p, zb_2p;  // Table 5 bubble rates
};

// Table 9 (profiled T_F, T_B, T_W, T_comm in ZB-2p runs) next to Table 5's bubble rates.
constexpr PaperRow paper_rows[] = {
    {"1.5B", 8, 24, 18.522, 18.086, 9.337, 0.601, 0.2431, 0.1585, 0.1083, 0.1585, 0.0433},
    {"1.5B", 8, 32, 18.513, 18.086, 9.331, 0.626, 0.1985, 0.1242, 0.0837, 0.1242, 0.0039},
    {"1.5B", 8, 64, 18.546, 18.097, 9.321, 0.762, 0.1240, 0.0674, 0.0444, 0.0674, 0.0026},
    {"6.2B", 8, 24, 29.718, 29.444, 19.927, 0.527, 0.2347, 0.1323, 0.0698, 0.1323, 0.0029},
    {"6.2B", 8, 32, 29.802, 29.428, 19.530, 0.577, 0.1898, 0.1045, 0.0559, 0.1045, 0.0022},
    {"6.2B", 8, 64, 29.935, 29.621, 19.388, 0.535, 0.1091, 0.0554, 0.0294, 0.0554, 0.0010},
    {"14.6B", 16, 48, 11.347, 11.248, 8.132, 0.377, 0.2552, 0.1397, 0.0672, 0.1397, 0.0066},
    {"14.6B", 16, 64, 11.307, 11.254, 8.101, 0.379, 0.2082, 0.1088, 0.0516, 0.1088, 0.0054},
    {"14.6B", 16, 128, 11.325, 11.308, 8.109, 0.378, 0.1251, 0.0576, 0.0266, 0.0576, 0.0028},
    {"28.3B", 32, 96, 10.419, 10.207, 7.715, 0.408, 0.2646, 0.1421, 0.0641, 0.1421, 0.0038},
    {"28.3B", 32, 128, 10.408, 10.204, 7.703, 0.408, 0.2168, 0.1106, 0.0490, 0.1106, 0.0029},
    {"28.3B", 32, 256, 10.402, 10.248, 7.698, 0.460, 0.1352, 0.0594, 0.0257, 0.0594, 0.0018},
};

analysis::Analysis analyze_row(const PaperRow& row, const char* schedule) {
    analysis::PipelineSpec o;
    o.schedule = schedule;
    o.generator = {row.p, row.m, 0, 0};
    o.costs.passes = {PassCosts{row.f, row.b, row.w}};
    o.comm_latency = row.comm;
    // The paper's scheduler counts a W's activations as half of a B's (M_W = M_B / 2).
    o.costs.mem_w_ratio = 0.5;
    return analysis::run(o);
}

// Random per-stage times (test::random_costs), latency and W memory share.
PlanningCosts random_planning(std::mt19937& rng, int stages) {
    PlanningCosts c{test::random_costs(stages, rng, 0.3, 2.0)};
    c.comm_latency = std::uniform_real_distribution<double>(0.0, 0.5)(rng);
    c.w_memory_share = std::uniform_int_distribution<int>(0, 4)(rng) / 4.0;
    return c;
}

// How long a schedule of F, B and W ops runs, timed here without the library's walk: sweeps the
// devices until every op has run, each op starting when its device is free and its inputs
// (the rule written out: F(s−1); F(s) and B(s+1); B(s)) have ended, plus the latency from
// another device. The longest device span and the makespan, as planned_length.
PlannedLength independent_length(const Schedule& s, const PlanningCosts& costs) {
    const int stages = s.stages();
    std::map<std::tuple<Pass, int, int>, double> end;
    auto input = [&](Pass pass, int mb, int stage, int device, double& ready) {
        const auto found = end.find({pass, mb, stage});
        if (found == end.end()) return false;
        const bool remote = s.stage_device[static_cast<std::size_t>(stage)] != device;
        ready = std::max(ready, found->second + (remote ? costs.comm_latency : 0.0));
        return true;
    };
    std::vector<std::size_t> next(static_cast<std::size_t>(s.devices), 0);
    std::vector<double> free(next.size(), 0.0), first(next.size(), -1.0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int d = 0; d < s.devices; ++d) {
            const std::vector<Op>& ops = s.device_ops[static_cast<std::size_t>(d)];
            while (next[d] < ops.size()) {
                const Op& op = ops[next[d]];
                double ready = free[d];
                bool inputs_done = true;
                if (op.pass == Pass::F && op.stage > 0)
                    inputs_done = input(Pass::F, op.microbatch, op.stage - 1, d, ready);
                if (op.pass == Pass::B)
                    inputs_done = input(Pass::F, op.microbatch, op.stage, d, ready) &&
                                  (op.stage + 1 == stages ||
                                   input(Pass::B, op.microbatch, op.stage + 1, d, ready));
                if (op.pass == Pass::W)
                    inputs_done = input(Pass::B, op.microbatch, op.stage, d, ready);
                if (!inputs_done) break;
                const std::size_t k = static_cast<std::size_t>(op.stage);
                const double length = op.pass == Pass::F   ? costs.times.forward[k]
                                      : op.pass == Pass::B ? costs.times.backward_input[k]
                                                           : costs.times.backward_weight[k];
                if (next[d] == 0) first[d] = ready;
                free[d] = ready + length;
                end[{op.pass, op.microbatch, op.stage}] = free[d];
                ++next[d];
                progress = true;
            }
        }
    }
    PlannedLength length;
    double earliest = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < free.size(); ++d) {
        REQUIRE(next[d] == s.device_ops[d].size());
        length.longest_span = std::max(length.longest_span, free[d] - first[d]);
        length.makespan = std::max(length.makespan, free[d]);
        earliest = std::min(earliest, first[d]);
    }
    length.makespan -= earliest;
    return length;
}

}  // namespace

TEST_CASE("the Zero Bubble paper's bubble rates from its profiled times (Tables 5 and 9)",
          "[schedules][auto][paper]") {
    // Published to 4 decimals: a match is a difference below half a unit of the last digit.
    const double published_precision = 5e-5;
    for (const PaperRow& row : paper_rows) {
        CAPTURE(row.model, row.p, row.m);
        const double cap1 = row.p, cap2 = 2.0 * row.p;
        const analysis::Analysis one_p = analyze_row(row, "zb-1p");
        const analysis::Analysis two_p = analyze_row(row, "zb-2p");
        CHECK(one_p.metrics.bubble_rate == Approx(row.zb_1p).margin(published_precision));
        CHECK(two_p.metrics.bubble_rate == Approx(row.zb_2p).margin(published_precision));
        CHECK(one_p.metrics.peak_activation_max <= cap1 + 1e-9);
        CHECK(two_p.metrics.peak_activation_max <= cap2 + 1e-9);
        CHECK(analyze_row(row, "1f1b").metrics.bubble_rate ==
              Approx(row.one_f_one_b).margin(published_precision));
        CHECK(analyze_row(row, "zb-h1").metrics.bubble_rate ==
              Approx(row.zb_h1).margin(published_precision));
        CHECK(analyze_row(row, "zb-h2").metrics.bubble_rate ==
              Approx(row.zb_h2).margin(published_precision));
    }
}

TEST_CASE(
    "every heuristic candidate is valid, keeps the cap, and is timed as an independent ASAP timing",
    "[schedules][auto]") {
    std::mt19937 rng(20241129);
    for (int trial = 0; trial < 60; ++trial) {
        const int p = std::uniform_int_distribution<int>(1, 9)(rng);
        const int m = std::uniform_int_distribution<int>(1, 4 * p + 3)(rng);
        const double cap = std::uniform_int_distribution<int>(1, 3)(rng) * p;
        const PlanningCosts costs = random_planning(rng, p);
        CAPTURE(trial, p, m, cap, costs.comm_latency, costs.w_memory_share);
        const std::vector<PlannedSchedule> candidates =
            zero_bubble_heuristic("h", p, m, costs, cap);
        // With a cap of p or more, the 1F1B-like pattern always fits, so none of the 16 choices
        // fails.
        CHECK(candidates.size() == 16);
        MemoryModel memory = unit_memory_model(p, 1, costs.w_memory_share);
        for (const auto& [s, heuristic_length] : candidates) {
            REQUIRE_FALSE(validate(s).has_value());
            ReplayOptions replay_options;
            replay_options.comm_latency = costs.comm_latency;
            const Metrics metrics = compute_metrics(replay(s, costs.times, replay_options), memory);
            CHECK(metrics.peak_activation_max <= cap + 1e-9);
            // The heuristic's own timing of what it placed, planned_length and the replay all
            // agree with a timing computed here.
            const PlannedLength expected = independent_length(s, costs);
            double longest_span = 0;
            for (const DeviceMetrics& d : metrics.devices)
                longest_span = std::max(longest_span, d.span);
            const PlannedLength length = planned_length(s, costs);
            for (const PlannedLength& timed :
                 {heuristic_length, length, PlannedLength{longest_span, metrics.makespan}}) {
                CHECK(timed.longest_span == Approx(expected.longest_span).epsilon(1e-12));
                CHECK(timed.makespan == Approx(expected.makespan).epsilon(1e-12));
            }
        }
    }
}

TEST_CASE("planned ZB-1P/ZB-2P are never longer than the handcrafted schedule of their cap",
          "[schedules][auto]") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
        const int p = std::uniform_int_distribution<int>(2, 8)(rng);
        const int m = std::uniform_int_distribution<int>(2 * p, 4 * p)(rng);
        GeneratorOptions o{p, m, 0, 0};
        o.planning = random_planning(rng, p);
        CAPTURE(trial, p, m);
        const PlannedLength one_p = planned_length(generate_schedule("zb-1p", o), o.planning);
        const PlannedLength two_p = planned_length(generate_schedule("zb-2p", o), o.planning);
        const PlannedLength h1 = planned_length(generate_schedule("zb-h1", o), o.planning);
        const PlannedLength h2 = planned_length(generate_schedule("zb-h2", o), o.planning);
        CHECK_FALSE(h1 < one_p);
        CHECK_FALSE(h2 < two_p);
    }
}

TEST_CASE("ZB-1P with unequal stages is as short as the authors' scheduler plans it",
          "[schedules][auto]") {
    // The authors' scheduler (sail-sg/zero-bubble-pipeline-parallelism, scheduler/zb.py, run
    // outside the project with mem_f = 2, mem_b = mem_w = −1 and a cap of p) plans these with
    // longest device spans of 420 and 210; without its rule of clearing the first stage's W's
    // once its forwards are done, pipesim's planned 424 and 212.
    const auto span = [](int p, int m, const StageCosts& times) {
        GeneratorOptions o{p, m, 0, 0};
        o.planning = PlanningCosts{times, 1.0, 0.5};
        return planned_length(generate_schedule("zb-1p", o), o.planning).longest_span;
    };
    CHECK(span(7, 28, {{5, 4, 5, 2, 3, 2, 1}, {5, 5, 1, 5, 6, 4, 5}, {4, 3, 3, 3, 5, 4, 3}}) ==
          420);
    CHECK(span(5, 17, {{3, 1, 2, 4, 4}, {5, 4, 5, 4, 1}, {3, 1, 4, 3, 1}}) == 210);
}

TEST_CASE("model-based analysis plans ZB-2P with the model's costs", "[schedules][auto][models]") {
    analysis::PipelineSpec o;
    o.schedule = "zb-2p";
    o.generator = {4, 16, 0, 0};
    analysis::ModelSpec model;
    model.model = "zb-1.5b";
    model.gpu = "a100-80gb";
    model.workload.microbatch = 6;
    o.costs.model = model;
    const analysis::Analysis planned = analysis::run(o);
    // The same costs through an order planned with unit times.
    o.given = generate_schedule("zb-2p", o.generator);
    const analysis::Analysis unit_order = analysis::run(o);
    CHECK(planned.metrics.makespan <= unit_order.metrics.makespan * (1 + 1e-12));
    CHECK(planned.model.has_value());
}

TEST_CASE("bad planning costs are refused with the field named", "[schedules][auto][errors]") {
    GeneratorOptions o{2, 4, 0, 0};
    o.planning.times.forward = {1, 1};
    o.planning.times.backward_input = {1, 1};
    o.planning.times.backward_weight = {1};
    CHECK_THROWS_WITH(generate_schedule("zb-1p", o),
                      "zb-1p: planning costs give 1 W times for p·v = 2 stages");
    o.planning.times.backward_weight = {1, -1};
    CHECK_THROWS_WITH(generate_schedule("zb-1p", o),
                      "zb-1p: planning W time of stage 1 must be finite and ≥ 0, got -1");
    o.planning.times.backward_weight = {1, 1};
    o.planning.comm_latency = -0.5;
    CHECK_THROWS_WITH(generate_schedule("zb-2p", o),
                      "zb-2p: planning latency must be finite and ≥ 0, got -0.5");
    o.planning.comm_latency = 0;
    o.planning.w_memory_share = 1.5;
    CHECK_THROWS_WITH(generate_schedule("zb-2p", o),
                      "zb-2p: the share of activations held until W must be in 0..1, got 1.5");
    GeneratorOptions no_times{2, 4, 0, 0};
    no_times.planning.comm_latency = 1;
    CHECK_THROWS_WITH(generate_schedule("zb-2p", no_times),
                      "zb-2p: planning latency or memory share given without pass times");
}

TEST_CASE("pass times of 0 plan: no weight-gradient split, stages holding no layer",
          "[schedules][auto]") {
    // W = 0: nothing to fill the bubbles with, so ZB-1p and ZB-2p take 1F1B's closed form
    // (m + p − 1)(F + B).
    for (const char* name : {"zb-1p", "zb-2p"}) {
        analysis::PipelineSpec spec;
        spec.schedule = name;
        spec.generator = GeneratorOptions{8, 16, 0, 0};
        spec.costs.passes = {PassCosts{1, 1, 0}};
        CAPTURE(name);
        CHECK(analysis::run(spec).metrics.makespan == Approx((16 + 8 - 1) * 2.0));
    }
    // Llama 3 70B with the embedding and the head on stages of their own (no layers: the
    // embedding's B takes no time). Every schedule planned with the model's times is
    // generated, and each is faster than 1F1B.
    const auto iteration = [](const char* name) {
        analysis::PipelineSpec spec;
        spec.schedule = name;
        spec.generator = GeneratorOptions{8, 16, 0, 0};
        spec.tp = 8;
        analysis::ModelSpec m;
        m.model = "llama3-70b";
        m.gpu = "h100-sxm";
        m.partition.first_stage_layers = 0;
        m.partition.last_stage_layers = 0;
        spec.costs.model = m;
        return analysis::run(spec).iteration_time;
    };
    const double one = iteration("1f1b");
    for (const char* name : {"zb-1p", "zb-2p", "v-min", "v-half", "v-zb", "zb-v"}) {
        CAPTURE(name);
        CHECK(iteration(name) < one);
    }
}

TEST_CASE("zb-1p and zb-2p report each step of their planning as a phase", "[schedules][zb]") {
    // A phase is where Python looks for Ctrl-C: at p 512, m 32768 generating zb-2p was one
    // phase of 20 s, and Ctrl-C took as long.
    std::vector<std::string> phases;
    {
        const ReportPhases reporter([&](std::string_view phase) { phases.emplace_back(phase); });
        (void)generate_schedule("zb-2p", {4, 8, 0, 0});
    }
    const auto has = [&](const std::string& phase) {
        return std::find(phases.begin(), phases.end(), phase) != phases.end();
    };
    CHECK(has("generating zb-2p: the heuristic's choice 1 of 16"));
    CHECK(has("generating zb-2p: the greedy list schedule"));
    CHECK(has("generating zb-2p: checking the greedy list schedule"));
    CHECK(has("generating zb-2p: timing the greedy list schedule"));
    CHECK(has("generating zb-2p: ZB-H2, the handcrafted schedule of its cap"));
    CHECK(phases.back() == "generating zb-2p: keeping the shortest");
    // The reporter is this scope's only: once it is gone, none is set.
    CHECK_FALSE(reporting_phases());

    // The greedy list scheduler says how far a long run is, every 2^20 ops placed; what the
    // reporter throws ends it.
    AutoScheduleOptions a;
    a.name = "greedy";
    a.devices = 64;
    a.microbatches = 6000;  // 1,152,000 ops
    a.memory_limit = a.devices;
    int reports = 0;
    const ReportPhases stop([&](std::string_view phase) {
        CHECK(phase == "generating greedy: the greedy list schedule, 9 % placed");
        ++reports;
        throw std::runtime_error("stopped");
    });
    CHECK_THROWS_WITH(auto_schedule(a), "stopped");
    CHECK(reports == 1);
}
