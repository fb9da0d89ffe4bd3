// Built-in clusters. Bandwidths are per direction, from the vendors' datasheets; latencies
// are end-to-end GPU-to-GPU figures we assume (small-message NCCL point-to-point latencies
// are a few microseconds over NVLink and InfiniBand/RoCE), not datasheet numbers.
#include <array>

#include <fmt/format.h>

#include "sim/simgrid/cluster.hpp"

namespace pipesim::simgrid {

namespace {

constexpr double GBps = 1e9;  // bytes per second
constexpr double Gbps = 1e9 / 8;
constexpr double us = 1e-6;

// Nodes of 8 GPUs behind an NVSwitch, one NIC per GPU.
struct EightGpuPreset {
    const char* name;
    const char* summary;            ///< for `pipesim list`
    const char* nodes_description;  ///< fmt pattern with the node count
    int default_nodes;
    const char* gpu;
    double nvlink_per_direction;
    double nic;
    /// NCCL all-reduce bus bandwidth measured inside one such node (nccl-tests busbw).
    double nccl_bus_bandwidth;
    /// NCCL send/receive between two GPUs of such a node, as measured.
    double nccl_p2p_bandwidth;
};

// NCCL inside a node: all_reduce_perf reaches about 200 GB/s bus bandwidth on 8 A100 SXM
// 80GB (nvidia/nccl-tests issue 149) and about 370 GB/s on 8 H100 SXM with the ring algorithm
// (nvidia/nccl-tests issue 212): 67 % and 82 % of the NVLink port's rate per direction. The
// same figures are the operator model's TP bus bandwidth (models/src/gpu.cpp).
constexpr double a100_nccl = 200 * GBps, hopper_nccl = 370 * GBps;

// NCCL send/receive inside a node (a pipeline message between two stages) runs on a few of
// NCCL's channels, well below the port's rate. A100: 44.6 GB/s, the mean rate of the Zero
// Bubble paper's six single-node transfer timings (Qi et al., ICLR 2024, Table 9, T_comm:
// 25-28 MB in 0.527-0.762 ms, 37-48 GB/s, one 8-GPU A100 SXM 80GB node). Hopper: 80 GB/s,
// sendrecv_perf between two NVLink-connected H100s in NCCL's default configuration
// (nvidia/nccl-tests issue 268), against 260 GB/s for a copy-engine transfer.
constexpr double a100_p2p = 44.6 * GBps, hopper_p2p = 80 * GBps;

constexpr std::array presets{
    // Zero Bubble paper (Qi et al., ICLR 2024), §5.1: up to 32 A100 SXM 80GB GPUs in 4 nodes
    // connected by RoCE RDMA. The paper gives no NIC speed; we assume one 200 Gb/s RoCE NIC
    // per GPU as in a DGX A100. NVLink 3: 600 GB/s per GPU, both directions together.
    EightGpuPreset{"zb-a100-roce", "4×8 A100 80GB over RoCE: the Zero Bubble paper's setup",
                   "{} nodes × 8 A100 SXM 80GB, NVLink 3, RoCE (Zero Bubble paper's setup)", 4,
                   "a100-80gb", 300 * GBps, 200 * Gbps, a100_nccl, a100_p2p},
    // NVIDIA DGX A100 datasheet: 8 A100 80GB, NVLink 3 (600 GB/s per GPU), 8 ConnectX-6
    // 200 Gb/s.
    EightGpuPreset{"dgx-a100", "DGX A100 nodes (default 4), NVLink 3, 200 Gb/s NIC per GPU",
                   "{} DGX A100 nodes: 8 A100 80GB, NVLink 3, one 200 Gb/s NIC per GPU", 4,
                   "a100-80gb", 300 * GBps, 200 * Gbps, a100_nccl, a100_p2p},
    // NVIDIA DGX H100 datasheet: 8 H100 SXM5, NVLink 4 (900 GB/s per GPU), 8 ConnectX-7
    // 400 Gb/s.
    EightGpuPreset{"dgx-h100", "DGX H100 nodes (default 4), NVLink 4, 400 Gb/s NIC per GPU",
                   "{} DGX H100 nodes: 8 H100 SXM, NVLink 4, one 400 Gb/s NIC per GPU", 4,
                   "h100-sxm", 450 * GBps, 400 * Gbps, hopper_nccl, hopper_p2p},
    // NVIDIA HGX H200 datasheet: 8 H200 141GB, NVLink 4 (900 GB/s per GPU).
    EightGpuPreset{"h200x8", "one 8×H200 NVLink node (NAME:N for N nodes)",
                   "{} node(s) × 8 H200 141GB, NVLink 4, one 400 Gb/s NIC per GPU", 1, "h200",
                   450 * GBps, 400 * Gbps, hopper_nccl, hopper_p2p},
};

template <std::size_t I>
ClusterSpec make_preset(int nodes) {
    const EightGpuPreset& p = presets[I];
    const int count = nodes > 0 ? nodes : p.default_nodes;
    ClusterSpec c;
    c.name = p.name;
    c.description = fmt::format(fmt::runtime(p.nodes_description), count);
    c.gpus_per_node = 8;
    c.nodes = {NodeGroup{count, p.gpu, 0.0}};
    c.intra_node = LinkSpec{p.nvlink_per_direction, 2 * us};
    c.intra_node_collective_bandwidth = p.nccl_bus_bandwidth;
    c.intra_node_p2p_bandwidth = p.nccl_p2p_bandwidth;
    c.nic = LinkSpec{p.nic, preset_nic_latency};
    c.nic_per_gpu = true;
    c.topology = InterNodeTopology::star;
    return c;
}

template <std::size_t... I>
std::vector<ClusterPreset> preset_list(std::index_sequence<I...>) {
    return {ClusterPreset{presets[I].name, presets[I].summary, &make_preset<I>}...};
}

}  // namespace

std::vector<ClusterPreset> cluster_presets() {
    return preset_list(std::make_index_sequence<presets.size()>{});
}

}  // namespace pipesim::simgrid
