#pragma once
// Symmetric mode: when every data-parallel replica runs the same pipeline at the same pace,
// the engine simulates one replica's pipeline and the collectives of all replicas.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid::detail {

struct SymmetryPlan {
    bool symmetric = false;
    std::string reason;  ///< why not, when not
    /// Link directions (LinkUse::key()) that pipeline messages of k > 1 replicas cross, each
    /// replica with the same messages: k. Replica 0 alone on a link of bandwidth B/k sees
    /// the share it would get beside the other k − 1 replicas' identical messages.
    std::unordered_map<std::int64_t, int> link_sharing;
};

/// Decides the mode. Symmetric needs SimOptions::symmetric, more than one replica, no
/// stragglers, every replica's devices at replica 0's speeds (`slowdown` per replica·pp +
/// device), and pipeline links loaded evenly: the replicas whose messages cross a link all
/// cross it with the same device pairs, and with `cp_rings` (ring attention's transfers) no
/// link crossed by the context-parallel rings of two replicas, and with
/// `replica_collectives` (gradient reductions, parameter gathers across the replicas) no
/// link that two replicas' messages share and those collectives cross. `pairs`: the (src,
/// dst) devices that exchange messages.
SymmetryPlan plan_symmetry(const ClusterSpec& cluster, const Layout& layout,
                           const std::vector<std::pair<int, int>>& pairs,
                           const std::vector<double>& slowdown, const SimOptions& options,
                           bool cp_rings, bool replica_collectives);

}  // namespace pipesim::simgrid::detail
