// Schedules built on blocks against the papers' published properties, with F = B = W and no
// communication. Memory is in full-stage microbatch units (1F1B holds p), bubbles are idle
// time of the most idle device. Sources: Qi et al., "Pipeline Parallelism with Controllable
// Memory" (NeurIPS 2024): V-Min ⌊(p+4)/3⌋ and bubble ≈ 2/3 of 1F1B's, V-Half ⌊(p+2)/2⌋ and
// ≈ 1/2 of 1F1B's, V-ZB p and zero bubble.
#include <catch2/catch.hpp>

#include "schedules/auto_schedule.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

Metrics unit_metrics(const char* name, int p, int m) {
    const Schedule s = generate_schedule(name, {p, m, 0, 0});
    return compute_metrics(replay(s, uniform_stage_costs(p, s.chunks, 1, 1, 1)),
                           unit_memory_model(p, s.chunks));
}

}  // namespace

TEST_CASE("V-Min holds ⌊(p+4)/3⌋ microbatches and about 2/3 of 1F1B's bubble",
          "[schedules][blocks][vshape]") {
    for (int p : {2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16}) {
        const int m = 4 * p;
        CAPTURE(p);
        const Metrics v = unit_metrics("v-min", p, m);
        const Metrics base = unit_metrics("1f1b", p, m);
        CHECK(v.peak_activation_max == Approx((p + 4) / 3));
        // 1F1B idles (p−1)(F+B+W); V-Min's bubble is about 2/3 of it.
        CHECK(v.bubble_time <= 0.70 * base.bubble_time + 1e-9);
        CHECK(v.bubble_time >= 0.5 * base.bubble_time);
    }
}

TEST_CASE("V-Half holds ⌊(p+2)/2⌋ microbatches and about 1/2 of 1F1B's bubble",
          "[schedules][blocks][vshape]") {
    for (int p : {2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16}) {
        const int m = 4 * p;
        CAPTURE(p);
        const Metrics v = unit_metrics("v-half", p, m);
        const Metrics base = unit_metrics("1f1b", p, m);
        CHECK(v.peak_activation_max == Approx((p + 2) / 2));
        CHECK(v.bubble_time <= 0.56 * base.bubble_time + 1e-9);
    }
}

TEST_CASE("V-Half's even-p block: the delayed turn rounds every device up to p + 2 chunks",
          "[schedules][blocks][vshape]") {
    // Device i's first-chunk stage lives 6(p − ⌊(i−1)/2⌋) slots (whole intervals), its
    // second-chunk stage ⌈i/2⌉ + 1 intervals: together p + 2 chunks, the paper's ⌊(p+2)/2⌋.
    for (int p : {2, 4, 6, 8, 10, 12, 16, 32}) {
        const Lifespan life = block_lifespan(v_half_block(p), unit_memory_model(p, 2));
        for (int i = 0; i < p; ++i) {
            CAPTURE(p, i);
            const int floor_half = i == 0 ? -1 : (i - 1) / 2;  // ⌊(i−1)/2⌋
            CHECK(life.stage_lifespan[i] == 6 * (p - floor_half));
            CHECK(life.stage_in_flight[2 * p - 1 - i] == (i + 1) / 2 + 1);
            CHECK(life.device_bound[i] == Approx(p / 2 + 1));
        }
    }
}

TEST_CASE("V-Half's block keeps the offset-2 layout where the delayed turn does not fit",
          "[schedules][blocks][vshape]") {
    // With F, B, W = 2, 3, 1 slots the delay leaves some pass no free slots for every even p.
    for (int p : {2, 4, 6, 8}) {
        CAPTURE(p);
        CHECK(v_half_block(p, {2, 3, 1}).passes == vshape_block(p, 2, {2, 3, 1}).passes);
        CHECK(v_half_block(p).passes != vshape_block(p, 2).passes);
    }
}

TEST_CASE("V-Half with even p holds p/2 + 1 and idles (3p − 7)/2 for every m ≥ p − 1",
          "[schedules][blocks][vshape]") {
    // Measured closed form (unit costs, no communication): the delayed turn's block filled
    // within its bound. 1F1B idles 3(p − 1), so this is just under half of it.
    for (int p : {4, 6, 8, 12, 16}) {
        for (int m : {p - 1, p + 1, 2 * p, 2 * p + 1, 3 * p, 3 * p + 1, 8 * p + 3}) {
            CAPTURE(p, m);
            const Metrics v = unit_metrics("v-half", p, m);
            CHECK(v.peak_activation_max == Approx(p / 2 + 1));
            CHECK(v.bubble_time == Approx((3.0 * p - 7) / 2).margin(1e-9));
        }
    }
    for (int m : {3, 4, 7, 8}) {
        CAPTURE(m);
        const Metrics v = unit_metrics("v-half", 2, m);
        CHECK(v.peak_activation_max == Approx(2));
        CHECK(v.bubble_time == Approx(0.0).margin(1e-9));
    }
}

TEST_CASE("V-Half with odd p is the offset-2 block, repeated, squeezed and reordered",
          "[schedules][blocks][vshape]") {
    for (int p : {3, 5, 7, 9, 15}) {
        for (int m : {1, p, 2 * p, 3 * p + 1}) {
            CAPTURE(p, m);
            CHECK(generate_schedule("v-half", {p, m, 0, 0}).device_ops ==
                  schedule_from_block(vshape_block(p, 2), m).device_ops);
        }
    }
}

TEST_CASE("ZB-2P has zero bubble within 2p microbatches of memory with F = B = W",
          "[schedules][auto]") {
    for (int p : {2, 3, 4, 5, 6, 8, 9}) {
        for (int m : {2 * p, 3 * p + 1}) {
            CAPTURE(p, m);
            const Metrics z = unit_metrics("zb-2p", p, m);
            CHECK(z.bubble_time == Approx(0.0).margin(1e-9));
            CHECK(z.peak_activation_max <= 2 * p);
        }
    }
}

TEST_CASE("ZB-1P stays within 1F1B's memory p with less bubble than 1F1B", "[schedules][auto]") {
    for (int p : {2, 3, 4, 5, 6, 8, 9}) {
        const int m = 3 * p;
        CAPTURE(p);
        const Metrics z = unit_metrics("zb-1p", p, m);
        const Metrics base = unit_metrics("1f1b", p, m);
        const Metrics h1 = unit_metrics("zb-h1", p, m);
        CHECK(z.peak_activation_max <= p);
        // 1F1B idles (p−1)(F+B+W) = 3(p−1); ZB-H1 (p−1)(F+B−W) = p−1. The paper's ZB-1P
        // matches or beats ZB-H1 (its heuristic keeps the best of several warm-ups; ZB-H1's
        // is one of ours).
        CHECK(z.bubble_time < base.bubble_time);
        CHECK(z.makespan <= h1.makespan + 1e-9);
    }
}

TEST_CASE("a memory cap below one microbatch's activations is refused", "[schedules][auto]") {
    AutoScheduleOptions o;
    o.name = "capped";
    o.devices = 4;
    o.microbatches = 8;
    o.memory_limit = 0.5;
    CHECK_THROWS_WITH(auto_schedule(o), Catch::Contains("no schedule fits a memory cap of 0.5"));
}
