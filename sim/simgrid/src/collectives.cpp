#include "collectives.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "routes.hpp"

namespace pipesim::simgrid::detail {

namespace sg = ::simgrid::s4u;

namespace {

// `members` grouped by node, nodes in the order the rail first reaches them.
std::vector<std::vector<int>> members_by_node(const std::vector<int>& members, int gpus_per_node) {
    std::vector<std::vector<int>> nodes;
    for (const int gpu : members) {
        const int node = gpu / gpus_per_node;
        if (nodes.empty() || nodes.back().front() / gpus_per_node != node) nodes.emplace_back();
        nodes.back().push_back(gpu);
    }
    return nodes;
}

// NCCL's channels over `nodes`: the members per node k when every node holds k and there are
// several nodes (one channel per member of a node), else 1.
std::size_t channel_count(const std::vector<std::vector<int>>& nodes, std::size_t members) {
    const std::size_t k = nodes.empty() ? 0 : nodes.front().size();
    const bool even =
        std::all_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.size() == k; });
    return nodes.size() < 2 || k < 2 || !even || nodes.size() * k != members ? 1 : k;
}

// The GPUs that hold pipeline device `device`'s weights and reduce its gradients together,
// one rail per TP rank, each in index order: the D replicas and the C context-parallel ranks.
std::vector<std::vector<int>> gradient_rails(const Layout& layout, int device) {
    std::vector<std::vector<int>> rails;
    for (int t = 0; t < layout.tp; ++t) {
        std::vector<int>& rail = rails.emplace_back();
        for (int r = 0; r < layout.dp; ++r)
            for (int c = 0; c < layout.cp; ++c)
                rail.push_back(gpu_index(layout, r, device, t, c));
        std::sort(rail.begin(), rail.end());
    }
    return rails;
}

// The parent of node x > 0 in tree 0 of double_binary_tree().
int tree_parent(int x, int nodes) {
    const int b = x & -x;
    const int up = (x & (2 * b)) == 0 ? x + b : x - b;
    return up < nodes ? up : x - b;
}

// NCCL's tuning constants for the Simple protocol (NCCL 2.30.7, src/graph/tuning.cc:
// ncclTunerConstantsDefaults' base and hardware latencies, ncclTopoTuneModel's tree factor,
// ncclTopoGetAlgoTime's ring plateau and tree correction); latencies in microseconds.
constexpr double nccl_base_latency_us = 8.4;         // ring and tree alike
constexpr double nccl_ring_nvlink_latency_us = 3.4;  // per ring step inside a node
constexpr double nccl_tree_nvlink_latency_us = 4.0;  // per chain step inside a node
constexpr double nccl_net_latency_us = 14.0;         // per step between nodes, ring and tree
constexpr double nccl_ring_plateau = 1.4;      // ring latency factor between nodes (sm80 and later)
constexpr double nccl_tree_efficiency = 0.92;  // tree bus bandwidth factor for an all-reduce
// The tree's bandwidth correction for the Simple protocol by ⌊log2(bytes / 64)⌋, 0..22.
constexpr std::array<double, 23> nccl_tree_correction = {
    .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};

}  // namespace

int ring_steps(CollectiveKind kind, int members) {
    if (members < 2) return 0;
    return kind == CollectiveKind::all_reduce ? 2 * (members - 1) : members - 1;
}

std::vector<std::vector<int>> channel_rings(const std::vector<int>& members, int gpus_per_node) {
    const std::vector<std::vector<int>> nodes = members_by_node(members, gpus_per_node);
    const std::size_t k = channel_count(nodes, members.size());
    if (k == 1) return {members};
    std::vector<std::vector<int>> rings(k);
    for (std::size_t j = 0; j < k; ++j)
        for (const auto& node : nodes)
            for (std::size_t i = 0; i < k; ++i)
                rings[j].push_back(node[(i + j) % k]);
    return rings;
}

std::vector<std::vector<int>> gradient_rings(const Layout& layout, int device, int gpus_per_node) {
    std::vector<std::vector<int>> rings;
    for (const auto& rail : gradient_rails(layout, device))
        for (auto& ring : channel_rings(rail, gpus_per_node))
            rings.push_back(std::move(ring));
    return rings;
}

std::array<std::vector<int>, 2> double_binary_tree(int nodes) {
    std::array<std::vector<int>, 2> parent;
    parent[0].assign(static_cast<std::size_t>(nodes), -1);
    parent[1].assign(static_cast<std::size_t>(nodes), -1);
    for (int x = 1; x < nodes; ++x)
        parent[0][x] = tree_parent(x, nodes);
    for (int x = 0; x < nodes; ++x) {
        if (nodes % 2 == 0) {  // mirrored
            const int y = nodes - 1 - x;
            parent[1][x] = y == 0 ? -1 : nodes - 1 - tree_parent(y, nodes);
        } else {  // shifted by one
            const int y = (x + nodes - 1) % nodes;
            parent[1][x] = y == 0 ? -1 : (tree_parent(y, nodes) + 1) % nodes;
        }
    }
    return parent;
}

std::vector<TreeChannel> channel_trees(const std::vector<int>& members, int gpus_per_node) {
    const std::vector<std::vector<int>> nodes = members_by_node(members, gpus_per_node);
    const std::size_t k = channel_count(nodes, members.size());
    const std::array<std::vector<int>, 2> trees =
        double_binary_tree(static_cast<int>(nodes.size()));
    std::vector<TreeChannel> channels(k);
    for (std::size_t j = 0; j < k; ++j) {
        channels[j].parent = trees;
        for (const auto& node : nodes) {
            std::vector<int>& chain = channels[j].chains.emplace_back();
            for (std::size_t i = 0; i < node.size(); ++i)
                chain.push_back(node[(i + j) % node.size()]);
        }
    }
    return channels;
}

std::vector<TreeChannel> gradient_trees(const Layout& layout, int device, int gpus_per_node) {
    std::vector<TreeChannel> trees;
    for (const auto& rail : gradient_rails(layout, device))
        for (auto& channel : channel_trees(rail, gpus_per_node))
            trees.push_back(std::move(channel));
    return trees;
}

std::vector<std::pair<int, int>> tree_flows(const TreeChannel& channel) {
    std::vector<std::pair<int, int>> flows;
    for (const auto& parent : channel.parent) {
        for (std::size_t x = 0; x < parent.size(); ++x) {
            if (parent[x] < 0) continue;
            const int child = channel.chains[x].front();
            const int head = channel.chains[static_cast<std::size_t>(parent[x])].front();
            flows.emplace_back(child, head);
            flows.emplace_back(head, child);
        }
        for (const auto& chain : channel.chains)
            for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
                flows.emplace_back(chain[i + 1], chain[i]);
                flows.emplace_back(chain[i], chain[i + 1]);
            }
    }
    return flows;
}

std::size_t gradient_flow_count(const Layout& layout, int device, int gpus_per_node,
                                NcclAlgo algorithm) {
    std::size_t flows = 0;
    if (algorithm == NcclAlgo::tree) {
        for (const TreeChannel& channel : gradient_trees(layout, device, gpus_per_node))
            flows += tree_flows(channel).size();
    } else {
        for (const auto& ring : gradient_rings(layout, device, gpus_per_node))
            flows += ring.size() > 1 ? ring.size() : 0;
    }
    return flows;
}

double idle_transfer_time(const ClusterSpec& cluster, double bandwidth_scale,
                          const std::vector<std::pair<std::pair<int, int>, double>>& flows) {
    const double intra_scale =
        cluster.intra_node_collective_bandwidth > 0
            ? cluster.intra_node.bandwidth / cluster.intra_node_collective_bandwidth
            : 1.0;
    std::unordered_map<std::int64_t, double> seconds;  // per link direction
    for (const auto& [ends, bytes] : flows) {
        const auto [src, dst] = ends;
        const bool inside = node_of(cluster, src) == node_of(cluster, dst);
        for (const LinkUse& use : route_links(cluster, src, dst)) {
            const double bandwidth = use.kind == LinkKind::port  ? cluster.intra_node.bandwidth
                                     : use.kind == LinkKind::nic ? cluster.nic.bandwidth
                                                                 : cluster.leaf_uplink_bandwidth;
            seconds[use.key()] +=
                bytes * (inside ? intra_scale : 1.0) / (bandwidth * bandwidth_scale);
        }
    }
    double slowest = 0;
    for (const auto& [key, time] : seconds)
        slowest = std::max(slowest, time);
    return slowest;
}

AllReduceTimes nccl_all_reduce_times(int ranks, int nodes, int channels, double bytes,
                                     double bus_bandwidth) {
    const double us = 1e-6;
    const int inter_steps = nodes > 1 ? 2 * (nodes - 1) : 0;
    double ring = nccl_base_latency_us +
                  (2 * (ranks - 1) - inter_steps) * nccl_ring_nvlink_latency_us +
                  inter_steps * nccl_net_latency_us;
    if (nodes > 1 && bytes / (channels * ranks) >= 64) ring *= nccl_ring_plateau;
    const double tree =
        nccl_base_latency_us + 2 * ((ranks / nodes - 1) * nccl_tree_nvlink_latency_us +
                                    std::floor(std::log2(nodes)) * nccl_net_latency_us);
    const int log_size = static_cast<int>(std::floor(std::log2(std::max(1.0, bytes / 64))));
    const double correction = log_size < static_cast<int>(nccl_tree_correction.size())
                                  ? nccl_tree_correction[static_cast<std::size_t>(log_size)]
                                  : 1.0;
    // Bus bandwidth to algorithm bandwidth: n / (2(n−1)) for the ring, 1/2 for the tree.
    return {ring * us + 2.0 * (ranks - 1) / ranks * bytes / bus_bandwidth,
            tree * us + 2 * bytes / (nccl_tree_efficiency * correction * bus_bandwidth)};
}

std::vector<NcclAlgo> gradient_algorithms(const ClusterSpec& cluster, const Layout& layout,
                                          const SimWorkload& workload, const SimOptions& options) {
    if (layout.dp * layout.cp < 2) return {};
    const NcclAlgo asked = options.nccl_algo.value_or(cluster.nccl_algo);
    std::vector<NcclAlgo> algorithms;
    for (int d = 0; d < layout.pp; ++d) {
        if (!workload.param_gather_bytes.empty() || asked != NcclAlgo::auto_select) {
            algorithms.push_back(workload.param_gather_bytes.empty() ? asked : NcclAlgo::ring);
            continue;
        }
        // One rail alone, as NCCL sees its communicator; every rail has the same shape. Its
        // bus bandwidth is what a ring reaches: 2(n−1)/n bytes per byte reduced, over the time
        // the ring's flows for one byte take alone on the cluster.
        const std::vector<int> rail = gradient_rails(layout, d).front();
        const std::vector<std::vector<int>> rings = channel_rings(rail, cluster.gpus_per_node);
        const int n = static_cast<int>(rail.size());
        const double per_byte = 2.0 * (n - 1) / n;
        std::vector<std::pair<std::pair<int, int>, double>> flows;
        for (const auto& ring : rings)
            for (std::size_t k = 0; k < ring.size(); ++k)
                flows.push_back({{ring[k], ring[(k + 1) % ring.size()]},
                                 per_byte / static_cast<double>(rings.size())});
        const AllReduceTimes t = nccl_all_reduce_times(
            n, static_cast<int>(members_by_node(rail, cluster.gpus_per_node).size()),
            static_cast<int>(rings.size()), workload.gradient_bytes[d],
            per_byte / idle_transfer_time(cluster, options.bandwidth_scale, flows));
        algorithms.push_back(t.tree < t.ring ? NcclAlgo::tree : NcclAlgo::ring);
    }
    return algorithms;
}

std::size_t flow_helpers(std::size_t flows, FlowHelpers helpers, std::size_t cap) {
    if (helpers == FlowHelpers::never || flows < 2 ||
        (helpers == FlowHelpers::automatic && flows < helpers_from))
        return 0;
    const auto root = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(flows))));
    return std::max<std::size_t>(1, std::min({root, cap, max_helpers}));
}

namespace {

// Puts transfers flow_at(f), f in [begin, end), each through boxes[f], whose permanent receiver
// is `receiver`: a mailbox transfer runs between the two actors' hosts, so this actor moves
// to each transfer's source and the receiver to its destination first, and the transfer sits
// on this actor's own list. Appends the puts to `comms`.
template <typename FlowAt>
void put_between_hosts(std::size_t begin, std::size_t end, const FlowAt& flow_at,
                       const std::vector<sg::Mailbox*>& boxes, const sg::ActorPtr& receiver,
                       std::vector<sg::CommPtr>& comms) {
    for (std::size_t f = begin; f < end; ++f) {
        const HostFlow& flow = flow_at(f);
        if (sg::this_actor::get_host() != flow.src) sg::this_actor::set_host(flow.src);
        if (receiver->get_host() != flow.dst) receiver->set_host(flow.dst);
        comms.push_back(boxes[f]->put_async(const_cast<HostFlow*>(&flow), flow.bytes));
    }
}

}  // namespace

// What the courier's actors share with it: the transfers of the run in progress (none: stop),
// a mailbox per transfer slot whose permanent receiver is the receiving actor, and the
// semaphores that hand a run over and back.
struct Courier::Shared {
    const std::vector<HostFlow>* flows = nullptr;
    std::vector<sg::Mailbox*> boxes;
    sg::ActorPtr sender;
    sg::ActorPtr receiver;
    sg::SemaphorePtr send = sg::Semaphore::create(0);
    sg::SemaphorePtr receive = sg::Semaphore::create(0);
    sg::SemaphorePtr arrived = sg::Semaphore::create(0);
    sg::SemaphorePtr done = sg::Semaphore::create(0);
};

Courier::~Courier() {
    if (!shared_) return;
    // Both actors wake with no run and end; they hold the shared state until then.
    try {
        shared_->flows = nullptr;
        shared_->receive->release();
        shared_->send->release();
    } catch (...) {  // the owning actor is being killed: the daemons end with the run
    }
}

void Courier::run(const std::vector<HostFlow>& flows) {
    if (flows.empty()) return;
    if (!shared_) {
        shared_ = std::make_shared<Shared>();
        // Daemons: should the owner end without stopping them, they end with the run.
        shared_->receiver = sg::Actor::create(name_ + ".r", flows.front().dst, [s = shared_] {
            for (;;) {
                s->receive->acquire();
                if (s->flows == nullptr) {  // stopped: no reference to this actor is left
                    for (sg::Mailbox* box : s->boxes)
                        box->set_receiver(nullptr);
                    s->receiver = nullptr;
                    return;
                }
                // In the order sent, as they arrive (one mailbox each: see FlowSet::run).
                for (std::size_t f = 0; f < s->flows->size(); ++f)
                    s->boxes[f]->get<HostFlow>();
                s->arrived->release();
            }
        });
        shared_->receiver->daemonize();
        shared_->sender = sg::Actor::create(name_ + ".s", flows.front().src, [s = shared_] {
            std::vector<sg::CommPtr> comms;
            for (;;) {
                s->send->acquire();
                if (s->flows == nullptr) {
                    s->sender = nullptr;
                    return;
                }
                const std::vector<HostFlow>& current = *s->flows;
                put_between_hosts(
                    0, current.size(), [&](std::size_t f) -> const HostFlow& { return current[f]; },
                    s->boxes, s->receiver, comms);
                s->arrived->acquire();
                // All arrived: each wait returns at once and takes its transfer off this
                // actor's list (a test would leave it there).
                for (const sg::CommPtr& comm : comms)
                    comm->wait();
                comms.clear();
                s->done->release();
            }
        });
        shared_->sender->daemonize();
    }
    for (std::size_t f = shared_->boxes.size(); f < flows.size(); ++f) {
        sg::Mailbox* box = sg::Mailbox::by_name(fmt::format("{}.{}", name_, f));
        box->set_receiver(shared_->receiver);
        shared_->boxes.push_back(box);
    }
    shared_->flows = &flows;
    shared_->receive->release();
    shared_->send->release();
    shared_->done->acquire();
}

void FlowSet::run(const std::vector<HostFlow>& flows) {
    if (courier_) {
        courier_->run(flows);
        return;
    }
    const std::size_t helpers = flow_helpers(flows.size(), helpers_, cap_);
    if (helpers == 0) {
        comms_.clear();
        comms_.reserve(flows.size());
        for (const HostFlow& flow : flows)
            comms_.push_back(sg::Comm::sendto_async(flow.src, flow.dst, flow.bytes));
        sg::Comm::wait_all(comms_);
        return;
    }
    // The flows by source host, so that a sender moves once per source: moving an actor
    // visits every transfer on its list (s4u::Actor::set_host).
    std::vector<std::size_t> order(flows.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return flows[a].source < flows[b].source;
    });
    // Pair h sends flows order[h·F/K .. (h+1)·F/K), each through a mailbox of its own whose
    // permanent receiver is the pair's receiver, so that it starts as it is sent. The
    // receiver takes the transfers out in the order they were sent, as they arrive (a
    // mailbox holding many would be searched and shifted for each); the sender stays until
    // then, since an actor that ends cancels its transfers.
    for (std::size_t f = boxes_.size(); f < flows.size(); ++f)
        boxes_.push_back(sg::Mailbox::by_name(fmt::format("{}.{}", name_, f)));
    std::vector<sg::ActorPtr> actors;
    for (std::size_t h = 0; h < helpers; ++h) {
        const std::size_t begin = h * flows.size() / helpers;
        const std::size_t end = (h + 1) * flows.size() / helpers;
        const HostFlow& first = flows[order[begin]];
        const sg::SemaphorePtr arrived = sg::Semaphore::create(0);
        sg::ActorPtr receiver = sg::Actor::create(fmt::format("{}.{}r", name_, h), first.dst,
                                                  [this, begin, end, arrived] {
                                                      for (std::size_t f = begin; f < end; ++f) {
                                                          boxes_[f]->get<HostFlow>();
                                                          boxes_[f]->set_receiver(nullptr);
                                                      }
                                                      arrived->release();
                                                  });
        for (std::size_t f = begin; f < end; ++f)
            boxes_[f]->set_receiver(receiver);
        sg::ActorPtr sender = sg::Actor::create(
            fmt::format("{}.{}s", name_, h), first.src,
            [this, &flows, &order, begin, end, receiver, arrived] {
                std::vector<sg::CommPtr> comms;
                comms.reserve(end - begin);
                put_between_hosts(
                    begin, end, [&](std::size_t f) -> const HostFlow& { return flows[order[f]]; },
                    boxes_, receiver, comms);
                arrived->acquire();
                // Done: a test closes each without searching this actor's list of transfers,
                // as a wait would.
                for (const sg::CommPtr& comm : comms)
                    comm->test();
            });
        actors.push_back(std::move(receiver));
        actors.push_back(std::move(sender));
    }
    for (const sg::ActorPtr& actor : actors)
        actor->join();
}

RingCollective::RingCollective(std::vector<std::vector<sg::Host*>> rings,
                               std::vector<std::vector<double>> hop_scale, FlowSet flows,
                               std::vector<std::vector<int>> gpus)
    : rings_(std::move(rings)),
      hop_scale_(std::move(hop_scale)),
      gpus_(std::move(gpus)),
      flow_set_(std::move(flows)) {
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
    flows_.clear();
    for (std::size_t r = 0; r < rings_.size(); ++r)
        for (std::size_t k = 0; k < n; ++k) {
            const double scale = hop_scale_.empty() ? 1.0 : hop_scale_[r][k];
            flows_.push_back(HostFlow{rings_[r][k], rings_[r][(k + 1) % n],
                                      static_cast<std::uint64_t>(std::llround(per_flow * scale)),
                                      gpus_.empty() ? static_cast<int>(k) : gpus_[r][k]});
        }
    for (int round = 0; round < rounds; ++round)
        flow_set_.run(flows_);
    // The steps' own latencies, which one flow pays only once.
    if (model == CollectiveModel::flow_set && steps > 1 && latency_ > 0)
        sg::this_actor::sleep_for((steps - 1) * latency_);
}

TreeCollective::TreeCollective(const std::vector<TreeChannel>& channels,
                               const std::vector<sg::Host*>& hosts, int gpus_per_node,
                               double intra_node_scale, FlowSet flows)
    : flow_set_(std::move(flows)) {
    std::vector<sg::Link*> links;
    auto latency = [&](int src, int dst) {
        double l = 0;
        links.clear();
        hosts[static_cast<std::size_t>(src)]->route_to(hosts[static_cast<std::size_t>(dst)], links,
                                                       &l);
        return l;
    };
    for (const TreeChannel& channel : channels) {
        for (const auto& [src, dst] : tree_flows(channel)) {
            const bool inside = src / gpus_per_node == dst / gpus_per_node;
            flows_.push_back(Flow{hosts[static_cast<std::size_t>(src)],
                                  hosts[static_cast<std::size_t>(dst)],
                                  0.5 * (inside ? intra_node_scale : 1.0), src});
            flow_latency_ = std::max(flow_latency_, latency(src, dst));
        }
        // Each tree's critical path: the longest chain-and-tree path from a GPU to the root's
        // head, once up (the reduction) and once down (the broadcast).
        std::vector<double> chain(channel.chains.size(), 0.0);
        for (std::size_t x = 0; x < chain.size(); ++x)
            for (std::size_t i = 0; i + 1 < channel.chains[x].size(); ++i)
                chain[x] += latency(channel.chains[x][i + 1], channel.chains[x][i]);
        for (const auto& parent : channel.parent) {
            std::vector<double> to_root(parent.size(), -1.0);  // from a node's head
            auto path = [&](auto& self, std::size_t x) -> double {
                if (to_root[x] >= 0) return to_root[x];
                const int up = parent[x];
                to_root[x] = up < 0
                                 ? 0.0
                                 : latency(channel.chains[x].front(),
                                           channel.chains[static_cast<std::size_t>(up)].front()) +
                                       self(self, static_cast<std::size_t>(up));
                return to_root[x];
            };
            for (std::size_t x = 0; x < parent.size(); ++x)
                depth_latency_ = std::max(depth_latency_, 2 * (chain[x] + path(path, x)));
        }
    }
}

void TreeCollective::run(double bytes) {
    if (flows_.empty() || !(bytes > 0)) return;
    sent_.clear();
    sent_.reserve(flows_.size());
    for (const Flow& flow : flows_)
        sent_.push_back(HostFlow{flow.src, flow.dst,
                                 static_cast<std::uint64_t>(std::llround(bytes * flow.scale)),
                                 flow.source});
    flow_set_.run(sent_);
    // The pipeline's depth, of which the concurrent flows paid one route's latency.
    if (depth_latency_ > flow_latency_) sg::this_actor::sleep_for(depth_latency_ - flow_latency_);
}

}  // namespace pipesim::simgrid::detail
