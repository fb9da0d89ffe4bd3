#include "sim/simgrid/layout.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::simgrid {

namespace {

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

}  // namespace pipesim::simgrid
