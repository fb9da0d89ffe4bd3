#pragma once
// The SimGrid engine: runs a schedule on a discrete-event model of a GPU cluster.
// SimGrid allows one engine per process: call simulate() at most once per process.
// The engine is a plugin, pipesim-simgrid.so, loaded on first use (load_engine()), so that
// programs and runs that never simulate never load SimGrid.

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "schedules/costs.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"
#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"

namespace pipesim::simgrid {

/// Ring attention with context parallelism (Layout::cp = C > 1): each GPU of a device's CP
/// ring (the C GPUs of one TP rank) passes K/V blocks to its successor during every F and
/// backward (docs/cluster-format.md, "Context parallelism").
struct CpRingWork {
    /// Per stage: the layers, each one ring pass per F (C − 1 steps of one block) and per B
    /// or BW (C − 1 steps of two blocks: K/V and their gradients). Empty: no ring.
    std::vector<int> layers;
    /// Bytes of one layer's K/V block that a GPU sends per step.
    double block_bytes = 0;
    /// Seconds (speed 1) of one layer's attention core in F and in B, part of the pass times
    /// in SimWorkload::costs: C equal blocks, block i computing while block i + 1 moves.
    double attention_forward = 0;
    double attention_backward = 0;
};

/// What the pipeline computes and sends, per virtual stage unless said otherwise.
/// The most bytes one message, collective or gradient reduction of a workload may carry (a
/// petabyte: beyond any GPU's memory by orders of magnitude, short of what overflows a
/// simulated time).
inline constexpr double max_workload_bytes = 1e15;

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
    /// Gradient bytes each GPU of pipeline device d all-reduces across the D replicas per
    /// iteration (its own shard with tensor parallelism: the T GPUs of a device run T rings).
    std::vector<double> gradient_bytes;
    /// Compute speed of each of the cluster's node groups relative to the costs (2: ops take
    /// half as long). Empty: each group's NodeGroup::speed, 1 where that is unset (0).
    std::vector<double> group_speeds = {};
    /// With a distributed optimizer, per device: the bytes of updated parameters each GPU
    /// all-gathers after reduce-scattering its `gradient_bytes` (instead of all-reducing
    /// them). Empty or 0: an all-reduce.
    std::vector<double> param_gather_bytes = {};
    /// ZeRO-3, per stage: the bytes of parameters each GPU all-gathers over the replicas
    /// before each F, B and BW (they are sharded at rest), prefetched so that the op takes the
    /// longer of its compute and the all-gather. Empty: none.
    std::vector<double> param_fetch_bytes = {};
    /// Share 0..1 of each F's and B's tensor-parallel collectives hidden behind its compute:
    /// the op takes compute + comm − tp_overlap · min(compute, comm). 0: none.
    double tp_overlap = 0;
    /// Ring attention's transfers (with C > 1); the pass times in `costs` leave them out.
    CpRingWork cp_ring = {};
};

/// A SimWorkload with the given costs, `message_bytes` on every stage boundary, no TP traffic
/// and `gradient_bytes` per GPU of every device.
SimWorkload simple_workload(const StageCosts& costs, int devices, double message_bytes,
                            double gradient_bytes);

/// Where a running simulation is.
struct SimProgress {
    double simulated_time = 0;  ///< simulated seconds reached
    /// An estimate of the end: the analytic replay with each F and B lengthened by its
    /// tensor-parallel all-reduces and each message by a NIC transfer, all without
    /// contention, and no gradient all-reduce.
    double expected_time = 0;
    std::size_t ops_done = 0;
    std::size_t ops_total = 0;
    /// On the report made as a data-parallel collective of this many flows at once starts
    /// (large_collective_flows or more), else 0: SimGrid settles its flows with no report
    /// until they end (docs/cluster-format.md, "Limits").
    std::size_t collective_flows = 0;
};

/// The flows of one collective from which its start is reported (SimProgress): about 2 s of
/// SimGrid on one core (a tree of 50,032 flows; docs/cluster-format.md, "Limits").
inline constexpr std::size_t large_collective_flows = 50000;

/// What-if knobs.
struct SimOptions {
    /// Multiplies every link's bandwidth; scaled bandwidths must stay within the cluster
    /// files' bounds (1e3..1e18 bytes/s).
    double bandwidth_scale = 1.0;
    /// Multiplies every link's latency; scaled latencies must stay within 0..1000 s.
    double latency_scale = 1.0;
    /// (global GPU index, factor): that GPU runs its ops `factor` times slower.
    std::vector<std::pair<int, double>> stragglers;
    /// Start a device's gradient reduction when all its replicas start their last
    /// weight-gradient op (W or BW), overlapping it with that op and the pipeline's cool-down
    /// (Megatron-LM's --overlap-grad-reduce and PyTorch DDP's buckets), instead of after the
    /// whole pipeline (Megatron-LM's local DDP before the distributed optimizer).
    bool overlap_grad_reduce = true;
    /// With sharded optimizer state (SimWorkload::param_gather_bytes), all-gather a device's
    /// updated parameters from the iteration's start, beside its first forward, instead of
    /// after its reduce-scatter (Megatron-LM's --overlap-param-gather): that forward ends no
    /// earlier than the gather.
    bool overlap_param_gather = false;
    /// Optimizer post-validation (analysis::AnalyticEngine::post_validation): without
    /// overlap_grad_reduce a device's reduction starts when its own replicas' ops end, not
    /// after the whole pipeline.
    bool post_validation = false;
    /// The pipeline transfers and tensor-parallel collectives in the Timeline. Each device's
    /// data-parallel collectives (a record or two) are recorded either way.
    bool record_transfers = true;
    /// Simulate one replica's pipeline (and every replica's collectives) when the replicas
    /// are identical; see SimMode.
    bool symmetric = true;
    /// Simulate every ring step of every collective as point-to-point transfers instead of
    /// one set of concurrent flows per collective (slow; for validation).
    bool exact_collectives = false;
    /// Whether the data-parallel collectives (gradient reduction, parameter gathers) hand
    /// their transfers to helper actors, which keeps SimGrid's cost linear in the transfers
    /// in flight instead of quadratic (sim/simgrid/src/collectives.hpp, FlowSet): unset, from
    /// 1,024 transfers at once on; true: from two on; false: never. Likewise the pipeline
    /// devices' tensor- and context-parallel rings through a pair of helper actors per device
    /// (Courier): unset, where all devices' rings hold 4,096 transfers at once and the actors
    /// fit the kernel's mapping limit; true: always; false: never. The simulated times are
    /// the same either way (for validation).
    std::optional<bool> collective_helpers;
    /// The gradient all-reduce's algorithm (ring, tree or auto); unset: the cluster's
    /// ClusterSpec::nccl_algo. Reduce-scatters and all-gathers are rings (as in NCCL).
    std::optional<NcclAlgo> nccl_algo;
    /// Called during the run (from one second of wall time on, at most twice a second).
    std::function<void(const SimProgress&)> progress;
    /// Make every check the run makes, its memory and the kernel's mappings included, and
    /// return an empty result without simulating (a process may still run its simulation).
    bool check_only = false;
};

/// How the replicas were simulated. full: every replica's pipeline. symmetric: replica 0's
/// pipeline stands for all (they are identical: no stragglers, equal speeds, links loaded
/// evenly), while the collectives of all replicas still share the fabric.
enum class SimMode { full, symmetric };
/// "full" or "symmetric".
const char* to_string(SimMode mode);

/// Throws std::invalid_argument unless the scales are finite and keep every link of the
/// cluster within the bounds a cluster file may state, and every straggler is a GPU of the
/// layout with a factor ≥ 1. simulate() checks them; a caller may check before it starts.
void check_options(const SimOptions& options, const ClusterSpec& cluster, const Layout& layout);

/// One simulated iteration. `timeline` holds replica 0's pipeline (its devices are the
/// schedule's devices) with its transfers; gradient all-reduces appear as transfers of kind
/// data_parallel from a device to itself spanning the collective, an op's tensor-parallel
/// all-reduces (tensor_parallel) and its K/V ring (context_parallel) likewise, one transfer
/// per op with the bytes each GPU sends.
struct SimResult {
    Timeline timeline;
    double iteration_time = 0;  ///< until the last op or all-reduce of any replica ends
    std::vector<double> replica_makespan;
    double grad_reduce_time = 0;  ///< longest gradient all-reduce
    /// With SimOptions::overlap_param_gather: the longest parameter all-gather beside the
    /// first forward, and the most any device's first forward ended later for it (0 without).
    double param_gather_time = 0;
    double param_gather_exposed = 0;
    /// Per pipeline device, when its gradient reduction ended (0 without one).
    std::vector<double> grad_reduce_end;
    /// Per pipeline device, the longest over the simulated replicas of the time from its first
    /// op's start to the later of its last op's end and its gradient reduction's end: the
    /// window that optimizer post-validation repeats.
    std::vector<double> device_window;
    /// Per pipeline device, the algorithm of its gradient all-reduce (ring or tree; a
    /// distributed optimizer's reduce-scatter and all-gather are rings); empty when there are
    /// no replicas to reduce over.
    std::vector<NcclAlgo> grad_reduce_algorithms;
    std::size_t ops_simulated = 0;  ///< ops of the simulated replicas
    int gpus_used = 0;
    /// Per pipeline device of replica 0: how many times its costs its passes' compute took,
    /// the slowest of its TP and CP group's GPUs (1 / its node's speed, times a straggler
    /// factor). 1 where the cluster's GPUs are the ones the costs are for.
    std::vector<double> device_slowdown;
    /// The mean speed of the GPUs used against the GPU the costs are for (1 for the same GPU;
    /// its peak is that many times the costs' GPU's). Stragglers do not change it.
    double mean_gpu_speed = 1;
    SimMode mode = SimMode::full;
    std::string full_reason;  ///< why not symmetric (full mode only)
};

/// The engine plugin could not be found or loaded; what() is one line naming the file (or
/// where it was looked for) and the loader's reason.
class EngineUnavailable : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Loads the engine plugin unless it is loaded, and returns its path. Looks for
/// pipesim-simgrid.so at $PIPESIM_SIMGRID_ENGINE (a path; then only there) if set; else next
/// to the program, or to the shared object that holds this code (the Python module), then in
/// ../LIBDIR/pipesim from there (an installation), on the library path (the run path of build
/// trees' programs, LD_LIBRARY_PATH), and last in the configured LIBDIR/pipesim. Throws
/// EngineUnavailable. Programs that fork simulations call it before forking, so that the
/// children share the loaded engine instead of loading it each.
std::string load_engine();

/// Runs the simulation in the engine plugin (loading it first). Throws EngineUnavailable when
/// the plugin cannot be loaded, InvalidSchedule for an invalid schedule, std::invalid_argument
/// for a workload, cluster, layout or options that do not fit, or a run whose estimated
/// memory exceeds the address-space limit or the physical memory (one line with the
/// estimate), std::logic_error if called twice in one process, std::runtime_error naming the
/// waiting devices if the run does not finish or SimGrid's error if SimGrid fails.
SimResult simulate(const Schedule& schedule, const SimWorkload& workload,
                   const ClusterSpec& cluster, const Layout& layout,
                   const SimOptions& options = {});

}  // namespace pipesim::simgrid
