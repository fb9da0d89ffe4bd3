#pragma once
// Collectives over rings and trees of GPUs, run from inside a SimGrid actor: the data-parallel
// gradient all-reduce (a ring or NCCL's tree), the tensor-parallel all-reduces, and a
// distributed optimizer's reduce-scatter and all-gather (rings). Needs a live, sealed SimGrid
// platform, except for the plain tables and NCCL's tuning model below.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid::detail {

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather };

/// Ring steps of one collective over `members` GPUs (Patarasuk & Yuan, 2009): 2(n−1) for an
/// all-reduce, n−1 for a reduce-scatter or an all-gather; 0 for fewer than 2 members.
int ring_steps(CollectiveKind kind, int members);

/// The rings NCCL runs side by side for one collective over `members` (global GPU indices in
/// ring order, `gpus_per_node` GPUs per node): when every node holds the same number k > 1 of
/// members and there are several nodes, k rings, ring j entering each node at its j-th member
/// and leaving it through the member before that, so that the k rings cross between nodes
/// through k different GPUs' NICs (NCCL's channels on a rail-optimized node) and each carries
/// 1/k of the data; otherwise the one ring `members`.
std::vector<std::vector<int>> channel_rings(const std::vector<int>& members, int gpus_per_node);

/// The rings that reduce pipeline device `device`'s gradients over the data-parallel replicas
/// and the context-parallel ranks (D·C GPUs holding the same weights): one rail per TP rank
/// (its GPUs in index order), each as channel_rings(). Every rail has
/// the same layout, so all rings have one size and there are `tp` × channels of them.
std::vector<std::vector<int>> gradient_rings(const Layout& layout, int device, int gpus_per_node);

/// One channel of NCCL's tree all-reduce over a rail (Sanders, Speck & Träff 2009; NCCL 2.4):
/// inside each node a chain of its members, head first, and between the nodes' heads two
/// complementary binary trees (double_binary_tree()), each reducing and broadcasting half of
/// the channel's bytes, pipelined.
struct TreeChannel {
    std::vector<std::vector<int>> chains;    ///< per node, in rail order: GPUs, head first
    std::array<std::vector<int>, 2> parent;  ///< per tree, per node: parent node, −1: root
};

/// NCCL's double binary tree over `nodes` nodes (src/graph/trees.cc). Tree 0: node x > 0 with
/// lowest set bit b hangs below x + b when x has bit 2b clear and x + b < nodes, else below
/// x − b, so that the odd nodes are its leaves and node 0, the root, has one child. Tree 1
/// is tree 0 mirrored (x → nodes − 1 − x) for an even count, shifted by one for an odd one,
/// so that most of tree 0's leaves are inner nodes of tree 1. Per tree, per node: the parent,
/// −1 at the root.
std::array<std::vector<int>, 2> double_binary_tree(int nodes);

/// The channels of a tree all-reduce over `members` (global GPU indices, in rail order), as
/// channel_rings() splits a ring: when every node holds the same number k > 1 of members and
/// there are several nodes, k channels, channel j's chain starting at each node's j-th member
/// so that the channels leave the nodes through k different NICs; otherwise one.
std::vector<TreeChannel> channel_trees(const std::vector<int>& members, int gpus_per_node);

/// gradient_rings()' rails as trees: one per TP rank, each as channel_trees().
std::vector<TreeChannel> gradient_trees(const Layout& layout, int device, int gpus_per_node);

/// The transfers (src, dst GPU) of one tree all-reduce on `channel`, each carrying half of the
/// channel's bytes: per tree, every edge between two nodes' heads and every link of every
/// node's chain once upwards (the reduction) and once downwards (the broadcast).
std::vector<std::pair<int, int>> tree_flows(const TreeChannel& channel);

/// The gradient all-reduce's algorithm of each pipeline device (SimResult::
/// grad_reduce_algorithms): the one `options` or else `cluster` asks for, or with auto the
/// one NCCL's tuning model predicts faster for the device's bytes over one rail
/// (nccl_all_reduce_times()); rings where a distributed optimizer reduce-scatters. Empty
/// when there are fewer than two GPUs to reduce over.
std::vector<NcclAlgo> gradient_algorithms(const ClusterSpec& cluster, const Layout& layout,
                                          const SimWorkload& workload, const SimOptions& options);

/// NCCL's predicted times (seconds) of an all-reduce, ring and tree.
struct AllReduceTimes {
    double ring = 0;
    double tree = 0;
};

/// The transfers in flight at once of pipeline device `device`'s gradient reduction with
/// `algorithm` (a ring's members times its channels, or every tree_flows() of
/// gradient_trees()); a distributed optimizer's gathers and ZeRO-3's fetches are rings.
std::size_t gradient_flow_count(const Layout& layout, int device, int gpus_per_node,
                                NcclAlgo algorithm);

/// NCCL's tuning model of an all-reduce of `bytes` per GPU over `ranks` GPUs on `nodes`
/// nodes, the same number on each, with `channels` rings (NCCL 2.30, src/graph/tuning.cc, the
/// Simple protocol, whose bandwidth the engine's flows reach): a latency from NCCL's base and
/// per-step hardware latencies — ring: 8.4 µs + (2(n−1) − 2(N−1))·3.4 µs over NVLink +
/// 2(N−1)·14 µs over the network, × 1.4 between nodes (its "plateau"); tree: 8.4 µs +
/// 2((n/N − 1)·4.0 µs + ⌊log2 N⌋·14 µs) — plus the bytes over the algorithm bandwidth that
/// NCCL derives from one bus bandwidth B (bytes/s): 2(n−1)/n·S/B for the ring, 2S/(0.92·c·B)
/// for the tree (0.92: NCCL's tree efficiency; c: its size correction, 0.5..0.9 below
/// 512 MiB).
AllReduceTimes nccl_all_reduce_times(int ranks, int nodes, int channels, double bytes,
                                     double bus_bandwidth);

/// How long `flows` (src GPU, dst GPU, bytes) take alone on the cluster, latencies aside: the
/// most loaded link direction's bytes over its bandwidth (max-min sharing of equal flows
/// reaches it exactly), a hop inside a node at NCCL's bus bandwidth when the cluster gives one.
/// gradient_algorithms() reads a ring's bus bandwidth from it.
double idle_transfer_time(const ClusterSpec& cluster, double bandwidth_scale,
                          const std::vector<std::pair<std::pair<int, int>, double>>& flows);

/// How a collective is simulated.
enum class CollectiveModel {
    /// One set of concurrent flows: each member sends steps·bytes/n to its successor in one
    /// flow, and the collective adds (steps − 1) route latencies. n flows per ring instead of
    /// steps·n; equal to `steps` when nothing else shares the links.
    flow_set,
    /// Every ring step as its own point-to-point transfers, each step waiting for the
    /// slowest member (exact; for validation).
    steps,
};

/// One transfer of a FlowSet: `bytes` from one GPU's host to another's.
struct HostFlow {
    ::simgrid::s4u::Host* src = nullptr;
    ::simgrid::s4u::Host* dst = nullptr;
    std::uint64_t bytes = 0;
    int source = 0;  ///< the source GPU's index, by which a FlowSet groups its transfers
};

/// Whether a FlowSet may hand its transfers to helper actors.
enum class FlowHelpers {
    automatic,  ///< from helpers_from transfers on (flow_helpers())
    never,      ///< every transfer from the calling actor, as SimGrid's host-to-host send
    always,     ///< from two transfers on (for validation)
};

/// The helper pairs (a sender and a receiver actor each) that a FlowSet of `flows` transfers
/// runs them with: none below helpers_from transfers, else ⌈√flows⌉, at most `cap`; with
/// `helpers` never none, with always from two transfers on.
std::size_t flow_helpers(std::size_t flows, FlowHelpers helpers, std::size_t cap);
constexpr std::size_t helpers_from = 1024;
/// The pipeline devices' ring transfers in flight at once (simulated devices × TP × CP ranks)
/// from which each device runs its rings through a Courier. Measured on Llama 3 405B at
/// `-p 32 -m 128 -t 8` in full mode: at 1,024 the couriers' hand-overs made the run 25 %
/// slower, at 2,048 they broke even, at 4,096 they halved it.
constexpr std::size_t couriers_from = 4096;
/// The transfers of all data-parallel collectives that may run at once from which every one
/// of them takes helpers, however small: the same count of transfers on SimGrid's one list
/// from which couriers pay (couriers_from: even at 2,048, twice as fast at 4,096). 16 devices'
/// reductions of 960 transfers each (llama3-405b, `-t 8 -p 16 --dp 120 --dist-opt` on
/// dgx-h100) ran 2.9 s with none and 1.2 s with them, where at dp 128 (1,024 each) they had them.
constexpr std::size_t helpers_from_in_flight = couriers_from;
/// Helper pairs of all the collectives that may run at once: 4,096 pairs are 16,384 of the
/// kernel's memory mappings (two per actor), a quarter of its default limit.
constexpr std::size_t helper_pairs_in_all = 4096;
/// Helper pairs of one collective at most.
constexpr std::size_t max_helpers = 256;

/// One pair of helper actors (a sender and a receiver) that carries the transfers of many
/// small collectives run one after another from one actor, such as a pipeline device's
/// tensor- and context-parallel rings on every pass (FlowSet): started with its first
/// transfers, stopped when the last FlowSet sharing it is gone. Each transfer runs from the
/// sender, moved to its source, to the receiver, moved to its destination, so that it sits on
/// the sender's own list rather than on SimGrid's engine-wide one (FlowSet).
class Courier {
  public:
    /// `name`: unique among the couriers of a run (it names the actors and mailboxes).
    explicit Courier(std::string name) : name_(std::move(name)) {}
    Courier(const Courier&) = delete;
    Courier& operator=(const Courier&) = delete;
    ~Courier();
    /// Starts every transfer of `flows` now and returns when the last has arrived.
    void run(const std::vector<HostFlow>& flows);

  private:
    struct Shared;
    std::string name_;
    std::shared_ptr<Shared> shared_;  // also held by the two actors
};

/// Transfers started together from inside an actor, waited for until the last has arrived.
///
/// SimGrid 3.32 keeps each host-to-host transfer (Comm::sendto) on one engine-wide list, and
/// every transfer that ends searches that list whole (CommImpl::finish): F transfers in flight
/// cost F² steps, over five minutes for the 131,000 flows per device of a tree all-reduce over
/// 16,384 GPUs. A large set is therefore handed to K helper pairs: a transfer through a
/// mailbox runs from its sender's host to its permanent receiver's host, so each pair's
/// sender moves to a transfer's source and its receiver to the destination before it starts,
/// and the transfer sits on that sender's own list, F/K long. Either way the network carries
/// the same transfers over the same routes from the same simulated moment; a test holds the
/// two against each other.
class FlowSet {
  public:
    /// `name`: unique among the flow sets that may run at once (it names the helpers'
    /// mailboxes).
    /// `cap`: helper pairs at most (flow_helpers()).
    explicit FlowSet(std::string name = {}, FlowHelpers helpers = FlowHelpers::never,
                     std::size_t cap = max_helpers)
        : name_(std::move(name)), helpers_(helpers), cap_(cap) {}
    /// A set whose transfers all go through `courier`, shared with other sets of the same
    /// actor; helpers and the host-to-host send are not used.
    explicit FlowSet(std::shared_ptr<Courier> courier) : courier_(std::move(courier)) {}
    /// Starts every transfer of `flows` now and returns when the last has arrived.
    void run(const std::vector<HostFlow>& flows);

  private:
    std::string name_;
    FlowHelpers helpers_ = FlowHelpers::never;
    std::size_t cap_ = max_helpers;
    std::shared_ptr<Courier> courier_;
    std::vector<::simgrid::s4u::CommPtr> comms_;
    std::vector<::simgrid::s4u::Mailbox*> boxes_;  // the helpers': one per transfer
};

/// Rings of GPUs (all of one size n) that run the same collective side by side, such as the
/// T rails of a data-parallel all-reduce. Keeps its transfer buffer so that repeated
/// collectives (several per op with tensor parallelism) do not allocate.
class RingCollective {
  public:
    /// `rings`: each ring's hosts in ring order; every ring has the same size. Routes between
    /// successive members must exist (their latency is read here). `hop_scale[r][k]`, when
    /// given, multiplies the bytes ring r's member k sends to member k + 1: the port's
    /// bandwidth over what the collective reaches on that hop (NCCL's bus bandwidth inside a
    /// node), so that the hop takes as long as it does under NCCL.
    /// `flows`: how its transfers run (FlowSet); `gpus`, when given: each ring's GPU
    /// indices, by which the FlowSet groups the transfers.
    explicit RingCollective(std::vector<std::vector<::simgrid::s4u::Host*>> rings,
                            std::vector<std::vector<double>> hop_scale = {},
                            FlowSet flows = FlowSet(), std::vector<std::vector<int>> gpus = {});

    /// Runs `count` back-to-back collectives of `bytes` (each ring's whole buffer; a step
    /// moves bytes/n per member) and returns when the last ring is done. Blocks the calling
    /// actor. Nothing happens for count = 0, bytes = 0 or rings of one member.
    void run(CollectiveKind kind, double bytes, int count, CollectiveModel model);
    /// The flows in flight at once: one per member of every ring.
    std::size_t flow_count() const {
        return rings_.empty() ? 0 : rings_.size() * rings_.front().size();
    }

  private:
    std::vector<std::vector<::simgrid::s4u::Host*>> rings_;
    std::vector<std::vector<double>> hop_scale_;  // empty, or one factor per hop of each ring
    std::vector<std::vector<int>> gpus_;          // empty, or each member's GPU index
    double latency_ = 0;  // the largest latency from a member to its successor
    FlowSet flow_set_;
    std::vector<HostFlow> flows_;
};

/// NCCL's tree all-reduce over tree channels (all of one shape, such as the T rails of a
/// gradient reduction), as one set of concurrent flows: every transfer of tree_flows() at once,
/// each carrying all its bytes, then the latencies of the pipeline's depth that the flows pay
/// only once: 2·(chain + tree path) route latencies, up and down. Alone on the network it
/// takes 2((k−1)·L_node + h·L_net) + max over link directions of bytes / bandwidth (h: the
/// trees' height).
class TreeCollective {
  public:
    /// `hosts`: every GPU's host by global index; routes between the flows' ends must exist.
    /// A hop inside a node moves `intra_node_scale` times its bytes (EngineState's).
    TreeCollective(const std::vector<TreeChannel>& channels,
                   const std::vector<::simgrid::s4u::Host*>& hosts, int gpus_per_node,
                   double intra_node_scale, FlowSet flows = FlowSet());

    /// One all-reduce of `bytes` per channel; returns when the last channel is done. Blocks
    /// the calling actor. The tree has no step-by-step form: both models run the flow set.
    void run(double bytes);
    /// The flows in flight at once: every tree edge and chain link, once each way per tree.
    std::size_t flow_count() const { return flows_.size(); }

  private:
    struct Flow {
        ::simgrid::s4u::Host* src;
        ::simgrid::s4u::Host* dst;
        double scale;  // bytes factor: half the channel's, times the intra-node scale
        int source;    // the source GPU's index
    };
    std::vector<Flow> flows_;
    double depth_latency_ = 0;  // the pipeline's depth, up and down, in route latencies
    double flow_latency_ = 0;   // the largest latency one flow pays
    FlowSet flow_set_;
    std::vector<HostFlow> sent_;
};

}  // namespace pipesim::simgrid::detail
