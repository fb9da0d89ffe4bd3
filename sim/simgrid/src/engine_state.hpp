#pragma once
// What the SimGrid engine's actors share: engine.cpp sets it up before the run, actors.cpp
// runs the pipeline devices and the gradient reducers on it. Needs a live SimGrid engine.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

#include "collectives.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid::detail {

/// A pipeline message: identifies the output it carries. One per output slot and simulated
/// replica, allocated before the run; the mailbox carries a pointer to it.
struct Message {
    std::uint32_t slot = 0;
    Op producer;
    Op consumer;
    double sent = 0;
};

/// The run's shared state. Per-device vectors are indexed replica·pp + device over the
/// simulated replicas (1 in symmetric mode, all D otherwise).
struct EngineState {
    EngineState(const Schedule& sched, const SimWorkload& work, const Layout& lay,
                const SimOptions& opts)
        : schedule(sched), workload(work), layout(lay), options(opts) {}

    const Schedule& schedule;
    const SimWorkload& workload;
    const Layout& layout;
    const SimOptions& options;
    int stages = 0;
    int replicas = 1;  // replicas whose pipelines run
    CollectiveModel collectives = CollectiveModel::flow_set;
    std::vector<double> duration;              // pass_durations(workload.costs)
    std::vector<::simgrid::s4u::Host*> hosts;  // by global GPU index
    int gpus_per_node = 1;
    /// How the data-parallel collectives run their transfers, and the helper pairs each
    /// may take (FlowSet; engine.cpp's plan_helpers()).
    FlowHelpers helper_mode = FlowHelpers::automatic;
    std::size_t helper_cap = max_helpers;
    /// Whether each pipeline device runs its tensor- and context-parallel rings through a
    /// Courier of its own (engine.cpp's use_couriers()).
    bool couriers = false;
    // Bytes factor of a collective's hop inside a node: the port's bandwidth over NCCL's bus
    // bandwidth (ClusterSpec::intra_node_collective_bandwidth), 1 without one.
    double intra_node_scale = 1;
    // Per device: its gradient all-reduce's algorithm (gradient_algorithms()).
    std::vector<NcclAlgo> reduce_algorithm;
    std::vector<double> slowdown;            // per (replica, device): time multiplier
    std::vector<std::uint8_t> split;         // per (microbatch, stage): backward split into B, W
    std::vector<std::pair<int, int>> pairs;  // (src, dst) devices that exchange data, sorted
    std::vector<::simgrid::s4u::Mailbox*> channels;  // per (replica, pair)
    // Per (replica, pair): the most a message moves per second, NCCL's send/receive rate
    // between two GPUs of one node (ClusterSpec::intra_node_p2p_bandwidth); 0: unbounded.
    std::vector<double> channel_rates;
    // Per (replica, pair): the latency of the route between the pair's GPUs, which a message
    // of no bytes takes (detail::DeviceActor::wait_for_input).
    std::vector<double> channel_latency;
    std::vector<std::vector<Message>> messages;      // per replica, per output slot
    std::vector<std::vector<std::uint8_t>> arrived;  // per replica, per output slot
    std::vector<std::size_t> progress;               // per (replica, device): ops done
    std::vector<double> finish;                      // per (replica, device)
    std::vector<double> first_start;                 // per (replica, device): its first op's
    std::vector<int> devices_done;                   // per device: replicas finished
    std::vector<int> last_gradient_started;          // per device: replicas in their last W or BW
    // Per device: 1 while its parameter all-gather, moved to the iteration's start
    // (SimOptions::overlap_param_gather), is still running; its first F waits for it.
    std::vector<std::uint8_t> gather_pending;
    std::vector<double> gather_time;  // per device: its parameter all-gather's length
    // ZeRO-3's parameter all-gather before each F and backward, one collective over the
    // rails of every replica (DeviceActor::fetch_parameters): per device and op index, the
    // simulated replicas that have reached it, then fetch_done once it has moved; per device,
    // what its waiting replicas wait on. Only with every replica simulated.
    std::vector<std::vector<int>> fetch_arrived;
    std::vector<::simgrid::s4u::ConditionVariablePtr> fetch_moved;
    static constexpr int fetch_done = -1;
    std::vector<double> gather_exposed;  // per device: its first forward's wait for it
    int all_done = 0;
    ::simgrid::s4u::MutexPtr mutex;
    ::simgrid::s4u::ConditionVariablePtr changed;
    Timeline* timeline = nullptr;
    std::vector<double> reduce_end;   // per device
    std::vector<double> reduce_time;  // per device: its gradient all-reduce's length
    std::string error;
    // Progress reports (SimOptions::progress).
    std::size_t ops_done = 0;
    std::size_t ops_total = 0;
    double expected_time = 0;
    std::chrono::steady_clock::time_point started, last_report;

    /// Index of the (src, dst) device pair; the pair must be one of `pairs`.
    std::size_t pair_index(int src, int dst) const;
    /// Index into `channels` and `channel_rates` of the (src, dst) pair of `replica`.
    std::size_t channel_slot(int replica, int src, int dst) const {
        return static_cast<std::size_t>(replica) * pairs.size() + pair_index(src, dst);
    }
    ::simgrid::s4u::Mailbox* channel(int replica, int src, int dst) const {
        return channels[channel_slot(replica, src, dst)];
    }
    ::simgrid::s4u::Host* gpu(int replica, int device, int tp_rank) const {
        return hosts[gpu_index(layout, replica, device, tp_rank)];
    }
    /// Rings of global GPU indices as a collective, each hop inside a node at NCCL's rate.
    /// `flows`: how its transfers run (data_parallel_flows(), a Courier's, or from the
    /// calling actor).
    RingCollective collective(const std::vector<std::vector<int>>& gpu_rings,
                              FlowSet flows = FlowSet()) const;
    /// How a data-parallel collective named `name` runs its transfers (SimOptions::
    /// collective_helpers).
    FlowSet data_parallel_flows(std::string name) const;
    /// Counts one finished op and calls SimOptions::progress when it is due.
    void op_done();
    /// Reports a data-parallel collective of `flows` flows at once as it starts, from
    /// large_collective_flows on.
    void collective_starting(std::size_t flows) const;
};

/// Ring attention's K/V transfers of one device of one replica (context parallelism): one
/// ring per TP rank over its C context-parallel GPUs, each hop inside a node at the
/// collectives' rate. A pass's ring runs as one flow set carrying all its layers' steps
/// (each GPU sends its successor layers·(C − 1) blocks, two per step in a backward; the steps'
/// latencies are added once it ends), beside the attention compute of all blocks but the last
/// of each layer, which they overlap: the ring's part of the pass takes the longer of the two.
/// With equal steps that is, per layer, C − 1 steps of max(transfer, attention/C) each, the
/// ring-attention pipeline's own time (docs/cluster-format.md, "Context parallelism").
class CpRing {
  public:
    /// `flows`: how its transfers run (EngineState::collective()).
    CpRing(const EngineState& state, int replica, int device, FlowSet flows);
    /// Moves the blocks of `pass` on `stage` (W: none) beside the compute they overlap, and
    /// returns that compute's seconds (≤ `compute`, the pass's compute at this device's
    /// `slowdown`), which the caller no longer waits for. 0 without a ring.
    double run(Pass pass, int stage, double compute, double slowdown);
    /// The bytes each GPU of the ring sends for `pass` on `stage`: C − 1 blocks per layer, a
    /// block and its gradient in B. 0 without a ring or for W.
    double bytes(Pass pass, int stage) const;

  private:
    const CpRingWork& work_;
    int cp_;
    CollectiveModel collectives_;
    std::optional<RingCollective> rings_;
};

/// Runs one pipeline device of one replica: its ops in order, each after its input arrived,
/// then its output sent. Records replica 0's ops and transfers in the timeline.
class DeviceActor {
  public:
    DeviceActor(EngineState& state, int replica, int device)
        : s_(state), replica_(replica), device_(device) {}
    void operator()();

  private:
    void run();
    /// Waits for `op`'s inputs from other devices; returns the bytes that arrived (0: none
    /// came from another device).
    double wait_for_input(const Op& op);
    void send_output(const Op& op);
    /// Closes the sends whose messages their receivers took (with `all`: every send, waiting
    /// for those still on the way).
    void close_sends(bool all);
    bool split_at(int microbatch, int stage) const;
    /// ZeRO-3: all-gathers the parameters of `stage` before this device's op `k` over its
    /// data-parallel `rings`, `bytes` per ring. The gather is one collective of all replicas,
    /// as NCCL runs it: with every replica simulated, the last of them to reach op k runs it
    /// and the others wait until it has moved. Returns once it has.
    void fetch_parameters(RingCollective& rings, double bytes, std::size_t k);

    EngineState& s_;
    int replica_;
    int device_;
    // Messages sent and not yet closed, with their output slots. A detached send would sit on
    // one engine-wide list until its receiver takes it, searched whole by every send that
    // ends (SimGrid 3.32, CommImpl::finish): all replicas' messages queued in the pipelines,
    // about dp·p² of them in a 1F1B warm-up. Kept here, each sits on this actor's list alone.
    std::vector<std::pair<::simgrid::s4u::CommPtr, std::size_t>> sending_;
};

/// Reduces one device's gradients across all D replicas and their C context-parallel ranks,
/// which hold the same weights (T rails, each over NCCL-style channel
/// rings): an all-reduce, or with a distributed optimizer a reduce-scatter of the gradients
/// and an all-gather of the updated 16-bit parameters. With overlap it starts once every
/// simulated replica of the device started its last weight-gradient op (W or BW: the backward
/// of its last microbatch, during which Megatron's buckets are reduced); without, after the
/// whole pipeline.
class GradientReducer {
  public:
    GradientReducer(EngineState& state, int device) : s_(state), device_(device) {}
    void operator()();

  private:
    EngineState& s_;
    int device_;
};

}  // namespace pipesim::simgrid::detail
