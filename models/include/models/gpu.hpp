#pragma once
// GPU specifications used to turn FLOPs into seconds and to check memory capacity.

#include <span>
#include <string>
#include <string_view>

namespace pipesim::models {

/// GPUs per node in the nodes the GPU presets come in and the analytic engine assumes: NVIDIA's
/// DGX and HGX A100, H100 and H200 nodes, 8 GPUs behind NVLink with one network adapter each
/// (the DGX datasheets). A tensor-parallel group must fit in one; context parallelism's K/V ring
/// runs over NVLink inside one and over the network past it.
inline constexpr int reference_gpus_per_node = 8;

/// One GPU model. Figures are the vendor's datasheet numbers (source in `source`).
struct GpuSpec {
    std::string name;            ///< lower case with dashes, e.g. "h100-sxm"
    std::string description;     ///< one line for `pipesim list`
    double peak_bf16_flops = 0;  ///< dense (no sparsity) bf16 tensor-core FLOP/s
    double memory_bytes = 0;     ///< HBM capacity in bytes, as the driver reports it
    double hbm_bandwidth = 0;    ///< bytes/s
    /// Achieved fraction of the dense peak for a transformer layer's kernels, used when no
    /// calibration file is given. A documented assumption, not a measurement (see source).
    double default_efficiency = 0;
    std::string source;
    /// The preset a GPU file started from ("base"): the GPU it measures, which a cluster's
    /// nodes name. Empty for presets and files without one.
    std::string base;

    // The operator-level model's rates (models/roofline.hpp; sources in models/src/gpu.cpp).
    int sm_count = 0;            ///< streaming multiprocessors (datasheet)
    double gemm_efficiency = 0;  ///< best measured bf16 GEMM rate / peak (MAMF)
    /// Short-K falloff: each output tile's fixed cost (filling the load pipeline before its
    /// first MMA) in units of K, and the K of the shape `gemm_efficiency` was measured at
    /// (shorter K pays (K + fill)/K against that shape). 0: no falloff.
    double gemm_k_fill = 0;
    double gemm_reference_k = 0;
    double memory_efficiency = 0;  ///< achievable / datasheet HBM bandwidth
    /// The same for the unfused attention's kernels over the s×s scores; 0: memory_efficiency.
    double scores_memory_efficiency = 0;
    /// The same for the norm kernels (LayerNorm, RMSNorm), forward and backward (the backward
    /// counted as reading dY and X and writing dX; its γ/β reductions inside its time), of the
    /// persistent kernels and of the older non-persistent ones; 0: memory_efficiency.
    double norm_forward_memory_efficiency = 0;
    double norm_backward_memory_efficiency = 0;
    double nonpersistent_norm_forward_memory_efficiency = 0;
    double nonpersistent_norm_backward_memory_efficiency = 0;
    double attention_forward_efficiency = 0;   ///< fused attention forward, of peak
    double attention_backward_efficiency = 0;  ///< fused attention backward, of peak
    double launch_overhead = 0;                ///< seconds added to every kernel
    double tp_bus_bandwidth = 0;               ///< NCCL all-reduce bus bandwidth in a node, bytes/s
    double nic_bandwidth = 0;  ///< one GPU's network adapter in its reference node, bytes/s
};

/// All known GPUs, in the order `pipesim list` shows them.
std::span<const GpuSpec> gpu_specs();

/// The GPU called `name`. Throws std::invalid_argument listing the valid names.
const GpuSpec& find_gpu(std::string_view name);

}  // namespace pipesim::models
