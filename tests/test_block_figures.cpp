// The figures a fill or a reorder reports for the order it made (each device's first start,
// last end and peak) are those an independent timing walk and order_peak() give that order,
// so the V planning may skip timing such orders again: on seeded random blocks, pass times and
// memory shares, with exact (integer) times, and scaled by a power of two.
#include <catch2/catch.hpp>

#include <random>

#include "block_timing.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/metrics.hpp"
#include "v_plan.hpp"

using namespace pipesim;
using namespace pipesim::detail;

namespace {

// The schedule's figures under `costs` computed from scratch: planned_length()'s walk and the
// highest order_peak() with the costs' W memory share.
VPlanFigures walked(const Schedule& s, const PlanningCosts& costs) {
    return plan_figures(s, costs);
}

void require_same(const VPlanFigures& seen, const VPlanFigures& walk) {
    CHECK(seen.length.longest_span == walk.length.longest_span);
    CHECK(seen.length.makespan == walk.length.makespan);
    CHECK(seen.peak == walk.peak);
}

struct RandomCase {
    int p, m;
    double f, b, w, share;
    int offset;
};

RandomCase random_case(std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    RandomCase k{};
    k.p = pick(2, 12);
    k.m = pick(k.p, 3 * k.p);
    k.f = pick(1, 5);
    k.b = pick(1, 5);
    k.w = pick(1, 5);
    k.share = pick(0, 4) / 4.0;
    k.offset = pick(1, 2);
    return k;
}

PlanningCosts planning(const RandomCase& k) {
    PlanningCosts c;
    c.times = uniform_stage_costs(k.p, 2, k.f, k.b, k.w);
    c.w_memory_share = k.share;
    return c;
}

}  // namespace

TEST_CASE("a fill's and a reorder's figures are those the timing walk gives their orders",
          "[schedules][blocks][figures]") {
    std::mt19937 rng(20261201);
    int filled = 0;
    int reordered = 0;
    for (int trial = 0; trial < 150; ++trial) {
        const RandomCase k = random_case(rng);
        INFO("p=" << k.p << " m=" << k.m << " costs " << k.f << "," << k.b << "," << k.w
                  << " share " << k.share << " offset " << k.offset);
        const PlanningCosts costs = planning(k);
        const std::vector<double> duration = pass_durations(costs.times);
        REQUIRE(durations_are_exact(duration, k.m));
        const MemoryModel memory = unit_memory_model(k.p, 2, k.share);
        const BuildingBlock block = place_block(vshape_layout(k.p, k.offset));
        const Schedule order = schedule_from_block(block, k.m, {});
        // Under the order's own peak and under a higher cap (more ops pulled ahead).
        for (double extra : {0.0, 2.0}) {
            const std::vector<double> cap(static_cast<std::size_t>(k.p),
                                          block_lifespan(block, memory).max_bound + extra);
            OrderFigures seen;
            const auto fill = fill_idle(order, duration, cap, memory,
                                        std::numeric_limits<double>::infinity(), &seen);
            if (!fill) continue;
            ++filled;
            require_same(figures_of(*fill, seen), walked(*fill, costs));
        }
        AsapTiming timing;
        REQUIRE_FALSE(asap_timing(order, duration, timing));
        OrderFigures seen;
        const Schedule reorder = reorder_timed(order, duration, std::move(timing), memory, &seen);
        ++reordered;
        require_same(figures_of(reorder, seen), walked(reorder, costs));
    }
    CHECK(filled >= 150);
    CHECK(reordered == 150);
}

TEST_CASE("figures seen with unit slots scale by a power of two to the planning costs'",
          "[schedules][blocks][figures]") {
    for (int p : {3, 4, 7, 10}) {
        const int m = 3 * p;
        for (bool fill : {false, true}) {
            const UnitOrder u =
                schedule_from_block_seen(v_half_block(p), m, {.reorder = !fill, .fill_idle = fill});
            REQUIRE(u.seen);
            // A full stage of 1 is a chunk of 1/2 (two chunks per device): half a unit slot.
            PlanningCosts costs;
            costs.times = uniform_stage_costs(p, 2, 1, 1, 1);
            const double scale = power_of_two_scale(pass_durations(costs.times), u.durations);
            CHECK(scale == 0.5);
            require_same(figures_of(u.order, *u.seen, scale), walked(u.order, costs));
        }
    }
    // Planning durations that are not a power of two times the slots' are not scaled.
    CHECK(power_of_two_scale({3, 3, 3, 6}, {1, 1, 1, 2}) == 0);
    CHECK(power_of_two_scale({4, 2, 2, 4}, {1, 1, 1, 2}) == 0);
    CHECK(power_of_two_scale({0.25, 0.25, 0.25, 0.5}, {1, 1, 1, 2}) == 0.25);
}

TEST_CASE("durations are exact only as multiples of 2^-20 with bounded sums",
          "[schedules][blocks][figures]") {
    CHECK(durations_are_exact({1, 2, 3, 5}, 1024));
    CHECK(durations_are_exact({0.5, 0.25, 0.125, 0.375}, 1 << 20));
    CHECK_FALSE(durations_are_exact({0.1, 0.2, 0.3, 0.5}, 4));  // not dyadic
    CHECK_FALSE(durations_are_exact({1, 1, 1, 2}, 1 << 30));    // sums beyond 2^32
    CHECK_FALSE(durations_are_exact({-1, 1, 1, 0}, 4));
}
