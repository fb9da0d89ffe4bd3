#pragma once
// Checks and derived tables of a simulation, before any SimGrid object exists.

#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid::detail {

/// Throws std::invalid_argument unless the workload has one entry per stage (per device for
/// gradient_bytes) and every byte count is in 0..1e15.
void check_workload(const SimWorkload& workload, const Schedule& schedule);

/// Each node's compute speed relative to the costs: its group's entry of `group_speeds`, or
/// without them the group's own speed (1 where unset). Throws std::invalid_argument for a
/// wrong count or a speed that is not finite and > 0.
std::vector<double> node_speeds(const ClusterSpec& cluster,
                                const std::vector<double>& group_speeds);

/// The (src, dst) device pairs that exchange pipeline messages, both directions, sorted: the
/// devices of adjacent stages (a microbatch's stages are a contiguous range).
std::vector<std::pair<int, int>> device_pairs(const Schedule& schedule);

/// Every GPU pair that exchanges data: pipeline neighbours, TP rings and CP rings of the first
/// `replicas` replicas, DP rings of all (gradient_rings()) where `replica_rings` (bytes cross
/// replicas), and then the DP trees (gradient_trees()) of the devices whose
/// `gradient_algorithms` entry is a tree.
std::vector<std::pair<int, int>> communicating_pairs(
    const std::vector<std::pair<int, int>>& devices, const Layout& layout, int replicas,
    int gpus_per_node, const std::vector<NcclAlgo>& gradient_algorithms = {},
    bool replica_rings = true);

}  // namespace pipesim::simgrid::detail
