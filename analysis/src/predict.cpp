#include "analysis/predict.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "schedules/costs.hpp"
#include "sim/replay.hpp"

namespace pipesim::analysis {

Timeline predict_timeline(const Schedule& schedule, std::span<const int> stage_layers,
                          const models::PassTimes& layer, double transfer_seconds,
                          double message_bytes) {
    if (stage_layers.size() != static_cast<std::size_t>(schedule.stages()))
        throw std::invalid_argument(fmt::format("{} layer counts for {} virtual stages",
                                                stage_layers.size(), schedule.stages()));
    StageCosts costs;
    for (const int layers : stage_layers) {
        costs.forward.push_back(layers * layer.forward);
        costs.backward_input.push_back(layers * layer.backward_input);
        costs.backward_weight.push_back(layers * layer.backward_weight);
    }
    sim::ReplayOptions options;
    options.comm_latency = transfer_seconds;
    options.message_bytes = message_bytes;
    Timeline t = sim::replay(schedule, costs, options);
    t.time_unit = "s";
    return t;
}

}  // namespace pipesim::analysis
