#pragma once
// How data-, pipeline-, tensor- and context-parallel ranks map onto a cluster's GPUs.

#include <array>
#include <string>

#include "sim/simgrid/cluster.hpp"

namespace pipesim::simgrid {

enum class ParallelDim { tp, dp, pp, cp };

/// D data-parallel replicas × P pipeline devices × T tensor-parallel × C context-parallel GPUs
/// per device. `order` lists the dimensions from fastest- to slowest-varying in the global
/// GPU index; the default (tp, cp, dp, pp, Megatron-LM's order without experts) keeps a TP
/// group on consecutive GPUs of one node, its CP ring next to it (on NVLink while T·C fits a
/// node) and puts consecutive pipeline stages D·T·C GPUs apart.
struct Layout {
    int dp = 1;
    int pp = 1;
    int tp = 1;
    std::array<ParallelDim, 4> order = {ParallelDim::tp, ParallelDim::cp, ParallelDim::dp,
                                        ParallelDim::pp};
    int cp = 1;

    int gpus() const { return dp * pp * tp * cp; }
};

/// Parses an order such as "tp,cp,dp,pp" (each of tp, dp, pp once, cp at most once; without
/// it cp goes right after tp). Throws std::invalid_argument.
std::array<ParallelDim, 4> parse_layout_order(const std::string& text);
std::string layout_order_string(const std::array<ParallelDim, 4>& order);

/// Global GPU index of (replica, pipeline device, tensor rank, context rank).
int gpu_index(const Layout& layout, int replica, int device, int tp_rank, int cp_rank = 0);

/// Throws std::invalid_argument when the layout needs more GPUs than the cluster has, or a
/// TP group would span nodes (TP stays inside a node; a CP ring may span nodes).
void check_layout(const Layout& layout, const ClusterSpec& cluster);

}  // namespace pipesim::simgrid
