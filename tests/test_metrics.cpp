// Metrics over hand-built timelines, computed by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "schedules/metrics.hpp"
#include "schedules/placement.hpp"
#include "schedules/zeroed_array.hpp"

using namespace pipesim;

namespace {

// Two devices, one microbatch, split backward:
//   device 0: F [0,1]            B [5,6]  W [6,7]
//   device 1:       F [1.5,2.5]  B [3,4]            W [8,9]
// One microbatch through one stage per device, with these ops.
Timeline hand_timeline(std::vector<std::vector<TimedOp>> device_ops) {
    Timeline t;
    t.schedule = "hand";
    t.devices = static_cast<int>(device_ops.size());
    t.microbatches = 1;
    t.chunks = 1;
    t.stage_device = looped_placement(t.devices, 1);
    t.device_ops = std::move(device_ops);
    return t;
}

Timeline two_device_timeline() {
    return hand_timeline({
        {{{Pass::F, 0, 0}, 0, 1}, {{Pass::B, 0, 0}, 5, 6}, {{Pass::W, 0, 0}, 6, 7}},
        {{{Pass::F, 0, 1}, 1.5, 2.5}, {{Pass::B, 0, 1}, 3, 4}, {{Pass::W, 0, 1}, 8, 9}},
    });
}

}  // namespace

TEST_CASE("metrics of a hand-built timeline", "[schedules][metrics]") {
    const Metrics m = compute_metrics(two_device_timeline(), unit_memory_model(2, 1));
    CHECK(m.makespan == Approx(9.0));
    REQUIRE(m.devices.size() == 2);
    CHECK(m.devices[0].busy == Approx(3.0));
    CHECK(m.devices[0].span == Approx(7.0));
    CHECK(m.devices[0].idle == Approx(4.0));
    CHECK(m.devices[1].busy == Approx(3.0));
    CHECK(m.devices[1].span == Approx(7.5));
    CHECK(m.devices[1].idle == Approx(4.5));
    // Bubble rate is the maximum over devices of idle/span: 4.5/7.5 > 4/7.
    CHECK(m.bubble_rate == Approx(4.5 / 7.5));
    CHECK(m.bubble_device == 1);
    CHECK(m.bubble_time == Approx(4.5));
    CHECK(m.throughput == Approx(1.0 / 9.0));
    CHECK(m.peak_activation_max == Approx(1.0));
}

TEST_CASE("bubble_time is the idle time of the device with the largest bubble rate",
          "[schedules][metrics]") {
    // Device 0 idles longest (5 of 21: 0.24), device 1 at the largest rate (2.5 of 5.5: 0.45).
    const Timeline t = hand_timeline({
        {{{Pass::F, 0, 0}, 0, 1}, {{Pass::B, 0, 0}, 6, 7}, {{Pass::W, 0, 0}, 7, 21}},
        {{{Pass::F, 0, 1}, 1.5, 2.5}, {{Pass::B, 0, 1}, 3, 4}, {{Pass::W, 0, 1}, 6, 7}},
    });
    const Metrics m = compute_metrics(t, unit_memory_model(2, 1));
    REQUIRE(m.devices[0].idle == Approx(5.0));
    REQUIRE(m.devices[1].idle == Approx(2.5));
    CHECK(m.bubble_device == 1);
    CHECK(m.bubble_rate == Approx(2.5 / 5.5));
    CHECK(m.bubble_time == Approx(2.5));
}

TEST_CASE("a device busy end to end has no idle time, whatever the sum of its ops rounds to",
          "[schedules][metrics]") {
    // Ops [0, 0.1], [0.1, 0.2], [0.2, 0.9]: their lengths, each rounded, add up to 1.1e-16
    // less than the span of 0.9, which was once shown as an idle time (a zb-2p device's
    // 8.9e-16); a gap of a thousandth of the span is kept.
    Timeline t = hand_timeline(
        {{{{Pass::F, 0, 0}, 0, 0.1}, {{Pass::B, 0, 0}, 0.1, 0.2}, {{Pass::W, 0, 0}, 0.2, 0.9}}});
    REQUIRE(0.9 - ((0.1 - 0) + (0.2 - 0.1) + (0.9 - 0.2)) > 0);
    CHECK(compute_metrics(t, unit_memory_model(1, 1)).devices[0].idle == 0);
    CHECK(compute_metrics(t, unit_memory_model(1, 1)).bubble_rate == 0);
    t.device_ops[0][2] = {{Pass::W, 0, 0}, 0.2009, 0.9009};
    CHECK(compute_metrics(t, unit_memory_model(1, 1)).devices[0].idle == Approx(0.0009));
}

TEST_CASE("activation accounting follows the M_W ratio", "[schedules][metrics]") {
    const Timeline t = two_device_timeline();
    const MemoryModel model = unit_memory_model(2, 1, 0.25);
    // Device 1: F adds 1 at 1.5; B releases 0.75 at 4; W releases 0.25 at 9.
    const auto curve = memory_over_time(t, model, 1);
    REQUIRE(curve.size() == 3);
    CHECK(curve[0].time == Approx(1.5));
    CHECK(curve[0].activation == Approx(1.0));  // allocated as the first op starts
    CHECK(curve[1].time == Approx(4.0));
    CHECK(curve[1].activation == Approx(0.25));
    CHECK(curve[2].time == Approx(9.0));
    CHECK(curve[2].activation == Approx(0.0));
}

TEST_CASE("a release and an allocation at one instant leave no point on the memory curve",
          "[schedules][metrics]") {
    // One device: microbatch 0's B ends at 2 as microbatch 1's F starts, 1 M_B released and 1
    // allocated (M_W = 0: the W holds nothing).
    Timeline t = hand_timeline({{{{Pass::F, 0, 0}, 0, 1},
                                 {{Pass::B, 0, 0}, 1, 2},
                                 {{Pass::F, 1, 0}, 2, 3},
                                 {{Pass::W, 0, 0}, 3, 4},
                                 {{Pass::B, 1, 0}, 4, 5},
                                 {{Pass::W, 1, 0}, 5, 6}}});
    t.microbatches = 2;
    const auto curve = memory_over_time(t, unit_memory_model(1, 1, 0.0), 0);
    REQUIRE(curve.size() == 2);
    CHECK(curve[0].time == 0);
    CHECK(curve[0].activation == Approx(1.0));
    CHECK(curve[1].time == 5);
    CHECK(curve[1].activation == Approx(0.0));
}

TEST_CASE("chunks hold 1/v of a full stage's activations", "[schedules][metrics]") {
    const MemoryModel model = unit_memory_model(4, 2, 0.5);
    REQUIRE(model.activation.size() == 8);
    CHECK(model.activation[5] == Approx(0.5));
    CHECK(model.held_for_w[5] == Approx(0.25));
    CHECK_THROWS_WITH(unit_memory_model(4, 1, 1.5),
                      "the M_W ratio must be between 0 and 1, got 1.5");
}

TEST_CASE("memory model and timeline must agree on the number of stages", "[schedules][metrics]") {
    CHECK_THROWS_WITH(compute_metrics(two_device_timeline(), unit_memory_model(4, 1)),
                      "memory model has 4 stages, timeline has 2");
}

TEST_CASE("lifespans count the microbatches whose F is in the timeline, from any start",
          "[schedules][metrics]") {
    Timeline t = two_device_timeline();
    // Device 0's F starts before 0 (a measured timeline's clock), device 1's F is missing (a
    // timeline cut at its start): only stage 0 has a lifespan, W end − F start = 7 − (−2).
    t.device_ops[0][0] = {{Pass::F, 0, 0}, -2, 1};
    t.device_ops[1].erase(t.device_ops[1].begin());
    const Metrics m = compute_metrics(t, unit_memory_model(2, 1));
    REQUIRE(m.stage_lifespan.size() == 2);
    CHECK(m.stage_lifespan[0].microbatches == 1);
    CHECK(m.stage_lifespan[0].max == 9.0);
    CHECK(m.stage_lifespan[1].microbatches == 0);
    CHECK(m.stage_lifespan[1].max == 0.0);
    CHECK(m.lifespan_mean == 9.0);
}

TEST_CASE("a ZeroedArray starts all zero, small or large, and moves its block",
          "[schedules][metrics]") {
    // 1 Ki entries come from the heap, 8 Mi (64 MiB) from the kernel in huge pages.
    for (const std::size_t size : {std::size_t{1} << 10, std::size_t{1} << 23}) {
        CAPTURE(size);
        ZeroedArray<double> a(size);
        REQUIRE(a.size() == size);
        bool zero = true;
        for (std::size_t i = 0; i < size; i += 511)
            zero = zero && a[i] == 0.0 && !std::signbit(a[i]);
        CHECK(zero);
        CHECK(a[size - 1] == 0.0);
        a[size - 1] = 3.5;
        ZeroedArray<double> b(std::move(a));
        CHECK(a.data() == nullptr);
        CHECK(b[size - 1] == 3.5);
        a = std::move(b);
        CHECK(a[size - 1] == 3.5);
    }
}

TEST_CASE("a large ZeroedArray's block lies within its mapping wherever the kernel maps it",
          "[schedules][metrics]") {
    // What release_zeroed() unmaps, [block, end), must be the block's own: a block reaching
    // past its mapping would unmap a neighbour (a vector's buffer), which then faults.
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    constexpr std::uintptr_t base = std::uintptr_t{1} << 40;  // a huge-page boundary
    const std::size_t sizes[] = {detail::zeroed_mapped_from, detail::zeroed_mapped_from + 1,
                                 detail::zeroed_mapped_from + huge - 1,
                                 (std::size_t{64} << 20) + 12345};
    for (const std::size_t bytes : sizes)
        for (const std::uintptr_t offset : {std::uintptr_t{0}, std::uintptr_t{4096}, huge - 4096}) {
            CAPTURE(bytes, offset);
            const std::uintptr_t start = base + offset;
            const detail::ZeroedMapping m = detail::zeroed_mapping(start, bytes);
            CHECK(m.block % huge == 0);
            CHECK(m.block >= start);
            CHECK(m.block - start < huge);
            CHECK(m.end - m.block >= bytes);
            CHECK((m.end - m.block) % huge == 0);
            CHECK(m.end <= start + m.length);
        }
    // And a real one: written to its last byte and given back while a heap block of the size
    // glibc maps on its own lives beside it.
    for (int round = 0; round < 8; ++round) {
        std::vector<double> neighbour(80'000, 1.5);
        {
            ZeroedArray<char> a(detail::zeroed_mapped_from +
                                4096 * static_cast<std::size_t>(round) + 1);
            a[a.size() - 1] = 1;
        }
        CHECK(neighbour.back() == 1.5);
    }
}
