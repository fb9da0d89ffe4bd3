#pragma once
// Internal: timing one layer's passes and kernels, and a device-to-device copy, on a lane.

#include "calibration/calibration_file.hpp"
#include "calibration/gpu.hpp"
#include "calibration/layer_shape.hpp"
#include "device.hpp"

namespace pipesim::calibration::detail {

/// Steps progress() reports for one measure_layer call (kernels, passes) plus the copy.
int measure_steps(const LayerShape& shape);

/// Median time of F, B, W and of each kernel of `shape`'s layer on lane `lane`, with
/// `timing.rotations` buffer sets cycled. `done` counts progress steps already reported.
LayerMeasurement measure_layer(const models::TransformerConfig& config,
                               const models::Workload& workload, Lanes& lanes, std::size_t lane,
                               const TimingOptions& timing, const Progress& progress, int& done,
                               int total);

/// Median time of copying `bytes` from GPU `src_gpu` to lane `lane`'s GPU on its copy stream.
CopyMeasurement measure_copy(Lanes& lanes, std::size_t lane, int src_gpu, double bytes,
                             const TimingOptions& timing);

}  // namespace pipesim::calibration::detail
