#pragma once
// What to run: one pipeline, described once whatever the front end (command-line flags, a
// sweep grid's job, a results row, Python). analysis::run() takes it with an engine.

#include <optional>
#include <string>
#include <vector>

#include "models/layer_costs.hpp"
#include "models/partition.hpp"
#include "schedules/costs.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::analysis {

/// Model-based costs (seconds) and memory (bytes): a transformer on a GPU
/// (`--model NAME --gpu NAME --mb B`).
struct ModelSpec {
    std::string model;  ///< a preset name or a model JSON file path
    std::string gpu;    ///< a GPU name (models::gpu_specs())
    /// Microbatch size, sequence length, sequence parallelism and recomputation. Its `tp` is
    /// PipelineSpec::tp (set by run()), whatever it holds here.
    models::Workload workload;
    /// Bytes per parameter and optimizer sharding. Its `data_parallel` is PipelineSpec::dp
    /// times the workload's context-parallel degree (set by run()), whatever it holds here.
    models::OptimizerConfig optimizer;
    models::PartitionOptions partition;  ///< fixed first/last stage layer counts
    std::string calibration_file;        ///< measured layer times; empty: analytic model
    /// Achieved fraction of peak for the analytic model; 0 means the GPU's documented
    /// default. Ignored when a calibration file is given.
    double efficiency = 0;
};

/// Where pass times and activation memory come from: given pass times in any unit with the
/// unit memory model (M_B = 1 per full stage), or a model.
struct CostSpec {
    /// One triple (F, B, W of a full stage, split evenly over the v chunks: each chunk pass
    /// takes F/v, B/v, W/v) or one triple per virtual stage, used as given.
    std::vector<PassCosts> passes = std::vector<PassCosts>(1);
    /// Share of a stage's activations held from its B until its W (M_W / M_B, 0..1).
    double mem_w_ratio = 1.0;
    /// When set, the model gives the times (seconds) and memory (bytes) instead of `passes`
    /// and `mem_w_ratio`.
    std::optional<ModelSpec> model;
};

/// One pipeline: which schedule, its shape, its costs and the parallel layout around it.
struct PipelineSpec {
    /// A registered schedule name, generated with `generator` (p, m, v, group size; run()
    /// fills its planning costs for generators that plan with them).
    std::string schedule;
    GeneratorOptions generator;
    /// A given schedule (e.g. read from a file) instead; `schedule` and `generator` are then
    /// ignored. Must be valid.
    std::optional<Schedule> given;
    CostSpec costs;
    /// Latency of every dependency between devices, in the unit of the costs (seconds with a
    /// model). The analytic engine only: SimGrid takes latencies from the cluster.
    double comm_latency = 0;
    /// Expert-parallel all-to-all time (dispatch + combine) of one full stage's F and of its
    /// backward, in the unit of the costs, split over chunks like the costs; the device waits
    /// for it except inside an F&B pair (`fb_overlap`). The analytic engine only.
    double all_to_all = 0;
    /// Share, 0..1, of an F&B pair's all-to-all hidden behind the other op's compute
    /// (sim::ReplayOptions::fb_overlap). The analytic engine only.
    double fb_overlap = 0;
    /// Every step exchanges once (pair_steps()): a step's F output leaves with its backward's,
    /// as in Megatron-LM's interleaved 1F1B without p2p overlap
    /// (`--no-overlap-p2p-communication`). interleaved-1f1b only.
    bool step_exchange = false;
    int dp = 1;  ///< data-parallel replicas (each runs the pipeline)
    int tp = 1;  ///< tensor-parallel GPUs per pipeline device, inside a node
};

/// The per-stage costs a CostSpec's `passes` describe for a p×v pipeline: one triple split
/// evenly over the `split` chunks a microbatch passes through on a device (0: all v; see
/// Schedule::microbatch_chunks), or p·v triples used as given. Throws
/// std::invalid_argument for another number of triples or a negative or non-finite time.
StageCosts stage_costs_from_passes(const std::vector<PassCosts>& passes, int devices, int chunks,
                                   int split = 0);

}  // namespace pipesim::analysis
