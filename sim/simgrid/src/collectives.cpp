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

RingCollective::RingCollective(std::vector<std::vector<sg::Host*>> rings)
    : rings_(std::move(rings)) {
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
    const auto flow_bytes = static_cast<std::uint64_t>(std::llround(per_flow));
    comms_.reserve(rings_.size() * n);
    for (int round = 0; round < rounds; ++round) {
        comms_.clear();
        for (const auto& ring : rings_)
            for (std::size_t k = 0; k < n; ++k)
                comms_.push_back(sg::Comm::sendto_async(ring[k], ring[(k + 1) % n], flow_bytes));
        sg::Comm::wait_all(comms_);
    }
    // The steps' own latencies, which one flow pays only once.
    if (model == CollectiveModel::flow_set && steps > 1 && latency_ > 0)
        sg::this_actor::sleep_for((steps - 1) * latency_);
}

}  // namespace pipesim::simgrid::detail
