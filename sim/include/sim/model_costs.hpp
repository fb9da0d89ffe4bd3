#pragma once
// Model-based costs for the engines: a models::PipelinePlan (seconds, bytes) turned into the
// StageCosts and MemoryModel the replay and the metrics use, plus the model's own figures.

#include <string>
#include <vector>

#include "models/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/partition.hpp"
#include "models/pipeline.hpp"
#include "models/transformer.hpp"
#include "schedules/metrics.hpp"
#include "schedules/schedule.hpp"
#include "schedules/costs.hpp"

namespace pipesim {

/// What a model-based analysis asks for (`pipesim analyze --model ... --gpu ... --mb B`).
struct ModelRunOptions {
    std::string model;                   ///< a preset name or a model JSON file path
    std::string gpu;                     ///< a GPU name (models::gpu_specs())
    models::Workload workload;           ///< microbatch size, sequence length, TP, recompute
    models::OptimizerConfig optimizer;   ///< bytes per parameter, data parallelism
    models::PartitionOptions partition;  ///< fixed first/last stage layer counts
    std::string calibration_file;        ///< measured layer times; empty: analytic model
    /// Achieved fraction of peak for the analytic model; 0 means the GPU's documented
    /// default. Ignored when a calibration file is given.
    double efficiency = 0;
};

/// The model's side of an analysis. Per-device vectors are indexed by pipeline device.
struct ModelAnalysis {
    models::TransformerConfig config;
    models::GpuSpec gpu;
    models::Workload workload;
    models::PipelinePlan plan;             ///< one stage per virtual stage, in model order
    std::string cost_source;               ///< "analytic, efficiency 0.45" or "calibration FILE"
    std::vector<double> static_bytes;      ///< weights, gradients, optimizer state
    std::vector<double> activation_bytes;  ///< peak activations (from the metrics)
    std::vector<double> total_bytes;       ///< static + activation
    std::vector<int> over_capacity;        ///< devices whose total exceeds the GPU memory
    int gpus = 0;                          ///< p · t
    double samples_per_second = 0;
    double tokens_per_second = 0;
    /// Model FLOPs (no recomputation) per second over p·t GPUs at their dense peak.
    double mfu = 0;
};

/// Resolves the model and GPU, builds the cost model (analytic or calibrated) and plans
/// `stages` virtual stages. Throws std::invalid_argument for unknown names, bad files,
/// impossible splits or workloads.
ModelAnalysis plan_model(const ModelRunOptions& options, int stages);

/// plan_model() for `schedule`'s virtual stages. When microbatches pass through their own
/// stage ranges (two model copies, as in DualPipe), each range is a whole copy of the model:
/// the model is planned once over a range's length and every stage gets the slice at its
/// offset in its range, so each copy holds the full model (and a device holding one stage of
/// each copy holds two slices' parameters). Throws std::invalid_argument if the ranges are not
/// whole copies (different lengths, or a stage at two different offsets).
ModelAnalysis plan_model(const ModelRunOptions& options, const Schedule& schedule);

/// The plan's per-stage seconds as StageCosts (virtual stage s = plan stage s).
StageCosts stage_costs_from_plan(const models::PipelinePlan& plan);

/// The plan's per-stage activation bytes as a MemoryModel (M_B, M_W per microbatch).
MemoryModel memory_model_from_plan(const models::PipelinePlan& plan);

/// Fills in per-device memory, throughput and MFU once the schedule has been replayed.
/// Precondition: `metrics` come from replaying `schedule` with this plan's costs (seconds).
void summarize_model(ModelAnalysis& model, const Schedule& schedule, const Metrics& metrics);

}  // namespace pipesim
