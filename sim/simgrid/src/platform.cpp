#include "platform.hpp"

#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "routes.hpp"

namespace pipesim::simgrid::detail {

namespace sg = ::simgrid::s4u;

namespace {

// Links are created on first use so a big cluster costs only what the layout touches.
class LinkFactory {
  public:
    LinkFactory(sg::NetZone* zone, const ClusterSpec& cluster, const PlatformOptions& options)
        : zone_(zone), cluster_(cluster), options_(options) {}

    // Each route carries its class's whole latency split in two halves over its first and last
    // link: L/2 + L/2 is exactly L in binary floating point.
    sg::LinkInRoute get(const LinkUse& use) {
        auto it = links_.find(use.key() >> 1);
        if (it == links_.end()) {
            double bandwidth = cluster_.intra_node.bandwidth;
            double latency = cluster_.intra_node.latency / 2;
            const char* kind = "port";
            if (use.kind == LinkKind::nic) {
                bandwidth = cluster_.nic.bandwidth;
                latency = cluster_.nic.latency / 2;
                kind = "nic";
            } else if (use.kind == LinkKind::leaf_uplink) {
                bandwidth = cluster_.leaf_uplink_bandwidth;
                latency = 0;
                kind = "uplink";
            }
            auto* link = zone_->create_split_duplex_link(fmt::format("{}{}", kind, use.id),
                                                         bandwidth * options_.bandwidth_scale);
            link->set_latency(latency * options_.latency_scale);
            for (const bool up : {true, false}) {
                LinkUse direction = use;
                direction.up = up;
                const auto shared = options_.link_sharing.find(direction.key());
                if (shared != options_.link_sharing.end())
                    (up ? link->get_link_up() : link->get_link_down())
                        ->set_bandwidth(bandwidth * options_.bandwidth_scale / shared->second);
            }
            link->seal();
            it = links_.emplace(use.key() >> 1, link).first;
        }
        return sg::LinkInRoute(use.up ? it->second->get_link_up() : it->second->get_link_down());
    }

  private:
    sg::NetZone* zone_;
    const ClusterSpec& cluster_;
    const PlatformOptions& options_;
    std::unordered_map<std::int64_t, sg::SplitDuplexLink*> links_;
};

// Gives `zone`, not yet attached anywhere, the models of `from`, as attaching it below `from`
// would.
void take_models(sg::NetZone* zone, const sg::NetZone* from) {
    auto* impl = zone->get_impl();
    const auto* models = from->get_impl();
    impl->set_network_model(models->get_network_model());
    impl->set_cpu_pm_model(models->get_cpu_pm_model());
    impl->set_cpu_vm_model(models->get_cpu_vm_model());
    impl->set_disk_model(models->get_disk_model());
    impl->set_host_model(models->get_host_model());
}

// A few nodes (routes.hpp: zone_of): a full zone of their GPUs and a gateway router through
// which their NICs lead out.
struct NodeZone {
    sg::NetZone* zone = nullptr;
    ::simgrid::kernel::routing::NetPoint* gateway = nullptr;
};

}  // namespace

std::vector<sg::Host*> build_platform(const ClusterSpec& cluster, int gpu_count,
                                      const std::vector<std::pair<int, int>>& pairs,
                                      const PlatformOptions& options) {
    // Textbook links: bandwidth and latency as given (no TCP window cap, no cross-traffic
    // of acknowledgements, no LV08 correction factors). Must precede the first zone. The
    // window is set beyond any link's bandwidth-delay product rather than to 0: CM02 bounds a
    // flow by min(its rate, window / (2 · latency)), so a window of 0 would also drop the
    // rate bound of a NCCL point-to-point transfer inside a node (Comm::set_rate).
    sg::Engine::set_config("network/model:CM02");
    sg::Engine::set_config("network/crosstraffic:0");
    sg::Engine::set_config("network/TCP-gamma:1e30");

    // Every few nodes are a full zone of their GPUs behind a gateway, under a star (a star
    // cluster) or a full zone of these zones (a fat tree, whose routes between nodes depend
    // on their leaves), so routing memory grows with the GPUs (or zones²), not with GPUs² as
    // in one flat zone.
    //
    // SimGrid 3.32 seals a zone by listing every host under the engine's root zone, the
    // first zone created (NetZoneImpl::get_all_hosts walks the whole tree from there), so
    // sealing one zone after another under the root took zones × GPUs steps: 23 s of a
    // 262,144-GPU run in zones of 128. The first zone is therefore a "world" zone that holds
    // only the cluster zone, attached to it last: until then the zones sealed below the
    // cluster are out of the engine's sight, and each seal lists nothing. The hosts are
    // sealed as they are created, which is what those lists were for. No route has the world
    // as its common ancestor, so it needs none.
    sg::NetZone* world = sg::create_star_zone("world");
    const bool fat_tree = cluster.topology == InterNodeTopology::fat_tree;
    sg::NetZone* root =
        fat_tree ? sg::create_full_zone("cluster") : sg::create_star_zone("cluster");
    take_models(root, world);
    LinkFactory links(root, cluster, options);
    std::map<int, NodeZone> nodes;
    auto node_zone = [&](int node) -> NodeZone& {
        NodeZone& n = nodes[zone_of(cluster, node)];
        if (n.zone) return n;
        n.zone = sg::create_full_zone(fmt::format("zone{}", zone_of(cluster, node)));
        // Attached to the root only once its hosts and routes are in (below): SimGrid checks
        // each new host's and link's name by searching every zone under the root, so with the
        // zones attached from the start, building took zones × hosts steps (dp = 10,000 at
        // p = 16: 44 s, two thirds of it there). Until then it takes the root's models, as
        // set_parent() gives them.
        take_models(n.zone, root);
        n.gateway = n.zone->create_router(n.zone->get_name() + "-gw");
        return n;
    };

    std::vector<sg::Host*> hosts;
    hosts.reserve(static_cast<std::size_t>(gpu_count));
    // Compute is modelled as sleeps of known length, so the host speed is irrelevant.
    for (int g = 0; g < gpu_count; ++g)
        hosts.push_back(node_zone(node_of(cluster, g))
                            .zone->create_host(fmt::format("gpu{}", g), 1e15)
                            ->seal());

    std::vector<std::uint8_t> leaves_node(static_cast<std::size_t>(gpu_count), 0);
    std::vector<std::uint8_t> enters_node(static_cast<std::size_t>(gpu_count), 0);
    std::map<std::pair<int, int>, std::pair<int, int>> zone_pairs;  // → a pair of their nodes
    for (const auto& [src, dst] : pairs) {
        const int a = node_of(cluster, src);
        const int b = node_of(cluster, dst);
        if (zone_of(cluster, a) != zone_of(cluster, b)) {
            leaves_node[src] = enters_node[dst] = 1;
            zone_pairs.try_emplace({zone_of(cluster, a), zone_of(cluster, b)}, a, b);
            continue;
        }
        std::vector<sg::LinkInRoute> route;
        for (const LinkUse& use : route_links(cluster, src, dst))
            route.push_back(links.get(use));
        node_zone(a).zone->add_route(hosts[src]->get_netpoint(), hosts[dst]->get_netpoint(),
                                     nullptr, nullptr, route, false);
    }
    // Between zones: GPU → its NIC → the zone's gateway → [leaf uplinks] → …, and back.
    for (int g = 0; g < gpu_count; ++g) {
        NodeZone& n = node_zone(node_of(cluster, g));
        if (leaves_node[g])
            n.zone->add_route(hosts[g]->get_netpoint(), n.gateway, nullptr, nullptr,
                              {links.get(nic_of(cluster, g, true))}, false);
        if (enters_node[g])
            n.zone->add_route(n.gateway, hosts[g]->get_netpoint(), nullptr, nullptr,
                              {links.get(nic_of(cluster, g, false))}, false);
    }
    for (auto& [zone, n] : nodes) {
        n.zone->set_parent(root);
        n.zone->seal();
        if (fat_tree) continue;
        root->add_route(n.zone->get_netpoint(), nullptr, n.gateway, nullptr, {}, false);
        root->add_route(nullptr, n.zone->get_netpoint(), nullptr, n.gateway, {}, false);
    }
    // A full zone refuses empty routes: nodes of one leaf meet through a switch that never
    // limits a flow (FATPIPE: each flow may use the whole bandwidth, and it is unbounded).
    sg::Link* leaf_switch = nullptr;
    for (const auto& [zones, node_pair] : zone_pairs) {
        if (!fat_tree) break;
        const auto [a, b] = node_pair;
        std::vector<sg::LinkInRoute> route;
        for (const LinkUse& use : links_between_nodes(cluster, a, b))
            route.push_back(links.get(use));
        if (route.empty()) {
            if (!leaf_switch)
                leaf_switch = root->create_link("leaf-switch", 1e30)
                                  ->set_sharing_policy(sg::Link::SharingPolicy::FATPIPE)
                                  ->seal();
            route.emplace_back(leaf_switch);
        }
        const NodeZone& from = nodes[zones.first];
        const NodeZone& to = nodes[zones.second];
        root->add_route(from.zone->get_netpoint(), to.zone->get_netpoint(), from.gateway,
                        to.gateway, route, false);
    }
    root->set_parent(world);
    world->seal();
    return hosts;
}

}  // namespace pipesim::simgrid::detail
