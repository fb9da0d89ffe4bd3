// Generators against closed forms (uniform stages, no communication).
// Sources: 1F1B/GPipe (m+p−1)(F+B+W); Zero Bubble paper (Qi et al., ICLR 2024) Table 2 for
// ZB-H1/ZB-H2 bubbles and memory; Narayanan et al. (SC21) for interleaved 1F1B's
// (p−1)(F+B+W)/v bubble.
#include <algorithm>
#include <array>
#include <vector>

#include <catch2/catch.hpp>

#include "schedules/metrics.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

struct Result {
    Schedule schedule;
    Timeline timeline;
    Metrics metrics;
};

Result run(const char* name, int p, int m, int v, double f, double b, double w) {
    Result r;
    r.schedule = generate_schedule(name, GeneratorOptions{p, m, v, 0});
    r.timeline = replay(r.schedule, uniform_stage_costs(p, r.schedule.chunks, f, b, w));
    r.metrics = compute_metrics(r.timeline, unit_memory_model(p, r.schedule.chunks));
    return r;
}

using Triple = std::tuple<double, double, double>;
const std::vector<Triple> cost_triples = {{1, 1, 1}, {1, 2, 1},   {2, 3, 1},      {1, 1, 0.5},
                                          {3, 2, 1}, {2, 2, 1.5}, {1.3, 2.1, 0.9}};

}  // namespace

TEST_CASE("GPipe and 1F1B take (m+p−1)(F+B+W) with zero communication", "[schedules][generators]") {
    for (const char* name : {"gpipe", "1f1b"}) {
        for (int p : {1, 2, 4, 8}) {
            for (int m : {1, 3, 8, 17}) {
                for (const auto& [f, b, w] : cost_triples) {
                    CAPTURE(name, p, m, f, b, w);
                    const Result r = run(name, p, m, 1, f, b, w);
                    CHECK(r.metrics.makespan == Approx((m + p - 1) * (f + b + w)));
                    // Device 0 starts first and ends last: its bubble is the whole (p−1) term.
                    CHECK(r.metrics.bubble_rate == Approx(double(p - 1) / (m + p - 1)));
                }
            }
        }
    }
}

TEST_CASE("1F1B device i holds min(p−i, m) microbatches — GPipe holds all m",
          "[schedules][generators]") {
    for (int p : {2, 4, 8}) {
        for (int m : {2, 4, 16}) {
            const Result one_f_one_b = run("1f1b", p, m, 1, 1, 1, 1);
            const Result gpipe = run("gpipe", p, m, 1, 1, 1, 1);
            for (int i = 0; i < p; ++i) {
                CAPTURE(p, m, i);
                CHECK(one_f_one_b.metrics.devices[i].peak_activation == Approx(std::min(p - i, m)));
                CHECK(gpipe.metrics.devices[i].peak_activation == Approx(m));
            }
        }
    }
}

TEST_CASE("ZB-H1's bubble is (p−1)(F+B−W) and its peak memory p·M_B", "[schedules][generators]") {
    for (int p : {2, 4, 8}) {
        for (int m : {p, 2 * p, 3 * p + 1}) {
            for (const auto& [f, b, w] : cost_triples) {
                if (w > std::min(f, b)) continue;  // the handcrafted order assumes W ≤ F, B
                CAPTURE(p, m, f, b, w);
                const Result r = run("zb-h1", p, m, 1, f, b, w);
                CHECK(r.metrics.bubble_time == Approx((p - 1) * (f + b - w)));
                CHECK(r.metrics.makespan == Approx(m * (f + b + w) + (p - 1) * (f + b - w)));
                CHECK(r.metrics.peak_activation_max == Approx(p));
            }
        }
    }
}

TEST_CASE("ZB-H1 with M_W < M_B frees memory at B, lowering the peak", "[schedules][generators]") {
    const Schedule s = generate_schedule("zb-h1", GeneratorOptions{4, 8, 1, 0});
    const Timeline t = replay(s, uniform_stage_costs(4, 1, 1, 1, 1));
    const Metrics half = compute_metrics(t, unit_memory_model(4, 1, 0.5));
    const Metrics full = compute_metrics(t, unit_memory_model(4, 1, 1.0));
    // Device 0 runs p forwards before its first B: p·M_B whatever the ratio.
    CHECK(full.devices[0].peak_activation == Approx(4));
    CHECK(half.devices[0].peak_activation == Approx(4));
    // The last device delays its W's by p−1 steps: at its 4th F it holds three microbatches
    // waiting for W (M_W = 0.5 each) and the one just started: 2.5 instead of 4.
    CHECK(full.devices[3].peak_activation == Approx(4));
    CHECK(half.devices[3].peak_activation == Approx(2.5));
}

TEST_CASE("ZB-H2's bubble is (p−1)(F+B−2W) when ≥ 0, with (2p−1)·M_B peak memory",
          "[schedules][generators]") {
    for (int p : {2, 4, 8}) {
        for (int m : {2 * p - 1, 2 * p, 3 * p + 2}) {
            for (const auto& [f, b, w] : cost_triples) {
                const double bubble = (p - 1) * (f + b - 2 * w);
                if (bubble < 0 || w > std::min(f, b)) continue;
                CAPTURE(p, m, f, b, w);
                const Result r = run("zb-h2", p, m, 1, f, b, w);
                CHECK(r.metrics.bubble_time == Approx(bubble).margin(1e-9));
                CHECK(r.metrics.peak_activation_max == Approx(2 * p - 1));
            }
        }
    }
}

TEST_CASE("with W longer than F the ZB-H bubbles are those of W = F", "[schedules][generators]") {
    // ZB-H1 fills device 0's wait for its first B, pF + (p−1)B after it starts, with its p
    // forwards and whatever W fits; ZB-H2 with its 2p−1 forwards. A W beyond F's length
    // cannot shorten that wait: the Table 2 bubbles hold with min(F, W) for W, so ZB-H1
    // idles (p−1)(F+B−min(F,W)) and ZB-H2 max(0, (p−1)(F+B−2·min(F,W))).
    const std::vector<std::array<double, 3>> long_w = {
        {1, 3, 1.5}, {1, 2, 3}, {2, 1, 2}, {1, 1, 2}, {2, 3, 2.5}, {0.5, 2, 1}, {1, 0.5, 4}};
    for (int p : {2, 4, 8})
        for (const auto& [f, b, w] : long_w) {
            CAPTURE(p, f, b, w);
            const double shorter = std::min(f, w);
            for (int m : {p, 2 * p, 3 * p + 1}) {
                CAPTURE(m);
                CHECK(run("zb-h1", p, m, 1, f, b, w).metrics.bubble_time ==
                      Approx((p - 1) * (f + b - shorter)));
            }
            for (int m : {2 * p - 1, 3 * p + 2}) {
                CAPTURE(m);
                CHECK(run("zb-h2", p, m, 1, f, b, w).metrics.bubble_time ==
                      Approx(std::max(0.0, (p - 1) * (f + b - 2 * shorter))).margin(1e-9));
            }
        }
}

TEST_CASE("ZB-H2 with F = B = W has no bubble on any device", "[schedules][generators]") {
    const Result r = run("zb-h2", 6, 24, 1, 1, 1, 1);
    for (const DeviceMetrics& d : r.metrics.devices)
        CHECK(d.idle == Approx(0).margin(1e-9));
    // A parallelogram: device i starts at i·F and ends at i·F + m(F+B+W).
    CHECK(r.metrics.makespan == Approx(5 + 24 * 3));
}

TEST_CASE("interleaved 1F1B's bubble is (p−1)(F+B+W)/v when m is a multiple of p",
          "[schedules][generators]") {
    for (int p : {2, 4, 8}) {
        for (int v : {2, 3, 4}) {
            for (int m : {p, 2 * p, 4 * p}) {
                for (const auto& [f, b, w] : cost_triples) {
                    CAPTURE(p, v, m, f, b, w);
                    const Result r = run("interleaved-1f1b", p, m, v, f, b, w);
                    const double bubble = (p - 1) * (f + b + w) / v;
                    CHECK(r.metrics.bubble_time == Approx(bubble));
                    CHECK(r.metrics.makespan == Approx(m * (f + b + w) + bubble));
                }
            }
        }
    }
}

TEST_CASE("interleaved 1F1B uses looped placement and Megatron's chunk-major groups",
          "[schedules][generators]") {
    const Schedule s = generate_schedule("interleaved-1f1b", GeneratorOptions{2, 4, 2, 0});
    CHECK(classify_placement(s.stage_device, 2) == PlacementKind::looped);
    // Device 0 (rank 0): warm-up 2(p−1) + (v−1)·p = 4 forwards: mb 0,1 on chunk 0 (stage 0),
    // then mb 0,1 on chunk 1 (stage 2); then F(mb 2, stage 0) and the first backward, which
    // runs the last chunk first: BW(mb 0, stage 2).
    const std::vector<Op> head(s.device_ops[0].begin(), s.device_ops[0].begin() + 6);
    CHECK(head == std::vector<Op>{{Pass::F, 0, 0},
                                  {Pass::F, 1, 0},
                                  {Pass::F, 0, 2},
                                  {Pass::F, 1, 2},
                                  {Pass::F, 2, 0},
                                  {Pass::BW, 0, 2}});
}

TEST_CASE("the microbatch group size changes interleaved 1F1B's order", "[schedules][generators]") {
    const Schedule by_p = generate_schedule("interleaved-1f1b", GeneratorOptions{4, 8, 2, 0});
    const Schedule by_8 = generate_schedule("interleaved-1f1b", GeneratorOptions{4, 8, 2, 8});
    CHECK(by_p.device_ops != by_8.device_ops);
    // With G = m every device runs all m chunk-0 forwards first: GPipe-like memory.
    const Metrics wide =
        compute_metrics(replay(by_8, uniform_stage_costs(4, 2, 1, 1, 1)), unit_memory_model(4, 2));
    const Metrics narrow =
        compute_metrics(replay(by_p, uniform_stage_costs(4, 2, 1, 1, 1)), unit_memory_model(4, 2));
    CHECK(wide.peak_activation_max > narrow.peak_activation_max);
}

TEST_CASE("fewer microbatches than devices works where the schedule allows it",
          "[schedules][generators]") {
    for (const char* name : {"gpipe", "1f1b", "zb-h1", "zb-h2", "interleaved-1f1b"}) {
        for (int m : {1, 2, 3}) {
            CAPTURE(name, m);
            const Result r = run(name, 4, m, 0, 1, 1, 1);
            CHECK(r.metrics.makespan > 0);
            CHECK(r.metrics.peak_activation_max <= m + 1e-9);
        }
    }
}

TEST_CASE("generate_schedule explains what it cannot do", "[schedules][generators]") {
    CHECK_THROWS_WITH(generate_schedule("1f1f", GeneratorOptions{4, 8, 0, 0}),
                      Catch::StartsWith("unknown schedule '1f1f' (known: gpipe, 1f1b,"));
    CHECK_THROWS_WITH(generate_schedule("zb-h1", GeneratorOptions{4, 8, 2, 0}),
                      "zb-h1 runs with v = 1 chunk(s) per device, got v = 2");
    CHECK_THROWS_WITH(generate_schedule("1f1b", GeneratorOptions{0, 8, 0, 0}),
                      "1f1b: the number of devices p must be in 1..4096, got 0");
    CHECK_THROWS_WITH(generate_schedule("1f1b", GeneratorOptions{4, 0, 0, 0}),
                      "1f1b: the number of microbatches m must be in 1..1048576, got 0");
    // A deadlocked interleaved shape names the rule it breaks, then the cycle.
    CHECK_THROWS_WITH(generate_schedule("interleaved-1f1b", GeneratorOptions{8, 12, 2, 0}),
                      Catch::StartsWith("interleaved-1f1b cannot run with p=8 m=12 v=2: the last "
                                        "microbatch group holds 4 of a group's 8 (m = 12 is not "
                                        "a multiple of the group size), which leaves "
                                        "Megatron-LM's order deadlocked here: use m = 8 or 16; "
                                        "deadlock: device "));
    CHECK_THROWS_WITH(generate_schedule("interleaved-1f1b", GeneratorOptions{4, 8, 2, 2}),
                      Catch::StartsWith("interleaved-1f1b cannot run with p=4 m=8 v=2: microbatch "
                                        "groups of 2, fewer than p = 4, leave Megatron-LM's order "
                                        "deadlocked here: use --group-size 4 or more; deadlock: "));
    // Every shape of p ≤ 8 and m ≤ 24 that deadlocks breaks one of the two rules: the
    // message always has one to give.
    for (int p = 2; p <= 8; ++p)
        for (int group = 1; group <= p + 1; ++group)
            for (int m = 1; m <= 24; ++m) {
                CAPTURE(p, group, m);
                try {
                    generate_schedule("interleaved-1f1b", GeneratorOptions{p, m, 2, group});
                } catch (const std::invalid_argument& e) {
                    CHECK_THAT(e.what(), Catch::Contains("deadlocked here: use "));
                    CHECK((group < p || m % group != 0));
                }
            }
}
