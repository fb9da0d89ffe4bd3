#include "schedules/costs.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/op.hpp"

namespace pipesim {

namespace {

void check_duration(double value, const char* pass, int stage) {
    if (!std::isfinite(value) || value < 0)
        throw std::invalid_argument(
            stage < 0 ? fmt::format("{} cost must be a finite number ≥ 0, got {}", pass, value)
                      : fmt::format("stage {}: {} cost must be a finite number ≥ 0, got {}", stage,
                                    pass, value));
}

}  // namespace

StageCosts uniform_stage_costs(int devices, int chunks, double f, double b, double w, int split) {
    check_duration(f, "F", -1);
    check_duration(b, "B", -1);
    check_duration(w, "W", -1);
    const auto stages = static_cast<std::size_t>(devices * chunks);
    const double share = split > 0 ? split : chunks;
    return StageCosts{std::vector<double>(stages, f / share),
                      std::vector<double>(stages, b / share),
                      std::vector<double>(stages, w / share)};
}

void check_stage_costs(const StageCosts& costs, int stages) {
    const auto n = static_cast<std::size_t>(stages);
    if (costs.forward.size() != n || costs.backward_input.size() != n ||
        costs.backward_weight.size() != n)
        throw std::invalid_argument(fmt::format(
            "costs are given for {} stages but the schedule has p·v = {} virtual stages",
            costs.forward.size(), stages));
    for (int s = 0; s < stages; ++s) {
        check_duration(costs.forward[s], "F", s);
        check_duration(costs.backward_input[s], "B", s);
        check_duration(costs.backward_weight[s], "W", s);
    }
}

std::vector<double> pass_durations(const StageCosts& costs) {
    std::vector<double> duration(costs.stages() * pass_count);
    for (std::size_t s = 0; s < costs.stages(); ++s) {
        double* d = &duration[s * pass_count];
        d[static_cast<int>(Pass::F)] = costs.forward[s];
        d[static_cast<int>(Pass::B)] = costs.backward_input[s];
        d[static_cast<int>(Pass::W)] = costs.backward_weight[s];
        d[static_cast<int>(Pass::BW)] = costs.backward_input[s] + costs.backward_weight[s];
    }
    return duration;
}

}  // namespace pipesim
