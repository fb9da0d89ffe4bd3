#pragma once
// Which links of the cluster model a transfer crosses (docs/cluster-format.md, "The model").
// Plain data: the platform builds its SimGrid routes from it, and the symmetry check counts
// how many replicas' transfers share each link, without SimGrid.

#include <cstdint>
#include <vector>

#include "sim/simgrid/cluster.hpp"

namespace pipesim::simgrid::detail {

enum class LinkKind : std::uint8_t { port, nic, leaf_uplink };

/// One direction of one link: a GPU's port into its node switch (id = GPU), a NIC (id = GPU
/// with a NIC per GPU, else the node), or a fat-tree leaf's uplink (id = leaf).
struct LinkUse {
    LinkKind kind = LinkKind::port;
    int id = 0;
    bool up = true;  ///< towards the switch or spine; false: away from it

    bool operator==(const LinkUse&) const = default;
    /// A number that identifies the link direction.
    std::int64_t key() const {
        return (static_cast<std::int64_t>(kind) << 40) | (static_cast<std::int64_t>(id) << 1) |
               (up ? 1 : 0);
    }
};

/// The node of GPU `gpu`.
inline int node_of(const ClusterSpec& cluster, int gpu) {
    return gpu / cluster.gpus_per_node;
}

/// The NIC that traffic of GPU `gpu` leaves and enters its node through.
inline LinkUse nic_of(const ClusterSpec& cluster, int gpu, bool up) {
    return {LinkKind::nic, cluster.nic_per_gpu ? gpu : node_of(cluster, gpu), up};
}

/// The leaf switch of a node in a fat tree.
inline int leaf_of(const ClusterSpec& cluster, int node) {
    return node / cluster.nodes_per_leaf;
}

/// Nodes per routing zone (platform.cpp): SimGrid looks every new host and link name up in
/// every zone, so one zone per node would make building a 2,048-node cluster quadratic.
constexpr int nodes_per_zone = 16;

/// The routing zone of a node: `nodes_per_zone` consecutive nodes, never across fat-tree
/// leaves (the routes between zones depend on their leaves).
int zone_of(const ClusterSpec& cluster, int node);

/// The links between the NICs of two different nodes: a fat tree's two leaf uplinks when the
/// nodes are on different leaves, else none.
std::vector<LinkUse> links_between_nodes(const ClusterSpec& cluster, int node_a, int node_b);

/// The links from GPU `src` to GPU `dst` (src ≠ dst), in order: inside a node the two ports;
/// between nodes the two NICs, with the two leaves' uplinks between leaves of a fat tree.
std::vector<LinkUse> route_links(const ClusterSpec& cluster, int src, int dst);

}  // namespace pipesim::simgrid::detail
