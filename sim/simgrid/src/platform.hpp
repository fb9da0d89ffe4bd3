#pragma once
// Builds the SimGrid platform of a cluster: hosts for the GPUs a layout uses, their links,
// and routes for the GPU pairs that communicate. Needs a live SimGrid engine.

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "sim/simgrid/cluster.hpp"

namespace pipesim::simgrid::detail {

struct PlatformOptions {
    double bandwidth_scale = 1.0;
    double latency_scale = 1.0;
    /// Link directions (LinkUse::key()) whose bandwidth is divided by the given count.
    std::unordered_map<std::int64_t, int> link_sharing = {};
};

/// Creates hosts "gpu0".."gpu{count−1}" (GPU g is on node g / gpus_per_node) and routes for
/// every (src, dst) pair in `pairs` (routes.hpp says which links). Zones nest (cluster, fat
/// tree leaves, nodes) so that memory grows with the GPUs, not their square. Returns the hosts
/// by GPU index.
std::vector<::simgrid::s4u::Host*> build_platform(const ClusterSpec& cluster, int gpu_count,
                                                  const std::vector<std::pair<int, int>>& pairs,
                                                  const PlatformOptions& options);

}  // namespace pipesim::simgrid::detail
