#pragma once
// The GPU side of calibration: measuring the layer kernels and running schedules on real
// GPUs. Implemented by the `calibration` target (CUDA builds); a build without CUDA links a
// stand-in whose functions throw GpuUnavailable.

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/calibration_file.hpp"
#include "calibration/stream_plan.hpp"
#include "models/layer_costs.hpp"
#include "models/transformer.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::calibration {

/// No GPU work is possible: a build without CUDA, or no CUDA device. The CLI exits with 3.
class GpuUnavailable : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// How each figure is timed: CUDA events around each repetition, `warmup` untimed runs
/// first, the median of `repetitions`, cycling through `rotations` copies of every buffer so
/// that no repetition finds its inputs in the L2 cache left by the previous one.
struct TimingOptions {
    int warmup = 5;
    int repetitions = 30;
    int rotations = 3;
};

/// Reports progress: `done` of `total` steps, `what` is being measured now.
using Progress = std::function<void(int done, int total, std::string_view what)>;

struct CalibrateOptions {
    models::TransformerConfig config;  ///< resolved model (check_kernel_support)
    models::Workload workload;         ///< microbatch, sequence length, TP degree, attention
    std::string gpu;                   ///< models/ GPU name; empty: from the device name
    int device = 0;                    ///< CUDA device index
    int partitions = 1;  ///< > 1: measure on one green-context SM partition of 1/partitions
    TimingOptions timing;
};

/// Measures one layer's F, B and W (whole passes and each kernel) and the device-to-device
/// copy bandwidth. Throws GpuUnavailable without a device, std::invalid_argument for a
/// model the kernels do not implement, std::runtime_error for CUDA failures.
CalibrationRecord calibrate(const CalibrateOptions& options, const Progress& progress);

struct GpuRunOptions {
    models::TransformerConfig config;
    models::Workload workload;
    Schedule schedule;              ///< valid
    std::vector<int> stage_layers;  ///< layers per virtual stage
    RunMode mode = RunMode::automatic;
    int first_device = 0;  ///< multi_gpu: pipeline device i runs on GPU first_device + i
    TimingOptions timing;  ///< for the calibration that precedes the run
    int warmup_runs = 1;   ///< untimed runs of the whole schedule before the measured one
};

struct GpuRunResult {
    Timeline measured;              ///< seconds from the first op's start
    CalibrationRecord calibration;  ///< measured on one pipeline device (GPU or partition)
    RunPlacement placement;
    std::string where;  ///< e.g. "4 SM partitions of 32 SMs on NVIDIA H200"
};

/// Calibrates the layer on one pipeline device, then runs the schedule's ops with the layer
/// kernels (each op runs its stage's layers) and records every op and copy with CUDA events.
/// Buffers are reused across microbatches: the run measures time, not numerics. Throws
/// GpuUnavailable without a device, std::runtime_error when the placement is impossible.
GpuRunResult gpu_run(const GpuRunOptions& options, const Progress& progress);

/// One kernel's result against the CPU reference on small random inputs.
struct KernelCheck {
    std::string name;  ///< "gpt-unfused F qkv", "llama-fused B flash", ...
    double relative_error = 0;
    bool passed() const { return relative_error < 1e-2; }  ///< false for NaN
};

/// Runs every kernel of four small layers once on `device` and compares each output with the
/// CPU reference (calibration/reference.hpp): GPT-style (LayerNorm, GeLU, biases) and
/// Llama-style (RMSNorm, rotary, SwiGLU, 2 key/value heads for 4 query heads, no biases), each
/// with the unfused and the fused attention (b=2, s=80, h=128, head dimension 32). Names start
/// with "gpt-unfused", "gpt-fused", "llama-unfused" or "llama-fused".
std::vector<KernelCheck> check_kernels(int device);

}  // namespace pipesim::calibration
