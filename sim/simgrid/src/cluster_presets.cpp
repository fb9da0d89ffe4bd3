// Built-in clusters. Bandwidths are per direction, from the vendors' datasheets; latencies
// are end-to-end GPU-to-GPU figures we assume (small-message NCCL point-to-point latencies
// are a few microseconds over NVLink and InfiniBand/RoCE), not datasheet numbers.
#include <fmt/format.h>

#include "sim/simgrid/cluster.hpp"

namespace pipesim {

namespace {

constexpr double GBps = 1e9;  // bytes per second
constexpr double Gbps = 1e9 / 8;
constexpr double us = 1e-6;

ClusterSpec eight_gpu_nodes(std::string name, std::string description, int nodes, std::string gpu,
                            double nvlink_per_direction, double nic_bits, bool nic_per_gpu) {
    ClusterSpec c;
    c.name = std::move(name);
    c.description = std::move(description);
    c.gpus_per_node = 8;
    c.nodes = {NodeGroup{nodes, std::move(gpu), 0.0}};
    c.intra_node = LinkSpec{nvlink_per_direction, 2 * us};
    c.nic = LinkSpec{nic_bits, 5 * us};
    c.nic_per_gpu = nic_per_gpu;
    c.topology = InterNodeTopology::star;
    return c;
}

// Zero Bubble paper (Qi et al., ICLR 2024), §5.1: up to 32 A100 SXM 80GB GPUs in 4 nodes
// connected by RoCE RDMA. The paper gives no NIC speed; we assume one 200 Gb/s RoCE NIC per
// GPU as in a DGX A100. NVLink 3: 600 GB/s per GPU both directions together.
ClusterSpec zb_a100_roce(int nodes) {
    return eight_gpu_nodes(
        "zb-a100-roce",
        fmt::format("{} nodes × 8 A100 SXM 80GB, NVLink 3, RoCE (Zero Bubble paper's setup)",
                    nodes ? nodes : 4),
        nodes ? nodes : 4, "a100-80gb", 300 * GBps, 200 * Gbps, true);
}

// NVIDIA DGX A100 datasheet: 8 A100 80GB, NVLink 3 (600 GB/s per GPU), 8 ConnectX-6 200 Gb/s.
ClusterSpec dgx_a100(int nodes) {
    return eight_gpu_nodes("dgx-a100",
                           fmt::format("{} DGX A100 nodes: 8 A100 80GB, NVLink 3, one 200 Gb/s "
                                       "NIC per GPU",
                                       nodes ? nodes : 4),
                           nodes ? nodes : 4, "a100-80gb", 300 * GBps, 200 * Gbps, true);
}

// NVIDIA DGX H100 datasheet: 8 H100 SXM5, NVLink 4 (900 GB/s per GPU), 8 ConnectX-7 400 Gb/s.
ClusterSpec dgx_h100(int nodes) {
    return eight_gpu_nodes("dgx-h100",
                           fmt::format("{} DGX H100 nodes: 8 H100 SXM, NVLink 4, one 400 Gb/s "
                                       "NIC per GPU",
                                       nodes ? nodes : 4),
                           nodes ? nodes : 4, "h100-sxm", 450 * GBps, 400 * Gbps, true);
}

// NVIDIA HGX H200 datasheet: 8 H200 141GB, NVLink 4 (900 GB/s per GPU).
ClusterSpec h200x8(int nodes) {
    return eight_gpu_nodes(
        "h200x8",
        nodes > 1
            ? fmt::format("{} nodes × 8 H200 141GB, NVLink 4, one 400 Gb/s NIC per GPU", nodes)
            : std::string("one node of 8 H200 141GB with NVLink 4"),
        nodes ? nodes : 1, "h200", 450 * GBps, 400 * Gbps, true);
}

}  // namespace

std::vector<ClusterPreset> cluster_presets() {
    return {
        {"zb-a100-roce", "4×8 A100 80GB over RoCE: the Zero Bubble paper's setup", &zb_a100_roce},
        {"dgx-a100", "DGX A100 nodes (default 4), NVLink 3, 200 Gb/s NIC per GPU", &dgx_a100},
        {"dgx-h100", "DGX H100 nodes (default 4), NVLink 4, 400 Gb/s NIC per GPU", &dgx_h100},
        {"h200x8", "one 8×H200 NVLink node (NAME:N for N nodes)", &h200x8},
    };
}

}  // namespace pipesim
