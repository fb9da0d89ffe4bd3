#include "collectives.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Link.hpp>

namespace pipesim::simgrid::detail {

namespace sg = ::simgrid::s4u;

int ring_steps(CollectiveKind kind, int members) {
    if (members < 2) return 0;
    return kind == CollectiveKind::all_reduce ? 2 * (members - 1) : members - 1;
}

std::vector<std::vector<int>> channel_rings(const std::vector<int>& members, int gpus_per_node) {
    // Members grouped by node, nodes in the order the ring first reaches them.
    std::vector<std::vector<int>> nodes;
    for (const int gpu : members) {
        const int node = gpu / gpus_per_node;
        if (nodes.empty() || nodes.back().front() / gpus_per_node != node) nodes.emplace_back();
        nodes.back().push_back(gpu);
    }
    const std::size_t k = nodes.empty() ? 0 : nodes.front().size();
    const bool even =
        std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == k; });
    if (nodes.size() < 2 || k < 2 || !even || nodes.size() * k != members.size()) return {members};
    std::vector<std::vector<int>> rings(k);
    for (std::size_t j = 0; j < k; ++j)
        for (const auto& node : nodes)
            for (std::size_t i = 0; i < k; ++i)
                rings[j].push_back(node[(i + j) % k]);
    return rings;
}

std::vector<std::vector<int>> gradient_rings(const Layout& layout, int device, int gpus_per_node) {
    std::vector<std::vector<int>> rings;
    for (int t = 0; t < layout.tp; ++t) {
        // Context-parallel ranks hold the same weights: they reduce with the replicas.
        std::vector<int> rail;
        for (int r = 0; r < layout.dp; ++r)
            for (int c = 0; c < layout.cp; ++c)
                rail.push_back(gpu_index(layout, r, device, t, c));
        std::sort(rail.begin(), rail.end());
        for (auto& ring : channel_rings(rail, gpus_per_node))
            rings.push_back(std::move(ring));
    }
    return rings;
}

RingCollective::RingCollective(std::vector<std::vector<sg::Host*>> rings,
                               std::vector<std::vector<double>> hop_scale)
    : rings_(std::move(rings)), hop_scale_(std::move(hop_scale)) {
    std::vector<sg::Link*> links;
    for (const auto& ring : rings_)
        for (std::size_t k = 0; ring.size() > 1 && k < ring.size(); ++k) {
            double latency = 0;
            links.clear();
            ring[k]->route_to(ring[(k + 1) % ring.size()], links, &latency);
            latency_ = std::max(latency_, latency);
        }
}

void RingCollective::run(CollectiveKind kind, double bytes, int count, CollectiveModel model) {
    const std::size_t n = rings_.empty() ? 0 : rings_.front().size();
    const int steps = ring_steps(kind, static_cast<int>(n)) * count;
    if (steps == 0 || !(bytes > 0)) return;
    const double chunk = bytes / static_cast<double>(n);
    // A flow set moves every step's chunk at once; a step sends one chunk per member.
    const int rounds = model == CollectiveModel::flow_set ? 1 : steps;
    const double per_flow = model == CollectiveModel::flow_set ? chunk * steps : chunk;
    comms_.reserve(rings_.size() * n);
    for (int round = 0; round < rounds; ++round) {
        comms_.clear();
        for (std::size_t r = 0; r < rings_.size(); ++r)
            for (std::size_t k = 0; k < n; ++k) {
                const double scale = hop_scale_.empty() ? 1.0 : hop_scale_[r][k];
                const auto flow_bytes = static_cast<std::uint64_t>(std::llround(per_flow * scale));
                comms_.push_back(
                    sg::Comm::sendto_async(rings_[r][k], rings_[r][(k + 1) % n], flow_bytes));
            }
        sg::Comm::wait_all(comms_);
    }
    // The steps' own latencies, which one flow pays only once.
    if (model == CollectiveModel::flow_set && steps > 1 && latency_ > 0)
        sg::this_actor::sleep_for((steps - 1) * latency_);
}

}  // namespace pipesim::simgrid::detail
