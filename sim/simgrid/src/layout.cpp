#include "sim/simgrid/layout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid {

namespace {

// The bounds cluster files are held to (cluster.cpp): 1e-6..1e9 GB/s and 0..1e9 µs.
constexpr double min_bandwidth = 1e3;   // bytes/s
constexpr double max_bandwidth = 1e18;  // bytes/s
constexpr double max_latency = 1e3;     // seconds

std::string_view dim_name(ParallelDim d) {
    switch (d) {
        case ParallelDim::tp:
            return "tp";
        case ParallelDim::dp:
            return "dp";
        case ParallelDim::pp:
            return "pp";
        case ParallelDim::cp:
            return "cp";
    }
    return "?";
}

}  // namespace

std::array<ParallelDim, 4> parse_layout_order(const std::string& text) {
    const auto repeated = [&] {
        return std::invalid_argument(fmt::format(
            "layout order '{}': name each of tp, dp, pp exactly once (and cp at most once)", text));
    };
    std::array<ParallelDim, 4> order{};
    std::size_t start = 0;
    int count = 0;
    bool seen[4] = {false, false, false, false};
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const std::string part =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        ParallelDim d;
        if (part == "tp")
            d = ParallelDim::tp;
        else if (part == "dp")
            d = ParallelDim::dp;
        else if (part == "pp")
            d = ParallelDim::pp;
        else if (part == "cp")
            d = ParallelDim::cp;
        else
            throw std::invalid_argument(fmt::format(
                "layout order '{}': expected tp, dp, pp (and cp) separated by commas, got '{}'",
                text, part));
        if (count == 4 || seen[static_cast<int>(d)]) throw repeated();
        seen[static_cast<int>(d)] = true;
        order[count++] = d;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (count != (seen[static_cast<int>(ParallelDim::cp)] ? 4 : 3)) throw repeated();
    if (count == 3) {  // cp right after tp
        int k = 3;
        for (; order[k - 1] != ParallelDim::tp; --k)
            order[k] = order[k - 1];
        order[k] = ParallelDim::cp;
    }
    return order;
}

std::string layout_order_string(const std::array<ParallelDim, 4>& order) {
    return fmt::format("{},{},{},{}", dim_name(order[0]), dim_name(order[1]), dim_name(order[2]),
                       dim_name(order[3]));
}

int gpu_index(const Layout& layout, int replica, int device, int tp_rank, int cp_rank) {
    int index = 0;
    int stride = 1;
    for (ParallelDim d : layout.order) {
        switch (d) {
            case ParallelDim::tp:
                index += tp_rank * stride;
                stride *= layout.tp;
                break;
            case ParallelDim::dp:
                index += replica * stride;
                stride *= layout.dp;
                break;
            case ParallelDim::pp:
                index += device * stride;
                stride *= layout.pp;
                break;
            case ParallelDim::cp:
                index += cp_rank * stride;
                stride *= layout.cp;
                break;
        }
    }
    return index;
}

void check_layout(const Layout& layout, const ClusterSpec& cluster) {
    if (layout.dp < 1 || layout.pp < 1 || layout.tp < 1 || layout.cp < 1)
        throw std::invalid_argument(fmt::format("layout dp={} pp={} tp={} cp={}: each must be ≥ 1",
                                                layout.dp, layout.pp, layout.tp, layout.cp));
    const long long needed = 1LL * layout.dp * layout.pp * layout.tp * layout.cp;
    if (needed > cluster.gpu_count())
        throw std::invalid_argument(fmt::format(
            "layout dp={} × pp={} × tp={}{} needs {} GPUs; cluster '{}' has {} ({} node{} × {})",
            layout.dp, layout.pp, layout.tp,
            layout.cp > 1 ? fmt::format(" × cp={}", layout.cp) : std::string(), needed,
            cluster.name, cluster.gpu_count(), cluster.node_count(),
            cluster.node_count() == 1 ? "" : "s", cluster.gpus_per_node));
    for (int r = 0; r < layout.dp; ++r)
        for (int d = 0; d < layout.pp; ++d)
            for (int c = 0; c < layout.cp; ++c) {
                const int node = gpu_index(layout, r, d, 0, c) / cluster.gpus_per_node;
                for (int t = 1; t < layout.tp; ++t)
                    if (gpu_index(layout, r, d, t, c) / cluster.gpus_per_node != node)
                        throw std::invalid_argument(fmt::format(
                            "layout order {} puts the tensor-parallel group of replica {} device "
                            "{} on several nodes; tensor parallelism must stay inside a node of "
                            "{} GPUs",
                            layout_order_string(layout.order), r, d, cluster.gpus_per_node));
            }
}

void check_options(const SimOptions& options, const ClusterSpec& cluster, const Layout& layout) {
    if (!(options.bandwidth_scale > 0 && std::isfinite(options.bandwidth_scale)) ||
        !(options.latency_scale >= 0 && std::isfinite(options.latency_scale)))
        throw std::invalid_argument("bandwidth scale must be > 0 and latency scale ≥ 0");
    auto check_link = [&](const char* name, double bandwidth, double latency) {
        const double b = bandwidth * options.bandwidth_scale;
        const double l = latency * options.latency_scale;
        if (!(b >= min_bandwidth && b <= max_bandwidth))
            throw std::invalid_argument(fmt::format(
                "bandwidth scale {:g} makes the {} bandwidth {:g} GB/s; scaled links must stay "
                "within 1e-06..1e+09 GB/s, as in cluster files",
                options.bandwidth_scale, name, b / 1e9));
        if (!(l <= max_latency))
            throw std::invalid_argument(fmt::format(
                "latency scale {:g} makes the {} latency {:g} µs; scaled links must stay within "
                "0..1e+09 µs, as in cluster files",
                options.latency_scale, name, l * 1e6));
    };
    // The algorithm of the gradient all-reduce: a run without one would ignore it silently.
    if (options.nccl_algo && layout.dp * layout.cp < 2)
        throw std::invalid_argument(
            "--nccl-algo sets the gradient all-reduce's algorithm, which needs data or context "
            "parallelism (--dp D or --cp C above 1): there is no gradient reduction");
    check_link("intra-node", cluster.intra_node.bandwidth, cluster.intra_node.latency);
    check_link("NIC", cluster.nic.bandwidth, cluster.nic.latency);
    if (cluster.topology == InterNodeTopology::fat_tree)
        check_link("leaf uplink", cluster.leaf_uplink_bandwidth, 0);
    for (const auto& [gpu, factor] : options.stragglers) {
        if (gpu < 0 || gpu >= layout.gpus())
            throw std::invalid_argument(
                fmt::format("straggler GPU {} is not one of the {} GPUs in use (0..{})", gpu,
                            layout.gpus(), layout.gpus() - 1));
        // A straggler is slower: a factor below 1 made a faster GPU under that name.
        if (!(factor >= 1 && std::isfinite(factor)))
            throw std::invalid_argument(fmt::format(
                "straggler GPU {}: factor must be a number ≥ 1 (it runs that many times "
                "slower), got {}; a faster GPU is a node group's 'speed' in a cluster file",
                gpu, factor));
        // Two factors for one GPU would multiply, which no one means by giving both.
        const auto same = [gpu = gpu](const auto& other) { return other.first == gpu; };
        if (std::count_if(options.stragglers.begin(), options.stragglers.end(), same) > 1)
            throw std::invalid_argument(fmt::format(
                "straggler GPU {} is given more than once: give each GPU one factor", gpu));
    }
}

}  // namespace pipesim::simgrid
