#pragma once
// A sweep grid: axes of values whose cartesian product is the list of jobs, read from a
// grid JSON file (docs/sweep-format.md).

#include <cstddef>
#include <string>
#include <vector>

namespace pipesim::sweep {

enum class Engine { analytic, simgrid };

/// "analytic" or "simgrid".
const char* engine_name(Engine engine);

/// One configuration. Defaults are those of `pipesim analyze` / `simulate`.
struct Job {
    int index = 0;  ///< position in the grid's expansion, from 0
    Engine engine = Engine::analytic;
    std::string schedule;
    int p = 0;
    /// Microbatches per replica; 0 where the grid's global batch is not a multiple of mb·dp
    /// (the job is then infeasible, naming both).
    int m = 0;
    /// The grid's global_batch this job's m comes from: sequences per iteration over all
    /// replicas, m = global_batch / (mb · dp). 0: m was given (not a results column).
    int global_batch = 0;
    int v = 0;  ///< chunks per device; 0: the schedule's default
    /// F, B, W of one full stage (unit costs; ignored with a model).
    std::vector<double> costs = {1.0, 1.0, 1.0};
    double comm = 0;         ///< analytic engine: latency of a cross-device dependency
    double mem_w_ratio = 1;  ///< unit memory model: share held from B until W
    std::string model;       ///< preset or model JSON file; empty: unit costs
    std::string gpu;         ///< with a model
    int mb = 1;              ///< sequences per microbatch (with a model)
    int tp = 1;              ///< tensor-parallel degree
    int dp = 1;              ///< data-parallel replicas
    std::string recompute = "none";
    std::string attention = "fused";  ///< the attention core, "fused" or "unfused" (with a model)
    std::string cluster;  ///< simgrid engine: preset (NAME or NAME:N) or cluster JSON file
    /// Cap on a device's peak memory: bytes of weights, gradients, optimizer state and
    /// activations with a model; activation units without one. 0: no cap.
    double mem_limit = 0;
    int cp = 1;    ///< context-parallel degree (ring attention; with a model)
    int zero = 0;  ///< ZeRO stage over the dp·cp ranks, 0..3 (1: the distributed optimizer)
    bool tp_comm_overlap = false;       ///< TP collectives overlapped with the GEMMs (tp > 1)
    bool overlap_grad_reduce = true;    ///< DP gradient reduction overlapped with the backward
    bool overlap_param_gather = false;  ///< ZeRO 1–2: the parameter all-gather beside F
    /// Optimizer post-validation: iterations repeated without a pipeline-wide
    /// synchronization (analysis::AnalyticEngine::post_validation).
    bool post_validation = false;
    /// false: every step exchanges once, Megatron-LM's interleaved 1F1B without p2p overlap
    /// (`--no-overlap-p2p-communication`, analysis::PipelineSpec::step_exchange;
    /// interleaved-1f1b only).
    bool overlap_p2p_communication = true;
    /// With a model: the layers fixed on the first and on the last stage (0: only the
    /// embedding, only the head); −1: the partitioner's choice (`--first/last-stage-layers`).
    int first_stage_layers = -1;
    int last_stage_layers = -1;
    /// simgrid engine: the gradient all-reduce's algorithm, "ring", "tree" or "auto"; empty:
    /// the cluster's.
    std::string nccl_algo;
};

/// The axes. An empty axis takes the Job default. Jobs of the analytic engine ignore the
/// cluster axis; jobs of the SimGrid engine ignore comm (latencies come from the cluster).
struct Grid {
    std::vector<Engine> engines;
    std::vector<std::string> schedules;
    std::vector<int> p;
    std::vector<int> m;
    std::vector<int> m_per_p;  ///< alternative to m: m = k·p
    /// Alternative to m and m_per_p (with a model): sequences per iteration over all
    /// replicas, m = B / (mb · dp), so that layouts and microbatch sizes train on one batch.
    std::vector<int> global_batch;
    std::vector<int> v;
    std::vector<std::vector<double>> costs;
    std::vector<double> comm;
    std::vector<double> mem_w_ratio;
    std::vector<std::string> models;
    std::vector<std::string> gpus;
    std::vector<int> mb;
    std::vector<int> tp;
    std::vector<int> dp;
    std::vector<std::string> recompute;
    std::vector<std::string> attention;
    std::vector<std::string> clusters;
    std::vector<double> mem_limits;
    std::vector<int> cp;
    std::vector<int> zero;
    std::vector<bool> tp_comm_overlap;
    std::vector<bool> overlap_grad_reduce;
    std::vector<bool> overlap_param_gather;
    std::vector<bool> post_validation;
    std::vector<bool> overlap_p2p_communication;
    std::vector<int> first_stage_layers;
    std::vector<int> last_stage_layers;
    std::vector<std::string> nccl_algo;
};

/// The most jobs one grid may expand to; split larger sweeps into several grid files.
inline constexpr std::size_t max_jobs = 1'000'000;

/// Parses a grid JSON document; `file` names it in messages. Throws ParseError
/// ("file:line:column: ...") for bad syntax, unknown keys, values out of range, unknown
/// schedule, model, GPU or cluster names, combinations that cannot work (a model without a
/// GPU, costs with a model, SimGrid without a cluster), and grids of more than max_jobs jobs.
Grid parse_grid(const std::string& file, const std::string& text);

/// Reads and parses a grid file (capped at 1 MiB).
Grid load_grid(const std::string& path);

/// How many jobs expand() gives (the sum over engines of the product of the axis sizes),
/// computed without expanding; SIZE_MAX if that number does not fit.
std::size_t job_count(const Grid& grid);

/// All jobs, in a fixed order (engine, model, gpu, cluster, schedule, p, m, v, mb, tp, dp,
/// recompute, attention, costs, comm, mem_w_ratio, mem_limit, cp, zero, tp_comm_overlap,
/// overlap_grad_reduce, overlap_param_gather, post_validation, overlap_p2p_communication,
/// first_stage_layers, last_stage_layers, nccl_algo; the last varies fastest), numbered
/// from 0.
/// Throws std::invalid_argument for more than max_jobs jobs.
std::vector<Job> expand(const Grid& grid);

/// The jobs of shard `shard` of `shards` (index mod shards == shard): a balanced slice.
std::vector<Job> shard_jobs(const std::vector<Job>& jobs, int shard, int shards);

}  // namespace pipesim::sweep
