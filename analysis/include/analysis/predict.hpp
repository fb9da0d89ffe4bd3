#pragma once
// The timeline a schedule should take on real GPUs, predicted from measured per-layer pass
// times (what `pipesim gpu-run` compares its measured run with).

#include <span>

#include "models/cost_model.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::analysis {

/// The analytic replay of `schedule` where virtual stage s takes stage_layers[s] times the
/// per-layer pass times `layer` (seconds) and every cross-device dependency takes
/// `transfer_seconds` (a message of `message_bytes`). The Timeline is in seconds
/// (time_unit "s"). Throws std::invalid_argument unless there is one layer count per virtual
/// stage.
Timeline predict_timeline(const Schedule& schedule, std::span<const int> stage_layers,
                          const models::PassTimes& layer, double transfer_seconds,
                          double message_bytes);

}  // namespace pipesim::analysis
