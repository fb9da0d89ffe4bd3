#pragma once
// How data-, pipeline- and tensor-parallel ranks map onto a cluster's GPUs.

#include <array>
#include <string>

#include "sim/simgrid/cluster.hpp"

namespace pipesim::simgrid {

enum class ParallelDim { tp, dp, pp };

/// D data-parallel replicas × P pipeline devices × T tensor-parallel GPUs per device.
/// `order` lists the dimensions from fastest- to slowest-varying in the global GPU index;
/// the default (tp, dp, pp) keeps a TP group on consecutive GPUs of one node and puts
/// consecutive pipeline stages D·T GPUs apart, i.e. on other nodes once D·T fills a node.
struct Layout {
    int dp = 1;
    int pp = 1;
    int tp = 1;
    std::array<ParallelDim, 3> order = {ParallelDim::tp, ParallelDim::dp, ParallelDim::pp};

    int gpus() const { return dp * pp * tp; }
};

/// Parses an order such as "tp,dp,pp" (each of tp, dp, pp once). Throws std::invalid_argument.
std::array<ParallelDim, 3> parse_layout_order(const std::string& text);
std::string layout_order_string(const std::array<ParallelDim, 3>& order);

/// Global GPU index of (replica, pipeline device, tensor rank).
int gpu_index(const Layout& layout, int replica, int device, int tp_rank);

/// Throws std::invalid_argument when the layout needs more GPUs than the cluster has, or a
/// TP group would span nodes (TP stays inside a node).
void check_layout(const Layout& layout, const ClusterSpec& cluster);

}  // namespace pipesim::simgrid
