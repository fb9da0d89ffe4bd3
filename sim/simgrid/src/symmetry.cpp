#include "symmetry.hpp"

#include <algorithm>
#include <map>

#include "routes.hpp"

namespace pipesim::simgrid::detail {

namespace {

// Whether a collective across the data-parallel (and context-parallel) ranks of one device
// and tensor rank may cross one of `links`: a group spread over nodes crosses its GPUs' NICs
// both ways, and a group spread over leaves their leaves' uplinks.
bool collectives_cross(const ClusterSpec& cluster, const Layout& layout,
                       const std::unordered_map<std::int64_t, int>& links) {
    const auto shared = [&](const LinkUse& use) { return links.count(use.key()) > 0; };
    for (int d = 0; d < layout.pp; ++d)
        for (int t = 0; t < layout.tp; ++t) {
            std::vector<int> members;
            for (int r = 0; r < layout.dp; ++r)
                for (int c = 0; c < layout.cp; ++c)
                    members.push_back(gpu_index(layout, r, d, t, c));
            const int first_node = node_of(cluster, members.front());
            const bool nodes = std::any_of(members.begin(), members.end(), [&](int g) {
                return node_of(cluster, g) != first_node;
            });
            if (!nodes) continue;
            for (int g : members)
                if (shared(nic_of(cluster, g, true)) || shared(nic_of(cluster, g, false)))
                    return true;
            // Between leaves: each member node's leaf uplink both ways, on the route to a
            // member on another leaf (any other: a leaf has one uplink). A star has no leaves.
            if (cluster.topology != InterNodeTopology::fat_tree) continue;
            const auto leaf = [&](int g) { return leaf_of(cluster, node_of(cluster, g)); };
            const int a = members.front();
            const auto other = std::find_if(members.begin(), members.end(),
                                            [&](int g) { return leaf(g) != leaf(a); });
            if (other == members.end()) continue;
            for (int g : members) {
                const int peer = leaf(g) != leaf(a) ? a : *other;
                for (const auto& [from, to] : {std::pair{g, peer}, std::pair{peer, g}})
                    for (const LinkUse& use :
                         links_between_nodes(cluster, node_of(cluster, from), node_of(cluster, to)))
                        if (shared(use)) return true;
            }
        }
    return false;
}

}  // namespace

SymmetryPlan plan_symmetry(const ClusterSpec& cluster, const Layout& layout,
                           const std::vector<std::pair<int, int>>& pairs,
                           const std::vector<double>& slowdown, const SimOptions& options,
                           bool cp_rings, bool replica_collectives) {
    SymmetryPlan plan;
    auto full = [&](const char* reason) {
        plan.reason = reason;
        plan.link_sharing.clear();
        return plan;
    };
    if (!options.symmetric) return full("symmetric mode is off");
    if (layout.dp < 2) return full("one replica");
    if (!options.stragglers.empty()) return full("a straggler");
    const int p = layout.pp;
    for (int r = 1; r < layout.dp; ++r)
        for (int d = 0; d < p; ++d)
            if (slowdown[static_cast<std::size_t>(r) * p + d] != slowdown[d])
                return full("replicas run at different speeds");
    // Replica 0's ring attention alone on a link that other replicas' rings cross too would
    // not see them.
    if (cp_rings) {
        std::unordered_map<std::int64_t, int> ring_replica;
        for (int r = 0; r < layout.dp; ++r)
            for (int d = 0; d < p; ++d)
                for (int t = 0; t < layout.tp; ++t)
                    for (int c = 0; c < layout.cp; ++c)
                        for (const LinkUse& use :
                             route_links(cluster, gpu_index(layout, r, d, t, c),
                                         gpu_index(layout, r, d, t, (c + 1) % layout.cp)))
                            if (ring_replica.emplace(use.key(), r).first->second != r)
                                return full("replicas' context-parallel rings share links");
    }
    // Per link direction: each replica's device pairs crossing it, in pair order.
    std::unordered_map<std::int64_t, std::map<int, std::vector<int>>> crossings;
    for (int r = 0; r < layout.dp; ++r)
        for (std::size_t i = 0; i < pairs.size(); ++i)
            for (const LinkUse& use : route_links(cluster, gpu_index(layout, r, pairs[i].first, 0),
                                                  gpu_index(layout, r, pairs[i].second, 0)))
                crossings[use.key()][r].push_back(static_cast<int>(i));
    for (const auto& [link, by_replica] : crossings) {
        if (by_replica.size() < 2) continue;
        for (const auto& [replica, crossing] : by_replica)
            if (crossing != by_replica.begin()->second)
                return full("replicas' messages load links unevenly");
        plan.link_sharing[link] = static_cast<int>(by_replica.size());
    }
    // Replica 0's messages see a shared link at 1/k of its bandwidth, which is the link's for
    // every flow: a collective across the replicas, all of them simulated, crossing it would
    // see that share too and count the others' messages twice (a reduction over a node's one
    // NIC took twice the closed form's time). The full simulation shares such links as they
    // are.
    if (replica_collectives && !plan.link_sharing.empty() &&
        collectives_cross(cluster, layout, plan.link_sharing))
        return full(
            "replicas' pipeline messages share a link that the data-parallel "
            "collectives cross");
    plan.symmetric = true;
    return plan;
}

}  // namespace pipesim::simgrid::detail
