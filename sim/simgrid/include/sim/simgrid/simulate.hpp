#pragma once
// The SimGrid engine: runs a schedule on a discrete-event model of a GPU cluster.
// SimGrid allows one engine per process: call simulate() at most once per process.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "schedules/costs.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"
#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"

namespace pipesim {

/// What the pipeline computes and sends, per virtual stage unless said otherwise.
struct SimWorkload {
    /// Pass times in seconds on a GPU of speed 1 (tensor parallelism already applied).
    StageCosts costs;
    /// Bytes of stage s's output activation (and of the gradient sent back to it).
    std::vector<double> message_bytes;
    /// Tensor-parallel all-reduces inside one F, and inside one B (or BW), of stage s, and
    /// the bytes of each (ignored when T = 1). W needs none.
    std::vector<int> tp_allreduces_forward;
    std::vector<int> tp_allreduces_backward;
    std::vector<double> tp_allreduce_bytes;
    /// Gradient bytes each pipeline device all-reduces across its D replicas per iteration.
    std::vector<double> gradient_bytes;
    /// Compute speed of each of the cluster's node groups relative to the costs (2: ops take
    /// half as long). Empty: each group's NodeGroup::speed, 1 where that is unset (0).
    std::vector<double> group_speeds = {};
};

/// A SimWorkload with the given costs, `message_bytes` on every stage boundary, no TP traffic
/// and `gradient_bytes` per device.
SimWorkload simple_workload(const StageCosts& costs, int devices, double message_bytes,
                            double gradient_bytes);

/// What-if knobs.
struct SimOptions {
    double bandwidth_scale = 1.0;  ///< multiplies every link's bandwidth
    double latency_scale = 1.0;    ///< multiplies every link's latency
    /// (global GPU index, factor): that GPU runs its ops `factor` times slower.
    std::vector<std::pair<int, double>> stragglers;
    /// Start a device's gradient all-reduce as soon as all its replicas finish their last op
    /// (overlapping the pipeline's cool-down) instead of after the whole pipeline.
    bool overlap_grad_reduce = true;
    bool record_transfers = true;
};

/// One simulated iteration. `timeline` holds replica 0's pipeline (its devices are the
/// schedule's devices) with its transfers; gradient all-reduces appear as transfers of kind
/// data_parallel from a device to itself spanning the collective.
struct SimResult {
    Timeline timeline;
    double iteration_time = 0;  ///< until the last op or all-reduce of any replica ends
    std::vector<double> replica_makespan;
    double grad_reduce_time = 0;  ///< longest gradient all-reduce
    std::size_t ops_simulated = 0;
    int gpus_used = 0;
};

/// Runs the simulation. Throws InvalidSchedule for an invalid schedule, std::invalid_argument
/// for a workload, cluster or layout that does not fit, std::logic_error if called twice in
/// one process, std::runtime_error naming the waiting devices if the run does not finish.
SimResult simulate(const Schedule& schedule, const SimWorkload& workload,
                   const ClusterSpec& cluster, const Layout& layout,
                   const SimOptions& options = {});

}  // namespace pipesim
