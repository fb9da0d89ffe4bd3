#pragma once
// Collectives over rings of GPUs, run from inside a SimGrid actor: the data-parallel gradient
// all-reduce, the tensor-parallel all-reduces, and (later) a distributed optimizer's
// reduce-scatter and all-gather. Needs a live, sealed SimGrid platform.

#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>

#include "sim/simgrid/layout.hpp"

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
    explicit RingCollective(std::vector<std::vector<::simgrid::s4u::Host*>> rings,
                            std::vector<std::vector<double>> hop_scale = {});

    /// Runs `count` back-to-back collectives of `bytes` (each ring's whole buffer; a step
    /// moves bytes/n per member) and returns when the last ring is done. Blocks the calling
    /// actor. Nothing happens for count = 0, bytes = 0 or rings of one member.
    void run(CollectiveKind kind, double bytes, int count, CollectiveModel model);

  private:
    std::vector<std::vector<::simgrid::s4u::Host*>> rings_;
    std::vector<std::vector<double>> hop_scale_;  // empty, or one factor per hop of each ring
    double latency_ = 0;  // the largest latency from a member to its successor
    std::vector<::simgrid::s4u::CommPtr> comms_;
};

}  // namespace pipesim::simgrid::detail
