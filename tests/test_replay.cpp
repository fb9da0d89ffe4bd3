// The analytic replay against an independent computation: earliest start times as the
// longest path over the dependency graph, found by brute-force relaxation to a fixed point.
#include <map>
#include <random>
#include <tuple>
#include <utility>

#include <catch2/catch.hpp>

#include "analysis/run.hpp"
#include "random_costs.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

using Key = std::tuple<int, int, int>;  // pass, microbatch, stage

Key key_of(const Op& op) {
    return {static_cast<int>(op.pass), op.microbatch, op.stage};
}

// Earliest start of every op: after the device's previous op, and after each input's end
// plus the latency when the input ran on another device. Relaxes all constraints until
// nothing changes (Bellman-Ford on the DAG of device-order and dependency edges).
std::map<Key, double> longest_path_starts(const Schedule& s, const StageCosts& costs,
                                          double latency) {
    std::map<Key, int> device_of;
    for (int d = 0; d < s.devices; ++d)
        for (const Op& op : s.device_ops[d])
            device_of[key_of(op)] = d;
    auto duration = [&](const Op& op) {
        switch (op.pass) {
            case Pass::F:
                return costs.forward[op.stage];
            case Pass::B:
                return costs.backward_input[op.stage];
            case Pass::W:
                return costs.backward_weight[op.stage];
            case Pass::BW:
                return costs.backward_input[op.stage] + costs.backward_weight[op.stage];
        }
        return 0.0;
    };
    auto inputs = [&](const Op& op) {
        std::vector<Op> in;
        const StageRange range = s.stages_of(op.microbatch);
        if (op.pass == Pass::F && op.stage > range.first)
            in.push_back({Pass::F, op.microbatch, op.stage - 1});
        if (op.pass == Pass::B || op.pass == Pass::BW) {
            in.push_back({Pass::F, op.microbatch, op.stage});
            if (op.stage < range.last) {
                const Op b{Pass::B, op.microbatch, op.stage + 1};
                in.push_back(
                    device_of.count(key_of(b)) ? b : Op{Pass::BW, op.microbatch, op.stage + 1});
            }
        }
        if (op.pass == Pass::W) in.push_back({Pass::B, op.microbatch, op.stage});
        return in;
    };
    std::map<Key, double> start;
    for (const auto& [k, d] : device_of)
        start[k] = 0.0;
    for (bool changed = true; changed;) {
        changed = false;
        for (int d = 0; d < s.devices; ++d) {
            const auto& ops = s.device_ops[d];
            for (std::size_t i = 0; i < ops.size(); ++i) {
                double earliest = 0.0;
                if (i > 0) earliest = start[key_of(ops[i - 1])] + duration(ops[i - 1]);
                for (const Op& in : inputs(ops[i])) {
                    const double arrival = start[key_of(in)] + duration(in) +
                                           (device_of[key_of(in)] != d ? latency : 0.0);
                    earliest = std::max(earliest, arrival);
                }
                if (earliest > start[key_of(ops[i])] + 1e-12) {
                    start[key_of(ops[i])] = earliest;
                    changed = true;
                }
            }
        }
    }
    return start;
}

StageCosts random_costs(int stages, std::mt19937& rng) {
    return test::random_costs(stages, rng, 0.2, 3.0);
}

}  // namespace

TEST_CASE("replay equals the brute-force longest path for every generator, with latency",
          "[sim][replay]") {
    std::mt19937 rng(20261129);
    struct Shape {
        const char* name;
        int p, m, v;
    };
    const Shape shapes[] = {{"gpipe", 4, 6, 1},
                            {"1f1b", 4, 8, 1},
                            {"1f1b", 5, 3, 1},
                            {"zb-h1", 4, 8, 1},
                            {"zb-h1", 3, 2, 1},
                            {"zb-h2", 4, 9, 1},
                            {"zb-h2", 3, 4, 1},
                            {"interleaved-1f1b", 4, 8, 2},
                            {"interleaved-1f1b", 3, 6, 3},
                            {"interleaved-1f1b", 4, 3, 2}};
    for (const Shape& shape : shapes) {
        for (double latency : {0.0, 0.3, 1.7}) {
            CAPTURE(shape.name, shape.p, shape.m, shape.v, latency);
            const Schedule s =
                generate_schedule(shape.name, GeneratorOptions{shape.p, shape.m, shape.v, 0});
            const StageCosts costs = random_costs(s.stages(), rng);
            ReplayOptions options;
            options.comm_latency = latency;
            const Timeline t = replay(s, costs, options);
            const auto expected = longest_path_starts(s, costs, latency);
            for (int d = 0; d < s.devices; ++d) {
                REQUIRE(t.device_ops[d].size() == s.device_ops[d].size());
                for (std::size_t i = 0; i < s.device_ops[d].size(); ++i) {
                    const TimedOp& op = t.device_ops[d][i];
                    CHECK(op.op == s.device_ops[d][i]);
                    CHECK(op.start == Approx(expected.at(key_of(op.op))).margin(1e-9));
                }
            }
        }
    }
}

// Op starts of Megatron-LM's interleaved 1F1B without p2p overlap, from its loop
// (schedules.py, forward_backward_pipelining_with_interleaving): device r runs
// w = min(2(p−1−r) + (v−1)p, m·v) warm-up F steps, then steps of an F and a backward, then
// backward steps; each step starts once the device is free and the inputs of its ops have
// arrived, runs its ops back to back, and sends its outputs at its end. Relaxed to a fixed
// point like longest_path_starts().
std::map<Key, double> megatron_step_starts(const Schedule& s, const StageCosts& costs,
                                           double latency) {
    const int p = s.devices, v = s.chunks, total = s.microbatches * v;
    struct Step {
        int device;
        std::vector<Op> ops;
    };
    std::vector<Step> steps;
    std::map<Key, std::size_t> step_of;
    for (int r = 0; r < p; ++r) {
        const std::vector<Op>& ops = s.device_ops[r];
        const int warmup = std::min(2 * (p - 1 - r) + (v - 1) * p, total);
        std::size_t i = 0;
        auto add = [&](std::size_t count) {
            Step step{r, {}};
            for (std::size_t k = 0; k < count; ++k) {
                step_of[key_of(ops[i])] = steps.size();
                step.ops.push_back(ops[i++]);
            }
            steps.push_back(step);
        };
        for (int k = 0; k < warmup; ++k)
            add(1);
        for (int k = 0; k < total - warmup; ++k)
            add(2);
        while (i < ops.size())
            add(1);
    }
    auto length = [&](const Op& op) {
        return op.pass == Pass::F
                   ? costs.forward[op.stage]
                   : costs.backward_input[op.stage] + costs.backward_weight[op.stage];
    };
    std::vector<double> start(steps.size(), 0.0), end(steps.size(), 0.0);
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t k = 0; k < steps.size(); ++k) {
            const Step& step = steps[k];
            double earliest = k > 0 && steps[k - 1].device == step.device ? end[k - 1] : 0.0;
            for (const Op& op : step.ops) {
                std::vector<Op> in;
                if (op.pass == Pass::F && op.stage > 0)
                    in.push_back({Pass::F, op.microbatch, op.stage - 1});
                if (op.pass == Pass::BW && op.stage + 1 < s.stages())
                    in.push_back({Pass::BW, op.microbatch, op.stage + 1});
                for (const Op& input : in) {
                    const std::size_t from = step_of.at(key_of(input));
                    if (steps[from].device != step.device)
                        earliest = std::max(earliest, end[from] + latency);
                }
            }
            double finish = earliest;
            for (const Op& op : step.ops)
                finish += length(op);
            if (earliest > start[k] + 1e-12 || finish > end[k] + 1e-12) {
                start[k] = earliest;
                end[k] = finish;
                changed = true;
            }
        }
    }
    std::map<Key, double> starts;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        double t = start[k];
        for (const Op& op : steps[k].ops) {
            starts[key_of(op)] = t;
            t += length(op);
        }
    }
    return starts;
}

TEST_CASE("with steps paired, replay times Megatron-LM's interleaved loop without p2p overlap",
          "[sim][replay]") {
    std::mt19937 rng(20261203);
    struct Shape {
        int p, m, v;
    };
    for (const Shape shape : {Shape{4, 8, 2}, Shape{3, 6, 3}, Shape{4, 12, 3}, Shape{2, 4, 4}}) {
        for (double latency : {0.0, 0.3, 1.7}) {
            CAPTURE(shape.p, shape.m, shape.v, latency);
            Schedule s = generate_schedule("interleaved-1f1b",
                                           GeneratorOptions{shape.p, shape.m, shape.v, 0});
            const StageCosts costs = random_costs(s.stages(), rng);
            ReplayOptions options;
            options.comm_latency = latency;
            const Timeline overlapped = replay(s, costs, options);
            pair_steps(s);
            REQUIRE(!validate(s));
            const Timeline stepped = replay(s, costs, options);
            const auto expected = megatron_step_starts(s, costs, latency);
            double makespan = 0, overlapped_makespan = 0;
            for (int d = 0; d < s.devices; ++d) {
                REQUIRE(stepped.device_ops[d].size() == s.device_ops[d].size());
                for (const TimedOp& op : stepped.device_ops[d]) {
                    CHECK(op.start == Approx(expected.at(key_of(op.op))).margin(1e-9));
                    makespan = std::max(makespan, op.end);
                }
                for (const TimedOp& op : overlapped.device_ops[d])
                    overlapped_makespan = std::max(overlapped_makespan, op.end);
            }
            // Holding an output until the step ends never makes the iteration shorter.
            CHECK(makespan >= overlapped_makespan - 1e-9);
        }
    }
}

TEST_CASE("microbatches with their own stage ranges: two model copies in opposite directions",
          "[sim][replay]") {
    // DualPipe's idea on p = 2: microbatch 0 runs stages 0→1 (devices 0→1), microbatch 1
    // runs stages 2→3 (devices 1→0); each device holds one stage of each copy (V-shape).
    Schedule s = make_empty_schedule("two-way", 2, 2, 2, vshape_placement(2, 2));
    s.microbatch_stages = {{0, 1}, {2, 3}};
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::F, 1, 3}, {Pass::BW, 1, 3}, {Pass::BW, 0, 0}};
    s.device_ops[1] = {{Pass::F, 1, 2}, {Pass::F, 0, 1}, {Pass::BW, 0, 1}, {Pass::BW, 1, 2}};
    REQUIRE_FALSE(validate(s).has_value());
    const StageCosts costs = uniform_stage_costs(2, 2, 2, 2, 2);  // 1 per chunk pass
    ReplayOptions options;
    options.comm_latency = 0.25;
    const Timeline t = replay(s, costs, options);
    // Both devices start at once and never wait longer than one hop.
    CHECK(t.device_ops[0].back().end == Approx(6.5));
    CHECK(t.device_ops[1].back().end == Approx(6.5));
    const auto expected = longest_path_starts(s, costs, 0.25);
    for (int d = 0; d < 2; ++d)
        for (const TimedOp& op : t.device_ops[d])
            CHECK(op.start == Approx(expected.at(key_of(op.op))));

    SECTION("ops outside a microbatch's range are rejected") {
        s.device_ops[0].push_back({Pass::F, 0, 3});
        const auto issue = validate(s);
        REQUIRE(issue);
        CHECK(issue->message ==
              "device 0 position 4: F(mb 0, stage 3) is outside microbatch 0's "
              "stages 0..1");
    }
    // Ranges that leave the stages, cover part of a model copy or leave a stage out. A file
    // once sent both microbatches through stage 0 alone of p = 2 and was analysed as a run
    // without a bubble, 1.5 times 1F1B's speed, while device 1 idled throughout.
    SECTION("ranges must fit the stages, each a whole model copy, and cover every stage") {
        const std::pair<StageRange, const char*> cases[] = {
            {{2, 4}, "microbatch 1 passes through stages 2..4, outside 0..3 or empty"},
            {{2, 2},
             "microbatch 1 passes through stages 2..2 and microbatch 0 through 0..1: each "
             "microbatch passes through one whole copy of the model, as many stages"},
            {{0, 1},
             "no microbatch passes through stage 2: each stage holds part of a model copy "
             "that microbatches pass through"}};
        for (const auto& [range, message] : cases) {
            s.microbatch_stages[1] = range;
            const auto issue = validate(s);
            REQUIRE(issue);
            CHECK(issue->message == message);
        }
    }
}

TEST_CASE("replay records one transfer per cross-device dependency", "[sim][replay]") {
    const Schedule s = generate_schedule("1f1b", GeneratorOptions{3, 4, 1, 0});
    ReplayOptions options;
    options.comm_latency = 0.5;
    options.message_bytes = 1024;
    const Timeline t = replay(s, uniform_stage_costs(3, 1, 1, 1, 1), options);
    // Forward: m·(p−1) activations; backward: m·(p−1) gradients.
    REQUIRE(t.transfers.size() == 2u * 4u * 2u);
    for (const Transfer& x : t.transfers) {
        CHECK(x.end - x.start == Approx(0.5));
        CHECK(x.bytes == 1024);
        CHECK(std::abs(x.src_device - x.dst_device) == 1);
        CHECK(x.src_device == t.stage_device[x.producer.stage]);
        CHECK(x.dst_device == t.stage_device[x.consumer.stage]);
    }
}

TEST_CASE("1F1B with latency c: each of the p−1 hops costs c twice on the critical path",
          "[sim][replay]") {
    // With one microbatch, the path is F through every stage, then BW back: makespan
    // p(F+B+W) + 2(p−1)c.
    for (int p : {2, 4, 7}) {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{p, 1, 1, 0});
        ReplayOptions options;
        options.comm_latency = 0.25;
        const Timeline t = replay(s, uniform_stage_costs(p, 1, 1, 2, 1), options);
        CHECK(t.device_ops[0].back().end == Approx(p * 4.0 + 2 * (p - 1) * 0.25));
    }
}

TEST_CASE("replay rejects costs that do not fit the schedule", "[sim][replay]") {
    const Schedule s = generate_schedule("interleaved-1f1b", GeneratorOptions{2, 4, 2, 0});
    CHECK_THROWS_WITH(replay(s, uniform_stage_costs(2, 1, 1, 1, 1)),
                      "costs are given for 2 stages but the schedule has p·v = 4 virtual stages");
    StageCosts bad = uniform_stage_costs(2, 2, 1, 1, 1);
    bad.backward_weight[3] = -1;
    CHECK_THROWS_WITH(replay(s, bad), "stage 3: W cost must be a finite number ≥ 0, got -1");
    ReplayOptions options;
    options.comm_latency = -0.5;
    CHECK_THROWS_WITH(replay(s, uniform_stage_costs(2, 2, 1, 1, 1), options),
                      Catch::Contains("communication latency must be a finite number ≥ 0"));
}

TEST_CASE("replay refuses an invalid schedule", "[sim][replay]") {
    Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 2, 1, 0});
    std::swap(s.device_ops[1][0], s.device_ops[1][1]);  // BW before F on device 1
    CHECK_THROWS_AS(replay(s, uniform_stage_costs(2, 1, 1, 1, 1)), std::invalid_argument);
}

TEST_CASE("model-based DualPipe: each model copy holds the whole model, each device two slices",
          "[sim][models]") {
    analysis::PipelineSpec options;
    options.schedule = "dualpipe";
    options.generator = GeneratorOptions{4, 8, 0, 0};
    analysis::ModelSpec model;
    model.model = "zb-1.5b";
    model.gpu = "a100-80gb";
    model.workload.microbatch = 1;
    options.costs.model = model;
    const analysis::Analysis dual = analysis::run(options);
    REQUIRE(dual.model);
    const auto& stages = dual.model->plan.stages;
    REQUIRE(stages.size() == 8);
    int layers_in_copy = 0;
    for (int k = 0; k < 4; ++k) {
        // Copy B's stage 4+k is the same slice of the model as copy A's stage k.
        CHECK(stages[k].first_layer == stages[4 + k].first_layer);
        CHECK(stages[k].layers == stages[4 + k].layers);
        CHECK(dual.costs.forward[k] == dual.costs.forward[4 + k]);
        layers_in_copy += stages[k].layers;
    }
    CHECK(layers_in_copy == dual.model->config.layers);
    CHECK(stages[0].has_embedding);
    CHECK(stages[3].has_head);

    // The same model under 1F1B on 4 devices: one slice per device, the same slices.
    options.schedule = "1f1b";
    const analysis::Analysis single = analysis::run(options);
    for (int k = 0; k < 4; ++k) {
        CHECK(single.model->plan.stages[k].layers == stages[k].layers);
        CHECK(single.costs.forward[k] == Approx(dual.costs.forward[k]));
    }
    // Device i holds slices i and 3−i: twice the parameters on average.
    double dual_static = 0, single_static = 0;
    for (int d = 0; d < 4; ++d) {
        CHECK(dual.model->static_bytes[d] == Approx(single.model->plan.stages[d].static_bytes +
                                                    single.model->plan.stages[3 - d].static_bytes));
        dual_static += dual.model->static_bytes[d];
        single_static += single.model->static_bytes[d];
    }
    CHECK(dual_static == Approx(2 * single_static));
}
