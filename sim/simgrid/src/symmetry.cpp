#include "symmetry.hpp"

#include <map>

#include "routes.hpp"

namespace pipesim::simgrid::detail {

SymmetryPlan plan_symmetry(const ClusterSpec& cluster, const Layout& layout,
                           const std::vector<std::pair<int, int>>& pairs,
                           const std::vector<double>& slowdown, const SimOptions& options,
                           bool cp_rings) {
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
    plan.symmetric = true;
    return plan;
}

}  // namespace pipesim::simgrid::detail
