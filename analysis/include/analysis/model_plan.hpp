#pragma once
// Model-based costs for the engines: a models::PipelinePlan (seconds, bytes) turned into the
// StageCosts and MemoryModel the engines and the metrics use, plus the model's own figures.

#include <string>
#include <vector>

#include "analysis/spec.hpp"
#include "models/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/partition.hpp"
#include "models/pipeline.hpp"
#include "models/transformer.hpp"
#include "schedules/costs.hpp"
#include "schedules/metrics.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::analysis {

/// The model's side of an analysis. Per-device vectors are indexed by pipeline device.
struct ModelAnalysis {
    models::TransformerConfig config;
    models::GpuSpec gpu;
    models::Workload workload;
    models::PipelinePlan plan;  ///< one stage per virtual stage, in model order
    std::string
        cost_source;  ///< "operator rooflines", "analytic, efficiency E" or "calibration FILE: …"
    bool operator_model = false;           ///< the times come from the operator rooflines
    std::vector<double> static_bytes;      ///< weights, gradients, optimizer state
    std::vector<double> activation_bytes;  ///< peak activations (from the metrics)
    std::vector<double> total_bytes;       ///< static + activation
    std::vector<int> over_capacity;        ///< devices whose total exceeds their GPU's memory
    /// Per device, the GPU whose memory it must fit in: `gpu`, or on a cluster of other GPUs
    /// the smallest holding it (device_gpus()). summarize_model() sets `gpu` for each unless
    /// it is already sized.
    std::vector<models::GpuSpec> device_gpu;
    /// On a cluster, the GPUs the layout ran on, each kind once in the cluster's order (the
    /// costs' GPU by its own name); empty without a cluster.
    std::vector<std::string> ran_on;
    int gpus = 0;  ///< dp · p · t
    /// One optimizer step on the device whose stages hold the most (seconds, memory-bound).
    double optimizer_seconds = 0;
    /// The iteration time plus the optimizer step: what the rates below divide by (with
    /// post-validation, the longest of each device's window plus its own step).
    double step_time = 0;
    /// Over all dp replicas, per step time (the iteration — the makespan, or with SimGrid the
    /// time until the last gradient reduction ends — then the optimizer step).
    double samples_per_second = 0;
    double tokens_per_second = 0;
    /// Model FLOPs (no recomputation) per second over the dp·p·t GPUs at their dense peak:
    /// `gpu`'s, or on a cluster of other GPUs theirs (its speed times `gpu`'s).
    double mfu = 0;
};

/// Whether `options` time the layers with the operator-level model (no calibration file, no
/// single efficiency): what ModelAnalysis::operator_model records.
bool uses_operator_model(const ModelSpec& options);

/// Resolves the model and GPU, builds the cost model (analytic or calibrated) and plans
/// `stages` virtual stages, the layers balanced over the devices of `stage_device` (one per
/// stage; none: over the stages, models::plan_pipeline). Throws std::invalid_argument for
/// unknown names, bad files, impossible splits or workloads.
ModelAnalysis plan_model(const ModelSpec& options, int stages,
                         std::span<const int> stage_device = {});

/// plan_model() for `schedule`'s virtual stages. When microbatches pass through
/// their own stage ranges (two model copies, as in DualPipe), each range is a whole copy of the
/// model: the model is planned once over a range's length and every stage gets the slice at its
/// offset in its range, so each copy holds the full model (and a device holding one stage of
/// each copy holds two slices' parameters). Throws std::invalid_argument if the ranges are not
/// whole copies (different lengths, or a stage at two different offsets).
ModelAnalysis plan_model(const ModelSpec& options, const Schedule& schedule);

/// Whether a stage's tensor-parallel collectives and ring attention's exposed K/V transfers
/// (context parallelism) are part of its pass times (the analytic engine, which has no
/// network) or left to an engine that simulates them (SimGrid).
enum class TpComm { in_passes, simulated };

/// The plan's per-stage seconds as StageCosts (virtual stage s = plan stage s), with or
/// without the tensor-parallel collectives' and the ring transfers' time.
StageCosts stage_costs_from_plan(const models::PipelinePlan& plan,
                                 TpComm tp_comm = TpComm::in_passes);

/// The plan's per-stage activation bytes as a MemoryModel (M_B, M_W per microbatch).
MemoryModel memory_model_from_plan(const models::PipelinePlan& plan);

/// Fills in per-device memory, throughput and MFU once the schedule has run: `dp` replicas
/// each ran `schedule` (whose peaks `metrics` holds) in `iteration_time` seconds, on
/// dp · p · workload.tp GPUs. With `device_windows` (optimizer post-validation: per device,
/// its first op's start to its last op's or reduction's end) each device steps on its own
/// and the step time is the longest window plus that device's optimizer step, instead of
/// iteration_time plus the longest optimizer step. `gpu_speed`: the GPUs' mean peak against
/// `model.gpu`'s where a cluster of other GPUs ran it (SimResult::mean_gpu_speed), which MFU
/// divides by. Precondition: `metrics` come from running `schedule` with this plan's costs
/// (seconds).
void summarize_model(ModelAnalysis& model, const Schedule& schedule, const Metrics& metrics, int dp,
                     double iteration_time, const std::vector<double>& device_windows = {},
                     double gpu_speed = 1);

}  // namespace pipesim::analysis
