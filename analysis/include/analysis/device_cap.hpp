#pragma once
// A cap on each whole device's memory in bytes (weights, gradients, optimizer state and peak
// activations), for the memory-capped search, whose cap is in full-stage microbatches.

#include "analysis/run.hpp"

namespace pipesim::analysis {

/// A cap in bytes and its value in the search's unit: full-stage microbatches of activations
/// beyond the weights and optimizer state. Candidates are judged by their own bytes
/// (units_of); the unit only steers the planners that take a cap.
struct DeviceCap {
    double bytes = 0;         ///< the cap, per device
    double static_bytes = 0;  ///< weights + gradients + optimizer state, largest device
    double stage_bytes = 0;   ///< activation bytes of one full stage's microbatch, largest
    double units = 0;         ///< (bytes − static_bytes) / stage_bytes

    /// A run's fullest device on the search's scale: ≤ units exactly when every device's
    /// total is within `bytes`.
    double units_of(const ModelAnalysis& model) const;
    /// The inverse of units_of: bytes of the fullest device.
    double bytes_of(double scaled) const { return scaled / units * bytes; }
};

/// The cap `cap_bytes` measured against `one_f_one_b`, a model-based run of 1F1B with the
/// search's p, m and model (the same layers per device as every candidate). Throws
/// std::invalid_argument (naming both figures in GiB) when the weights and optimizer state
/// alone exceed the cap, and when the run has no model.
DeviceCap device_cap(const Analysis& one_f_one_b, double cap_bytes);

/// One full stage's F, B, W: the mean over the stages of `costs`.
PassCosts mean_stage_costs(const StageCosts& costs);

/// The largest share of a stage's activations held from its B until its W (M_W / M_B, ≤ 1).
double largest_w_share(const MemoryModel& memory);

}  // namespace pipesim::analysis
