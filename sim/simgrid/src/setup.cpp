#include "setup.hpp"

#include "collectives.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/validate.hpp"

namespace pipesim::simgrid::detail {

void check_workload(const SimWorkload& w, const Schedule& schedule) {
    const int stages = schedule.stages();
    check_stage_costs(w.costs, stages);
    auto check_size = [&](std::size_t size, std::size_t expected, const char* what) {
        if (size != expected)
            throw std::invalid_argument(
                fmt::format("workload has {} {} entries, expected {}", size, what, expected));
    };
    check_size(w.message_bytes.size(), static_cast<std::size_t>(stages), "message_bytes");
    check_size(w.tp_allreduces_forward.size(), static_cast<std::size_t>(stages),
               "tp_allreduces_forward");
    check_size(w.tp_allreduces_backward.size(), static_cast<std::size_t>(stages),
               "tp_allreduces_backward");
    check_size(w.tp_allreduce_bytes.size(), static_cast<std::size_t>(stages), "tp_allreduce_bytes");
    check_size(w.gradient_bytes.size(), static_cast<std::size_t>(schedule.devices),
               "gradient_bytes");
    auto check_bytes = [](const std::vector<double>& values, const char* what) {
        for (std::size_t i = 0; i < values.size(); ++i)
            if (!std::isfinite(values[i]) || values[i] < 0 || values[i] > max_workload_bytes)
                throw std::invalid_argument(
                    fmt::format("workload {}[{}] = {} is not a byte count in 0..{:g}", what, i,
                                values[i], max_workload_bytes));
    };
    check_bytes(w.message_bytes, "message_bytes");
    check_bytes(w.tp_allreduce_bytes, "tp_allreduce_bytes");
    check_bytes(w.gradient_bytes, "gradient_bytes");
    if (!w.param_gather_bytes.empty()) {
        check_size(w.param_gather_bytes.size(), static_cast<std::size_t>(schedule.devices),
                   "param_gather_bytes");
        check_bytes(w.param_gather_bytes, "param_gather_bytes");
    }
    if (!w.param_fetch_bytes.empty()) {
        check_size(w.param_fetch_bytes.size(), static_cast<std::size_t>(stages),
                   "param_fetch_bytes");
        check_bytes(w.param_fetch_bytes, "param_fetch_bytes");
    }
    if (!w.cp_ring.layers.empty()) {
        check_size(w.cp_ring.layers.size(), static_cast<std::size_t>(stages), "cp_ring.layers");
        for (std::size_t s = 0; s < w.cp_ring.layers.size(); ++s)
            if (w.cp_ring.layers[s] < 0)
                throw std::invalid_argument(fmt::format(
                    "workload cp_ring.layers[{}] = {} is negative", s, w.cp_ring.layers[s]));
        check_bytes({w.cp_ring.block_bytes}, "cp_ring.block_bytes");
        for (const double t : {w.cp_ring.attention_forward, w.cp_ring.attention_backward})
            if (!(std::isfinite(t) && t >= 0))
                throw std::invalid_argument(fmt::format(
                    "workload cp_ring attention time {} is not a finite number ≥ 0", t));
    }
    if (!(w.tp_overlap >= 0 && w.tp_overlap <= 1))
        throw std::invalid_argument(
            fmt::format("workload tp_overlap = {} is not in 0..1", w.tp_overlap));
}

std::vector<double> node_speeds(const ClusterSpec& cluster,
                                const std::vector<double>& group_speeds) {
    if (!group_speeds.empty() && group_speeds.size() != cluster.nodes.size())
        throw std::invalid_argument(fmt::format("workload has {} group_speeds entries, expected {}",
                                                group_speeds.size(), cluster.nodes.size()));
    std::vector<double> speeds;
    for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
        const NodeGroup& g = cluster.nodes[i];
        const double speed = !group_speeds.empty() ? group_speeds[i] : g.speed > 0 ? g.speed : 1.0;
        if (!(speed > 0 && std::isfinite(speed)))
            throw std::invalid_argument(fmt::format(
                "node group {} ({}): speed must be a finite number > 0, got {}", i, g.gpu, speed));
        speeds.insert(speeds.end(), static_cast<std::size_t>(g.count), speed);
    }
    return speeds;
}

std::vector<std::pair<int, int>> device_pairs(const Schedule& schedule) {
    std::set<std::pair<int, int>> pairs;
    for (int s = 0; s + 1 < schedule.stages(); ++s) {
        const int a = schedule.stage_device[s];
        const int b = schedule.stage_device[s + 1];
        if (a == b) continue;
        pairs.emplace(a, b);
        pairs.emplace(b, a);
    }
    return {pairs.begin(), pairs.end()};
}

std::vector<std::pair<int, int>> communicating_pairs(
    const std::vector<std::pair<int, int>>& devices, const Layout& l, int replicas,
    int gpus_per_node, const std::vector<NcclAlgo>& gradient_algorithms, bool replica_rings) {
    std::set<std::pair<int, int>> pairs;
    for (int r = 0; r < replicas; ++r) {
        for (const auto& [a, b] : devices)
            pairs.emplace(gpu_index(l, r, a, 0), gpu_index(l, r, b, 0));
        for (int d = 0; d < l.pp; ++d)
            for (int t = 0; t < l.tp && l.tp > 1; ++t)
                pairs.emplace(gpu_index(l, r, d, t), gpu_index(l, r, d, (t + 1) % l.tp));
        for (int d = 0; d < l.pp; ++d)
            for (int t = 0; t < l.tp; ++t)
                for (int c = 0; c < l.cp && l.cp > 1; ++c)
                    pairs.emplace(gpu_index(l, r, d, t, c), gpu_index(l, r, d, t, (c + 1) % l.cp));
    }
    // Without bytes between replicas no ring runs: 4 million GPUs of unit costs (dp 65,536)
    // spent over 100 s putting their rings' pairs in this set.
    if (l.dp * l.cp > 1 && replica_rings)
        for (int d = 0; d < l.pp; ++d)
            for (const auto& ring : gradient_rings(l, d, gpus_per_node))
                for (std::size_t k = 0; k < ring.size(); ++k)
                    pairs.emplace(ring[k], ring[(k + 1) % ring.size()]);
    for (std::size_t d = 0; d < gradient_algorithms.size() && replica_rings; ++d)
        if (gradient_algorithms[d] == NcclAlgo::tree)
            for (const TreeChannel& channel : gradient_trees(l, static_cast<int>(d), gpus_per_node))
                for (const auto& flow : tree_flows(channel))
                    pairs.insert(flow);
    return {pairs.begin(), pairs.end()};
}

}  // namespace pipesim::simgrid::detail
