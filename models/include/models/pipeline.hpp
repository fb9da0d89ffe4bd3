#pragma once
// A model split into pipeline stages: per-stage times, memory and messages.

#include <vector>

#include "models/cost_model.hpp"
#include "models/layer_costs.hpp"
#include "models/partition.hpp"
#include "models/transformer.hpp"

namespace pipesim::models {

/// One stage (virtual stage, in model order) on one GPU of its tensor-parallel group.
struct StagePlan {
    int first_layer = 0;
    int layers = 0;
    bool has_embedding = false;  ///< stage 0
    bool has_head = false;       ///< last stage: final norm, LM head, loss
    PassTimes times;             ///< seconds per microbatch, computation only
    /// Seconds per microbatch of ring attention's K/V transfers (context parallelism) left
    /// exposed in F and B: `layers` × cp_exposed_seconds(). The analytic engine adds them to
    /// `times`; SimGrid simulates the transfers instead (PipelinePlan::cp_block_bytes).
    PassTimes cp_ring_times;
    /// Seconds per microbatch of its tensor-parallel collectives (0 with t = 1) left on the
    /// critical path of each pass: all of them, or with Workload::tp_comm_overlap what
    /// overlapped_seconds() leaves exposed; the analytic engine adds them to `times`, SimGrid
    /// simulates the collectives instead (with PipelinePlan::tp_overlap).
    PassTimes tp_comm_times;
    /// The tensor-parallel all-reduces (of PipelinePlan::message_bytes each) behind
    /// `tp_comm_times`: per layer those of layer_tp_comm(), again in B with full recomputation,
    /// one more in F on the first stage (embedding) and in B on the last (logits' input
    /// gradient). 0 with t = 1.
    int tp_collectives_forward = 0;
    int tp_collectives_backward = 0;
    double optimizer_seconds = 0;  ///< one optimizer step over this stage's parameters
    ActivationBytes memory;        ///< bytes per microbatch
    double params = 0;             ///< parameters held on one GPU
    double static_bytes = 0;       ///< params × bytes_per_param (weights, grads, optimizer)
};

/// The whole pipeline.
struct PipelinePlan {
    std::vector<StagePlan> stages;
    double message_bytes = 0;    ///< between adjacent stages, per microbatch
    TensorParallelComm tp_comm;  ///< per layer per microbatch
    /// Share of the TP collectives hidden behind the GEMMs: tp_overlap_efficiency with
    /// Workload::tp_comm_overlap, else 0.
    double tp_overlap = 0;
    /// Model FLOPs (F+B+W, no recomputation) of one microbatch through the whole model,
    /// summed over the TP group: the numerator of MFU.
    double model_flops_per_microbatch = 0;
    int samples_per_microbatch = 0;  ///< b
    /// Context parallelism: the ring's ranks (Workload::cp), and per layer the K/V block each
    /// GPU passes on per step and the attention core's seconds in F and B that hide the
    /// transfers (cp_ring_layer()); 0 with cp = 1.
    int cp = 1;
    double cp_block_bytes = 0;
    PassTimes cp_attention;
    double tokens_per_microbatch = 0;  ///< b·s
    /// Bytes per gradient element (OptimizerConfig::grad_bytes): what the data-parallel
    /// reduction moves per parameter.
    double grad_bytes = 4;
};

/// Partitions the model into `stages` contiguous stages, balancing F+B+W time per stage
/// (embedding on the first, head and loss on the last), and fills in each stage's costs. With
/// `stage_device` (one device per stage) the time per device is balanced first, where devices
/// hold several stages (partition_layers_on_devices). The kernels are timed with the
/// workload's grad_bytes set to the optimizer's.
/// Throws std::invalid_argument for invalid configs/workloads or an impossible split.
PipelinePlan plan_pipeline(const TransformerConfig& config, const Workload& workload,
                           const OptimizerConfig& optimizer, const CostModel& cost_model,
                           int stages, const PartitionOptions& partition = {},
                           std::span<const int> stage_device = {});

}  // namespace pipesim::models
