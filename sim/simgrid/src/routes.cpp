#include "routes.hpp"

namespace pipesim::simgrid::detail {

int zone_of(const ClusterSpec& cluster, int node) {
    if (cluster.topology != InterNodeTopology::fat_tree) return node / nodes_per_zone;
    const int per_leaf = (cluster.nodes_per_leaf + nodes_per_zone - 1) / nodes_per_zone;
    return leaf_of(cluster, node) * per_leaf + node % cluster.nodes_per_leaf / nodes_per_zone;
}

std::vector<LinkUse> links_between_nodes(const ClusterSpec& cluster, int a, int b) {
    if (cluster.topology != InterNodeTopology::fat_tree ||
        leaf_of(cluster, a) == leaf_of(cluster, b))
        return {};
    return {LinkUse{LinkKind::leaf_uplink, leaf_of(cluster, a), true},
            LinkUse{LinkKind::leaf_uplink, leaf_of(cluster, b), false}};
}

std::vector<LinkUse> route_links(const ClusterSpec& cluster, int src, int dst) {
    const int a = node_of(cluster, src);
    const int b = node_of(cluster, dst);
    if (a == b) return {LinkUse{LinkKind::port, src, true}, LinkUse{LinkKind::port, dst, false}};
    std::vector<LinkUse> links{nic_of(cluster, src, true)};
    for (const LinkUse& use : links_between_nodes(cluster, a, b))
        links.push_back(use);
    links.push_back(nic_of(cluster, dst, false));
    return links;
}

}  // namespace pipesim::simgrid::detail
