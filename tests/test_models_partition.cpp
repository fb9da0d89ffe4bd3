// The stage partitioner against brute force on small cases.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "models/partition.hpp"

using namespace pipesim::models;

namespace {

double sum_of_squares(const std::vector<double>& costs, const std::vector<int>& counts,
                      double first, double last) {
    double total = 0;
    std::size_t layer = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) {
        double c = (j == 0 ? first : 0.0) + (j + 1 == counts.size() ? last : 0.0);
        for (int i = 0; i < counts[j]; ++i)
            c += costs[layer++];
        total += c * c;
    }
    return total;
}

// Every split of n layers into k contiguous groups that satisfies the fixed counts; a group
// is non-empty unless it is an end whose count is fixed to 0.
std::vector<std::vector<int>> every_split(int n, int k, const PartitionOptions& options) {
    std::vector<std::vector<int>> splits;
    std::vector<int> counts;
    const auto fixed_ok = [&] {
        return (options.first_stage_layers < 0 || counts.front() == options.first_stage_layers) &&
               (options.last_stage_layers < 0 || counts.back() == options.last_stage_layers);
    };
    std::function<void(int)> place = [&](int left) {
        if (static_cast<int>(counts.size()) == k - 1) {
            if (left < (options.last_stage_layers == 0 ? 0 : 1)) return;
            counts.push_back(left);
            if (fixed_ok()) splits.push_back(counts);
            counts.pop_back();
            return;
        }
        const int least = counts.empty() && options.first_stage_layers == 0 ? 0 : 1;
        for (int c = least; c <= left; ++c) {
            counts.push_back(c);
            place(left - c);
            counts.pop_back();
        }
    };
    if (k == 1) {
        counts = {n};
        if (fixed_ok()) splits.push_back(counts);
        return splits;
    }
    place(n);
    return splits;
}

struct BruteForce {
    double bottleneck = std::numeric_limits<double>::infinity();
    double least_squares = std::numeric_limits<double>::infinity();  // among the optimal splits
};

BruteForce brute_force(const std::vector<double>& costs, int k, double first, double last,
                       const PartitionOptions& options) {
    BruteForce best;
    const auto splits = every_split(static_cast<int>(costs.size()), k, options);
    for (const auto& split : splits)
        best.bottleneck =
            std::min(best.bottleneck, partition_bottleneck(costs, split, first, last));
    for (const auto& split : splits)
        if (partition_bottleneck(costs, split, first, last) <= best.bottleneck * (1 + 1e-12))
            best.least_squares =
                std::min(best.least_squares, sum_of_squares(costs, split, first, last));
    return best;
}

}  // namespace

TEST_CASE("the partitioner finds the brute-force optimum and most even split on random small cases",
          "[models]") {
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> cost(0.1, 3.0);
    std::uniform_int_distribution<int> coin(0, 3);
    int checked = 0;
    for (int n = 1; n <= 9; ++n)
        for (int k = 1; k <= std::min(n, 5); ++k)
            for (int trial = 0; trial < 6; ++trial) {
                std::vector<double> costs(static_cast<std::size_t>(n));
                // Whole costs (half the trials) tie often, where the most even split matters.
                for (double& c : costs)
                    c = trial % 2 == 0 ? cost(rng) : std::floor(cost(rng)) + 1;
                const double first = coin(rng) == 0 ? 0.0 : cost(rng);
                const double last = coin(rng) == 0 ? 0.0 : 2 * cost(rng);
                PartitionOptions options;
                if (coin(rng) == 0) options.first_stage_layers = trial % 2;
                if (coin(rng) == 0 && k > 1) options.last_stage_layers = (trial / 2) % 2;
                const BruteForce expected = brute_force(costs, k, first, last, options);
                INFO("n=" << n << " k=" << k << " trial " << trial);
                if (expected.bottleneck == std::numeric_limits<double>::infinity()) {
                    CHECK_THROWS_AS(partition_layers(costs, k, first, last, options),
                                    std::invalid_argument);
                    continue;
                }
                const std::vector<int> counts = partition_layers(costs, k, first, last, options);
                REQUIRE(static_cast<int>(counts.size()) == k);
                for (int j = 0; j < k; ++j) {
                    const bool may_be_empty = (j == 0 && options.first_stage_layers == 0) ||
                                              (j == k - 1 && options.last_stage_layers == 0);
                    CHECK(counts[j] >= (may_be_empty ? 0 : 1));
                }
                int sum = 0;
                for (int c : counts)
                    sum += c;
                CHECK(sum == n);
                CHECK(partition_bottleneck(costs, counts, first, last) ==
                      Approx(expected.bottleneck).epsilon(1e-12));
                // The most even of the optimal splits.
                CHECK(sum_of_squares(costs, counts, first, last) ==
                      Approx(expected.least_squares).epsilon(1e-12));
                ++checked;
            }
    CHECK(checked > 150);
}

TEST_CASE("uniform layers split evenly and a heavy head takes layers off the last stage",
          "[models]") {
    const std::vector<double> layers(8, 1.0);
    CHECK(partition_layers(layers, 4, 0, 0) == std::vector<int>{2, 2, 2, 2});
    // Head worth 1.5 layers: 8 layers + 1.5 over 4 stages needs a bottleneck of 3.
    const std::vector<int> counts = partition_layers(layers, 4, 0, 1.5);
    CHECK(partition_bottleneck(layers, counts, 0, 1.5) == 3.0);
    CHECK(counts.back() == 1);
    // Of the optimal splits (bottleneck 3), the most even one: two 3s and two 2s, not 3,3,3,1.
    std::vector<int> even = partition_layers(std::vector<double>(10, 1.0), 4, 0, 0);
    std::sort(even.begin(), even.end());
    CHECK(even == std::vector<int>{2, 2, 3, 3});
}

TEST_CASE("the split does not depend on the unit of the layer costs", "[models]") {
    // Costs of 1e200 (a tiny --efficiency) once overflowed the sums of squares that pick the
    // most even split and put every layer on the last stage.
    const std::vector<int> unit = partition_layers(std::vector<double>(32, 1.0), 4, 0.5, 1.5);
    for (double scale : {1e-300, 1e-100, 1e100, 1e200, 1e300}) {
        CAPTURE(scale);
        CHECK(partition_layers(std::vector<double>(32, scale), 4, 0.5 * scale, 1.5 * scale) ==
              unit);
    }
}

TEST_CASE("fixed first and last stage layer counts are respected", "[models]") {
    const std::vector<double> layers(14, 1.0);
    PartitionOptions options;
    options.first_stage_layers = 2;
    options.last_stage_layers = 3;
    const std::vector<int> counts = partition_layers(layers, 4, 0, 0, options);
    CHECK(counts.front() == 2);
    CHECK(counts.back() == 3);
    CHECK(counts[1] + counts[2] == 9);
}

TEST_CASE("ends fixed to 0 layers hold only the embedding and the head", "[models]") {
    // Megatron-LM's padded split (Zero Bubble repository, --allow-padding-num-layers): 22
    // layers over 8 devices × 3 chunks of one layer, the first and last chunk empty.
    PartitionOptions options;
    options.first_stage_layers = 0;
    options.last_stage_layers = 0;
    std::vector<int> expected(24, 1);
    expected.front() = expected.back() = 0;
    CHECK(partition_layers(std::vector<double>(22, 1.0), 24, 0.4, 0.9, options) == expected);
    // Only the first end empty: the rest balanced over the other stages.
    options.last_stage_layers = -1;
    CHECK(partition_layers(std::vector<double>(6, 1.0), 4, 0, 0, options) ==
          std::vector<int>{0, 2, 2, 2});
    CHECK_THROWS_WITH(partition_layers(std::vector<double>(3, 1.0), 1, 0, 0, options),
                      "a single stage cannot have 0 layers");
    // One stage holds all: a fixed count other than all was "cannot split 3 layers into 1
    // stages with 2 layers on the first stage".
    PartitionOptions one_stage;
    one_stage.first_stage_layers = 2;
    CHECK_THROWS_WITH(partition_layers(std::vector<double>(3, 1.0), 1, 0, 0, one_stage),
                      "a single stage holds all 3 layers, not 2: fix the first and last stages' "
                      "layers with more than one stage");
    one_stage.first_stage_layers = 3;
    CHECK(partition_layers(std::vector<double>(3, 1.0), 1, 0, 0, one_stage) == std::vector<int>{3});
    options.last_stage_layers = 0;
    CHECK_THROWS_WITH(partition_layers(std::vector<double>(3, 1.0), 6, 0, 0, options),
                      "cannot split 3 layers into 6 stages: every stage needs at least one "
                      "layer (but the ends fixed to 0)");
}

TEST_CASE("impossible splits are refused with one clear line", "[models]") {
    const std::vector<double> layers(4, 1.0);
    CHECK_THROWS_WITH(partition_layers(layers, 5, 0, 0),
                      "cannot split 4 layers into 5 stages: every stage needs at least one layer");
    PartitionOptions options;
    options.first_stage_layers = 3;
    options.last_stage_layers = 2;
    CHECK_THROWS_WITH(partition_layers(layers, 2, 0, 0, options),
                      "cannot split 4 layers into 2 stages with 3 layers on the first stage and "
                      "2 on the last");
    CHECK_THROWS_WITH(partition_layers(layers, 0, 0, 0), "cannot split into 0 stages");
}

namespace {

// The slowest device's load and the slowest group's cost of a split whose group j runs on
// device stage_device[j], in units of one layer.
std::pair<double, double> device_and_group_max(const std::vector<int>& counts,
                                               const std::vector<int>& stage_device, double first,
                                               double last) {
    std::vector<double> load(counts.size(), 0.0);
    double group = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) {
        const double c = counts[j] + (j == 0 ? first : 0.0) + (j + 1 == counts.size() ? last : 0.0);
        load[static_cast<std::size_t>(stage_device[j])] += c;
        group = std::max(group, c);
    }
    return {*std::max_element(load.begin(), load.end()), group};
}

}  // namespace

TEST_CASE("the split by device finds the brute-force least device load then group cost",
          "[models]") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> extra(0.0, 3.0);
    int checked = 0;
    for (const int devices : {2, 3, 4}) {
        for (const bool vshape : {false, true}) {
            const int k = 2 * devices;
            std::vector<int> stage_device(static_cast<std::size_t>(k));
            for (int s = 0; s < k; ++s)
                stage_device[static_cast<std::size_t>(s)] =
                    vshape ? (s < devices ? s : k - 1 - s) : s % devices;
            for (int n = k; n <= k + 7; ++n) {
                const double first = extra(rng), last = extra(rng);
                PartitionOptions options;
                if (n % 3 == 0) options.last_stage_layers = 1;
                const std::vector<int> counts = partition_layers_on_devices(
                    std::vector<double>(static_cast<std::size_t>(n), 1.0), stage_device, first,
                    last, options);
                REQUIRE(std::accumulate(counts.begin(), counts.end(), 0) == n);
                // Brute force: the least device load, then the least group cost under it.
                std::pair<double, double> best{1e300, 1e300};
                for (const std::vector<int>& split : every_split(n, k, options))
                    best = std::min(best, device_and_group_max(split, stage_device, first, last));
                const auto got = device_and_group_max(counts, stage_device, first, last);
                CHECK(got.first == Approx(best.first));
                CHECK(got.second == Approx(best.second));
                if (options.last_stage_layers >= 0) CHECK(counts.back() == 1);
                ++checked;
            }
        }
    }
    CHECK(checked == 48);
}

TEST_CASE("a heavy head on a device of two stages moves layers to the other devices", "[models]") {
    // 32 layers in 16 stages looped over 8 devices, the head costing 2.66 layers on stage 15
    // (device 7, with stage 7): the stage split puts 3 layers with the head there (5.66), the
    // device split leaves it 2 (4.66) and no device above 5 layers, the least possible: the
    // other 7 devices hold at least 30 layers.
    std::vector<int> looped(16);
    for (int s = 0; s < 16; ++s)
        looped[static_cast<std::size_t>(s)] = s % 8;
    const std::vector<double> layers(32, 1.0);
    const auto by_device = partition_layers_on_devices(layers, looped, 0.01, 2.66);
    CHECK(device_and_group_max(by_device, looped, 0.01, 2.66).first == Approx(5));
    CHECK(by_device[7] + by_device[15] == 2);
    // One stage per device: the stage split itself.
    CHECK(partition_layers_on_devices(layers, std::vector<int>{0, 1, 2, 3}, 0.5, 1.5) ==
          partition_layers(layers, 4, 0.5, 1.5));
    std::vector<double> uneven(32, 1.0);
    uneven[3] = 2;
    CHECK_THROWS_WITH(partition_layers_on_devices(uneven, looped, 0, 0),
                      "a split by device needs layers of one cost");
}
