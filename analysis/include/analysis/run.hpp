#pragma once
// Running a pipeline: a PipelineSpec is prepared once (the model planned once, the schedule
// generated once, planned with the costs it will run with) and run on an engine, the exact
// analytic replay or the SimGrid cluster model. Every engine fills the same Analysis.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "analysis/lifespan.hpp"
#include "analysis/model_plan.hpp"
#include "analysis/spec.hpp"
#include "schedules/costs.hpp"
#include "schedules/metrics.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"
#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::analysis {

/// The exact analytic replay: every op starts when its device is free and its inputs have
/// arrived (PipelineSpec::comm_latency after their end on another device).
struct AnalyticEngine {
    bool record_transfers = true;  ///< one Transfer per cross-device dependency in the Timeline
    /// Every op's start and end in Analysis::timeline (pictures, traces and saved timelines
    /// need them), and with a model and dp·C > 1 each device's data-parallel collectives
    /// (TransferKind::data_parallel, whatever record_transfers says). false: the timeline has
    /// the schedule's shape and no ops, the metrics are computed while replaying, and the
    /// replay keeps no per-op record.
    bool record_ops = true;
    /// With a model and dp·C > 1, each device's gradient reduction (grad_reduce.hpp) starts
    /// when its last W or BW starts (Megatron-LM's --overlap-grad-reduce); false: after the
    /// whole pipeline. The SimGrid engine's is SimOptions::overlap_grad_reduce.
    bool overlap_grad_reduce = true;
    /// With a sharded optimizer (--dist-opt, ZeRO 1 or 2), the parameter all-gather runs
    /// beside each device's first forward instead of after the reduce-scatter
    /// (grad_reduce.hpp; Megatron-LM's --overlap-param-gather). The SimGrid engine's is
    /// SimOptions::overlap_param_gather.
    bool overlap_param_gather = false;
    /// Optimizer post-validation (Qi et al., ICLR 2024, §4; the Zero Bubble repository's
    /// --enable-optimizer-post-validation): no pipeline-wide synchronization before the
    /// optimizer step, so each device steps and starts the next iteration as soon as its own
    /// ops and gradient reduction are done. Iterations then repeat with a period of the
    /// longest device window (first op's start to its last op's or reduction's end, plus its
    /// optimizer step) instead of the makespan (Analysis::iteration_time).
    bool post_validation = false;
    /// Bytes per op of an output the caller builds in memory after the run (a Chrome trace's
    /// text), counted by prepare()'s memory check with the run's own.
    double output_bytes_per_op = 0;
};

/// The SimGrid model of a GPU cluster: links, NICs, contention, the gradient all-reduce.
/// Latencies come from the cluster (PipelineSpec::comm_latency is not used).
struct SimGridEngine {
    simgrid::ClusterSpec cluster;
    /// The rank order (`layout.order`); dp and tp are the spec's, pp the schedule's.
    simgrid::Layout layout;
    double message_bytes = 0;  ///< per stage boundary and microbatch, without a model
    double grad_bytes = 0;     ///< per device and iteration, without a model
    simgrid::SimOptions options;
    double output_bytes_per_op = 0;  ///< as AnalyticEngine's
};

using Engine = std::variant<AnalyticEngine, SimGridEngine>;

/// A spec made ready to run: the schedule, its per-stage costs and memory model, and the
/// model's plan when the costs come from a model. Plain data; run() consumes it.
struct Pipeline {
    PipelineSpec spec;
    Schedule schedule;
    StageCosts costs;
    MemoryModel memory;                  ///< the model's bytes or the unit model's M_B
    std::optional<ModelAnalysis> model;  ///< planned once (figures filled by run())
    std::vector<std::string> warnings;   ///< one line each: legal but questionable choices
    /// `schedule` is generated and passed validate(), or for the analytic engine only
    /// validate_structure(): the replay's walk makes the order and deadlock checks.
    bool validated = false;
    bool order_checked = false;  ///< with `validated`: validate()'s order and deadlock checks too
};

/// What the SimGrid engine adds to an Analysis.
struct ClusterRun {
    std::string cluster;        ///< the cluster's name
    std::string description;    ///< the cluster's description
    simgrid::Layout layout;     ///< as run (pp = the schedule's devices)
    simgrid::SimResult result;  ///< the raw result (replica 0's timeline is Analysis::timeline)
};

/// One run of a pipeline, filled the same way by every engine.
struct Analysis {
    Schedule schedule;
    StageCosts costs;
    MemoryModel memory;  ///< activation memory per stage: the model's (bytes) or unit M_B
    Timeline timeline;   ///< the pipeline's ops (with SimGrid: replica 0's; see AnalyticEngine)
    Metrics metrics;     ///< of `timeline` with `memory`
    /// Time of one training iteration: the time until the last op or gradient reduction of any
    /// replica ends (the makespan when there is no reduction). With optimizer post-validation
    /// (AnalyticEngine::post_validation) the period at which iterations repeat instead: the
    /// longest device window, from a device's first op to its last op's or gradient
    /// reduction's end (docs/models.md, "Optimizer post-validation").
    double iteration_time = 0;
    /// One iteration alone, as iteration_time is without post-validation.
    double single_iteration_time = 0;
    bool post_validation = false;  ///< whether iteration_time is the post-validation period
    /// With post-validation, per device: its window, from its first op's start until it is
    /// done with the iteration (its last op's or gradient reduction's end, plus a parameter
    /// all-gather it exposes); iteration_time is the longest. Empty without post-validation.
    std::vector<double> device_windows;
    /// The longest data-parallel gradient reduction of any device (seconds; 0 without a model
    /// or with dp·C = 1): the closed form of grad_reduce.hpp, or SimGrid's simulated one.
    double grad_reduce_time = 0;
    /// With the parameter all-gather overlapped: the longest gather and the most of one its
    /// device's first forward does not hide (the analytic closed form, or SimGrid's simulated
    /// one; part of iteration_time).
    double param_gather_time = 0;
    double param_gather_exposed = 0;
    int dp = 1;                          ///< replicas that ran the pipeline side by side
    std::optional<ModelAnalysis> model;  ///< with a model: memory, throughput, MFU over dp·p·t
    std::optional<ClusterRun> cluster;   ///< with the SimGrid engine
    /// One line each: choices that run but that a user should hear about (e.g. a shape a
    /// training framework would refuse). Memory over a GPU's capacity is in `model`.
    std::vector<std::string> warnings;
    /// For a generated schedule built from a catalog block (catalog_block()), or a block set
    /// by the caller: the measured lifespans in repeat intervals next to the block's bound.
    std::optional<BlockLifespans> block;
    /// 1F1B's iteration time for the same inputs and this run's speed-up over it (1F1B's time
    /// / iteration_time); both 0 unless run_with_baseline() filled them, or when 1F1B could
    /// not run.
    double baseline_1f1b_time = 0;
    double speedup_1f1b = 0;
};

/// A pipeline's microbatches per time unit of the iteration (Analysis::iteration_time: the
/// makespan, or the end of an exposed gradient reduction, or with post-validation the period
/// of repeated iterations); Metrics::throughput is per makespan.
double microbatch_throughput(const Analysis& a);

/// The name of a run's time figure in JSON and CSV: "iteration_time" with a model, else
/// "period" with post-validation, else "makespan".
const char* time_field(bool model, bool post_validation);

/// Throws std::invalid_argument where the analytic replay cannot time `spec`'s layout,
/// whatever its schedule: with a model, a tensor-parallel group larger than the reference
/// node's GPUs (models::reference_gpus_per_node), whose collectives it would time at NVLink's
/// bandwidth across nodes. prepare() checks it; a comparison checks it once, before its first
/// schedule.
void check_analytic_layout(const PipelineSpec& spec);

/// Prepares `spec`: plans the model once (if any), generates the schedule once (a generator
/// that plans with pass times gets the costs and latency it will run with) or takes the given
/// one, and derives the costs and memory model. Throws std::invalid_argument (one clear line)
/// for bad options, names or costs, InvalidSchedule for an invalid given schedule, and,
/// before allocating, for a run that will not fit in memory (the schedule and what `engine`
/// records per op) under this process's address-space limit or the machine's memory.
Pipeline prepare(const PipelineSpec& spec, const Engine& engine = AnalyticEngine{});

/// What the cluster simulation refuses of a prepared pipeline, checked before SimGrid starts
/// (run() checks it too): the layout on the cluster, the what-if options, replay-only
/// options, byte counts beside a model, and passes shorter than SimGrid times. Throws
/// std::invalid_argument (one clear line).
void check_cluster_run(const Pipeline& pipeline, const SimGridEngine& engine);

/// Runs a prepared pipeline on `engine` and computes the metrics and model figures. Throws
/// std::invalid_argument for clusters or layouts that do not fit and what the engine throws
/// (SimGrid: std::logic_error on a second run in one process, std::runtime_error when the
/// run does not finish).
Analysis run(Pipeline pipeline, const Engine& engine);

/// prepare() then run(). With the analytic engine, the memory the run needs is estimated
/// first (sim/memory_budget.hpp): a run that will not fit under this process's address-space
/// limit or in physical memory is refused with std::invalid_argument giving the estimate.
Analysis run(const PipelineSpec& spec, const Engine& engine = AnalyticEngine{});

/// The spec of 1F1B for the same inputs as `pipeline`: its p and m, the same model (re-planned
/// for p stages), the same full-stage triple, or, for costs given per virtual stage, each
/// device's mean work per microbatch over the stages the microbatches pass through; the same
/// latency, dp and tp.
PipelineSpec one_f_one_b_spec(const Pipeline& pipeline);

/// Like run(spec, engine), and also runs one_f_one_b_spec() on the same engine (with SimGrid
/// in a child process, since SimGrid runs once per process) to fill
/// Analysis::baseline_1f1b_time and speedup_1f1b. A baseline that fails leaves them 0.
Analysis run_with_baseline(const PipelineSpec& spec, const Engine& engine = AnalyticEngine{});
/// The same for a prepared pipeline.
Analysis run_with_baseline(Pipeline pipeline, const Engine& engine);

}  // namespace pipesim::analysis
