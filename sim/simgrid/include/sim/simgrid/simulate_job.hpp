#pragma once
// One SimGrid run of a pipeline assembled from the same options `pipesim analyze` takes:
// the schedule's costs and memory (unit or model-based), the cluster, the layout. Shared by
// `pipesim simulate` and the sweep workers. Like simulate(), at most once per process.

#include <string>

#include "schedules/metrics.hpp"
#include "schedules/schedule.hpp"
#include "sim/analyze.hpp"
#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim {

/// What to simulate. `options.costs`/`options.mem_w_ratio` apply without a model;
/// `options.comm_latency` is ignored (latencies come from the cluster).
struct SimulateJob {
    Schedule schedule;  ///< validated (generated or read from a file)
    AnalyzeOptions options;
    ClusterSpec cluster;
    /// dp, tp and the rank order; pp is taken from the schedule. With a model the model's
    /// tensor-parallel degree and data-parallel size are set to layout.tp and layout.dp.
    Layout layout;
    double message_bytes = 0;  ///< per stage boundary and microbatch, without a model
    double grad_bytes = 0;     ///< per device and iteration, without a model
    SimOptions sim;
};

/// The outcome: an Analysis whose timeline is replica 0's simulated pipeline (metrics,
/// and model figures over all dp·pp·tp GPUs per iteration time), the raw SimResult, the
/// memory model used and the layout as run.
struct SimulateRun {
    Analysis analysis;
    SimResult result;
    MemoryModel memory;
    Layout layout;
};

/// Plans the model (if any), builds the workload, simulates and computes the metrics.
/// Throws what plan_model(), simulate() and check_layout() throw: std::invalid_argument for
/// options, layouts or clusters that do not fit, std::logic_error on a second call.
SimulateRun run_simulate_job(SimulateJob job);

}  // namespace pipesim
