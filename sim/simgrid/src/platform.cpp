#include "platform.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace pipesim::detail {

namespace sg = simgrid::s4u;

namespace {

using Direction = sg::LinkInRoute::Direction;

// Links are created on first use so a big cluster costs only what the layout touches.
class LinkFactory {
  public:
    LinkFactory(sg::NetZone* zone, const ClusterSpec& cluster, const PlatformOptions& options)
        : zone_(zone), cluster_(cluster), options_(options) {}

    // Each route carries its class's whole latency split in two halves over its first and last
    // link: L/2 + L/2 is exactly L in binary floating point.
    sg::SplitDuplexLink* gpu_port(int gpu) {
        return get(ports_, gpu, "port", cluster_.intra_node.bandwidth,
                   cluster_.intra_node.latency / 2);
    }
    sg::SplitDuplexLink* nic(int gpu) {
        const int id = cluster_.nic_per_gpu ? gpu : gpu / cluster_.gpus_per_node;
        return get(nics_, id, "nic", cluster_.nic.bandwidth, cluster_.nic.latency / 2);
    }
    sg::SplitDuplexLink* leaf_uplink(int leaf) {
        return get(uplinks_, leaf, "uplink", cluster_.leaf_uplink_bandwidth, 0.0);
    }

  private:
    sg::SplitDuplexLink* get(std::unordered_map<int, sg::SplitDuplexLink*>& cache, int id,
                             const char* kind, double bandwidth, double latency) {
        auto it = cache.find(id);
        if (it != cache.end()) return it->second;
        auto* link = zone_->create_split_duplex_link(fmt::format("{}{}", kind, id),
                                                     bandwidth * options_.bandwidth_scale);
        link->set_latency(latency * options_.latency_scale);
        link->seal();
        cache.emplace(id, link);
        return link;
    }

    sg::NetZone* zone_;
    const ClusterSpec& cluster_;
    const PlatformOptions& options_;
    std::unordered_map<int, sg::SplitDuplexLink*> ports_, nics_, uplinks_;
};

}  // namespace

std::vector<sg::Host*> build_platform(const ClusterSpec& cluster, int gpu_count,
                                      const std::vector<std::pair<int, int>>& pairs,
                                      const PlatformOptions& options) {
    // Textbook links: bandwidth and latency as given (no TCP window cap, no cross-traffic
    // of acknowledgements, no LV08 correction factors). Must precede the first zone.
    sg::Engine::set_config("network/model:CM02");
    sg::Engine::set_config("network/crosstraffic:0");
    sg::Engine::set_config("network/TCP-gamma:0");

    sg::NetZone* zone = sg::create_full_zone("cluster");
    std::vector<sg::Host*> hosts;
    hosts.reserve(static_cast<std::size_t>(gpu_count));
    // Compute is modelled as sleeps of known length, so the host speed is irrelevant.
    for (int g = 0; g < gpu_count; ++g)
        hosts.push_back(zone->create_host(fmt::format("gpu{}", g), 1e15)->seal());

    LinkFactory links(zone, cluster, options);
    auto node_of = [&](int gpu) { return gpu / cluster.gpus_per_node; };
    for (const auto& [src, dst] : pairs) {
        std::vector<sg::LinkInRoute> route;
        if (node_of(src) == node_of(dst)) {
            route = {sg::LinkInRoute(links.gpu_port(src)->get_link_up()),
                     sg::LinkInRoute(links.gpu_port(dst)->get_link_down())};
        } else {
            route.emplace_back(links.nic(src)->get_link_up());
            if (cluster.topology == InterNodeTopology::fat_tree) {
                const int src_leaf = node_of(src) / cluster.nodes_per_leaf;
                const int dst_leaf = node_of(dst) / cluster.nodes_per_leaf;
                if (src_leaf != dst_leaf) {
                    route.emplace_back(links.leaf_uplink(src_leaf)->get_link_up());
                    route.emplace_back(links.leaf_uplink(dst_leaf)->get_link_down());
                }
            }
            route.emplace_back(links.nic(dst)->get_link_down());
        }
        zone->add_route(hosts[src]->get_netpoint(), hosts[dst]->get_netpoint(), nullptr, nullptr,
                        route, false);
    }
    zone->seal();
    return hosts;
}

}  // namespace pipesim::detail
