// The Pareto front of sweep results: float noise, ties.
#include <catch2/catch.hpp>

#include <vector>

#include "sweep/pareto.hpp"
#include "sweep/results.hpp"

using namespace pipesim::sweep;

namespace {

Result row(int index, double memory, double throughput) {
    Result r;
    r.job.index = index;
    r.job.schedule = "1f1b";
    r.peak_activation = memory;
    r.throughput = throughput;
    return r;
}

}  // namespace

TEST_CASE("values that differ by float noise rank as equal on the Pareto front", "[sweep]") {
    // Row 1 has "less" memory than row 0 only by rounding: exactly compared it would push
    // row 0 off the front; within the tolerance they tie and both stay.
    CHECK(pareto_front({row(0, 79, 10), row(1, 78.99999999999996, 10)}, {}) ==
          std::vector<std::size_t>{0, 1});
    // Row 2 would be on the front only thanks to noise in its memory; row 3 has the same
    // memory and clearly more throughput.
    CHECK(pareto_front({row(2, 78.99999999999996, 9), row(3, 79, 10)}, {}) ==
          std::vector<std::size_t>{1});
    // Noise in the throughput does not beat a real saving in memory, nor the reverse.
    CHECK(pareto_front({row(4, 70, 10), row(5, 79, 10.000000000000002)}, {}) ==
          std::vector<std::size_t>{0});
    // Tolerance 0 compares exactly.
    ParetoOptions exact;
    exact.tolerance = 0;
    CHECK(pareto_front({row(0, 79, 10), row(1, 78.99999999999996, 10)}, exact) ==
          std::vector<std::size_t>{1});
}

TEST_CASE("real differences still decide the front, in either direction of y", "[sweep]") {
    const std::vector<Result> rows = {row(0, 4, 0.2), row(1, 4, 0.27), row(2, 7, 0.33),
                                      row(3, 4.001, 0.31), row(4, 2, 0.18)};
    CHECK(pareto_front(rows, {}) == std::vector<std::size_t>{4, 1, 3, 2});
    ParetoOptions bubble;  // lower is better on both axes
    bubble.y = Metric::bubble_rate;
    std::vector<Result> b = rows;
    for (std::size_t i = 0; i < b.size(); ++i)
        b[i].bubble_rate = 1 - b[i].throughput;
    CHECK(pareto_front(b, bubble) == std::vector<std::size_t>{4, 1, 3, 2});
}
