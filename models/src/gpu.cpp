#include "models/gpu.hpp"

#include <array>
#include <string>
#include <utility>

#include "names.hpp"

namespace pipesim::models {

namespace {

constexpr double tera = 1e12;
constexpr double giga = 1e9;
constexpr double mib = 1024.0 * 1024.0;

// Peak dense bf16 and bandwidth: NVIDIA datasheets (the "with sparsity" figures are twice
// the dense ones). Capacity: the total the driver reports (nvidia-smi memory.total), which
// is what allocations compete for. Default efficiencies (the single-efficiency model kept for
// `--efficiency`) are assumptions, documented in docs/models.md: Megatron-LM reaches 44–52 %
// of the A100 peak on large GPT models (Narayanan et al., SC'21, Table 1) and Llama 3 405B
// training 38–43 % on H100 (Llama 3 paper, Dubey et al., 2024, Table 4).
//
// The operator-level model's rates (docs/models.md, "Operator-level times"), each a datasheet
// figure or a published measurement:
// - SMs: A100 108, H100/H200 SXM 132 (NVIDIA A100 and H100 architecture whitepapers).
// - GEMM efficiency: the best bf16 matmul rate measured over many shapes, at the clock the
//   GPU sustains under training load. A100 SXM: 267.9 of 312 TFLOP/s, the "maximum
//   achievable matmul FLOPS" (MAMF, CUDA 12.1; S. Bekman, ML Engineering,
//   compute/accelerator/README.md), a burst figure at the 1410 MHz boost clock; at its 400 W
//   power limit under dense tensor-core load the A100 holds 1305 MHz, the clock NVIDIA
//   computes its A100 HPL peak with (G. K. Lockwood, "Peak FLOPS",
//   glennklockwood.com/garden/peak-FLOPS): 267.9 × 1305/1410 = 247.9 TFLOP/s (0.795).
//   H100/H200 (the same GH100 compute at 700 W): the "maximum sustainable" rate measured on
//   H200 after a thermal soak, 702.9 TFLOP/s (0.710; the burst MAMF of the same run is
//   828.0, a sustained-to-burst ratio of 0.849), ML Engineering,
//   compute/accelerator/benchmarks/README.md.
// - Short-K falloff (A100 only): cuBLAS's Ampere bf16 kernels (ampere_bf16_s16816gemm_..._
//   stages_64x3) stream K in 64-deep tiles through a 3-stage cp.async pipeline, so a tile's
//   first MMA waits for 2 × 64 = 128 elements of K to arrive: a fixed cost of 128 K per
//   tile. The MAMF above was measured at 6912×16384×2048 (mag-/gpu_benchmark, same 267.9
//   TFLOP/s), so GEMMs with K < 2048 lose (K + 128)/K against (2048 + 128)/2048. Hopper's
//   persistent warp-specialized kernels prefetch the next tile with TMA during the current
//   one's epilogue: no falloff is applied there.
// - Memory efficiency 0.9: STREAM-style copy kernels reach about 90 % of the HBM datasheet
//   bandwidth on A100 and H100 (BabelStream, Deakin et al.; about 3.0 of 3.35 TB/s on H100).
// - The unfused attention's kernels over the s×s scores (the batched QKᵀ, AV and their
//   gradients, softmax, dropout) on A100: standard PyTorch attention for GPT-2 medium's shape
//   (b 64, 16 heads, s 1024, head size 64), forward and backward, moves 40.3 GB of HBM in
//   41.7 ms (Dao et al., "FlashAttention", NeurIPS 2022, Fig. 2 left; the paper's benchmarks
//   ran on the A100 40 GB, 1,555 GB/s): 0.97 TB/s, 0.62 of the datasheet bandwidth. No such
//   measurement is known for Hopper, whose unfused kernels keep the copy rate.
// - Norm kernels on A100: NVIDIA's LayerNorm benchmark on GA100 for BERT's shape (32 × 512
//   tokens, h 1024, fp16; NVIDIA/apex pull request 1037, January 2021), counting 4 bytes per
//   element forward (X, Y) and 6 backward (dY, X, dX; the γ/β reductions inside its time):
//   apex's non-persistent FusedLayerNorm kernels (Megatron-LM's own copy of them, all it had
//   before October 2021) 895.8 GB/s forward and 572.2 GB/s backward; the persistent
//   FastLayerNorm kernels that pull request added (Megatron-LM's persist_layer_norm, whose
//   design Transformer Engine's norm kernels share) 1,258.0 and 1,163.4 GB/s. Read as shares
//   of the A100 40 GB's 1,555 GB/s (on the 80 GB's 2,039 the persistent forward, a streaming
//   kernel that keeps its row in registers, would reach only 0.62, below any copy kernel):
//   0.576 / 0.368 and 0.809 / 0.748. No such measurement is known for Hopper, whose norms
//   keep the copy rate. RMSNorm kernels of the same designs move the same bytes.
// - Fused attention: FlashAttention-2 reaches up to 73 % of the A100 peak forward and about
//   190 TFLOP/s (0.6) backward at head size 128 (Dao, 2023, abstract and Fig. 6);
//   FlashAttention-3 740 TFLOP/s forward on H100 (0.75, Shah et al., 2024, abstract) and a
//   backward 1.5–1.75× FlashAttention-2's (≈ 35 % of peak there): 0.55. Both are benchmark
//   (burst) rates of compute-bound kernels, scaled here like the GEMMs to the sustained
//   clock: × 1305/1410 on A100 (0.676 and 0.555), × 702.9/828.0 on Hopper (0.637 and 0.467).
// - Launch overhead 1 µs: a 2.9 µs kernel launched back to back in one stream takes 3.8 µs
//   (NVIDIA, "Getting Started with CUDA Graphs", 2019).
// - TP bus bandwidth: NCCL all-reduce busbw inside an 8-GPU NVLink node, about 200 GB/s on
//   A100 SXM 80 GB (nvidia/nccl-tests issue 149) and 370 GB/s on H100 with the ring
//   algorithm (NCCL's effective NVLink4 rate, nvidia/nccl-tests issue 212).
// - NIC bandwidth: one adapter per GPU in NVIDIA's reference nodes, 200 Gb/s ConnectX-6 in
//   DGX A100 and 400 Gb/s ConnectX-7 in DGX H100 and HGX H200 (the DGX datasheets).
constexpr double a100_sms = 108, hopper_sms = 132;
// Sustained over burst clock of compute-bound work (above): A100 at its power limit, Hopper
// from the H200's soaked against burst matmul rate.
constexpr double a100_sustained = 1305.0 / 1410.0, hopper_sustained = 702.9 / 828.0;
constexpr double a100_gemm = 267.9 / 312 * a100_sustained, hopper_gemm = 702.9 / 989.4;
constexpr double a100_k_fill = 2 * 64, a100_mamf_k = 2048;
constexpr double hbm_efficiency = 0.9;
constexpr double a100_40gb_bandwidth = 1555 * giga;  // where the A100 measurements below ran
constexpr double a100_scores_efficiency = 40.3e9 / 41.7e-3 / a100_40gb_bandwidth;
constexpr double a100_norm_forward = 1258.0 * giga / a100_40gb_bandwidth,
                 a100_norm_backward = 1163.4 * giga / a100_40gb_bandwidth,
                 a100_nonpersistent_norm_forward = 895.8 * giga / a100_40gb_bandwidth,
                 a100_nonpersistent_norm_backward = 572.2 * giga / a100_40gb_bandwidth;
constexpr double launch = 1e-6;

GpuSpec spec(std::string name, std::string description, double peak, double memory,
             double bandwidth, double default_efficiency, std::string source, bool hopper,
             double tp_bus_bandwidth) {
    GpuSpec g;
    g.name = std::move(name);
    g.description = std::move(description);
    g.peak_bf16_flops = peak;
    g.memory_bytes = memory;
    g.hbm_bandwidth = bandwidth;
    g.default_efficiency = default_efficiency;
    g.source = std::move(source);
    g.sm_count = static_cast<int>(hopper ? hopper_sms : a100_sms);
    g.gemm_efficiency = hopper ? hopper_gemm : a100_gemm;
    g.gemm_k_fill = hopper ? 0 : a100_k_fill;
    g.gemm_reference_k = hopper ? 0 : a100_mamf_k;
    g.memory_efficiency = hbm_efficiency;
    g.scores_memory_efficiency = hopper ? 0 : a100_scores_efficiency;
    g.norm_forward_memory_efficiency = hopper ? 0 : a100_norm_forward;
    g.norm_backward_memory_efficiency = hopper ? 0 : a100_norm_backward;
    g.nonpersistent_norm_forward_memory_efficiency = hopper ? 0 : a100_nonpersistent_norm_forward;
    g.nonpersistent_norm_backward_memory_efficiency = hopper ? 0 : a100_nonpersistent_norm_backward;
    const double sustained = hopper ? hopper_sustained : a100_sustained;
    g.attention_forward_efficiency = (hopper ? 0.75 : 0.73) * sustained;
    g.attention_backward_efficiency = (hopper ? 0.55 : 0.6) * sustained;
    g.launch_overhead = launch;
    g.tp_bus_bandwidth = tp_bus_bandwidth;
    g.nic_bandwidth = (hopper ? 400 : 200) * giga / 8;
    return g;
}

const std::array<GpuSpec, 4> specs = {{
    spec("a100-40gb", "NVIDIA A100 SXM4 40 GB (HBM2)", 312 * tera, 40960 * mib, 1555 * giga, 0.55,
         "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS bf16 dense, 40 GB HBM2, "
         "1,555 GB/s",
         false, 200 * giga),
    spec("a100-80gb", "NVIDIA A100 SXM4 80 GB (HBM2e)", 312 * tera, 81920 * mib, 2039 * giga, 0.55,
         "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS bf16 dense, 80 GB HBM2e, "
         "2,039 GB/s",
         false, 200 * giga),
    spec("h100-sxm", "NVIDIA H100 SXM5 80 GB (HBM3)", 989.4 * tera, 81559 * mib, 3350 * giga, 0.45,
         "NVIDIA H100 Tensor Core GPU datasheet: 1,979 TFLOPS bf16 with sparsity (989.4 dense), "
         "80 GB HBM3, 3.35 TB/s",
         true, 370 * giga),
    spec("h200", "NVIDIA H200 SXM 141 GB (HBM3e)", 989.4 * tera, 143771 * mib, 4800 * giga, 0.45,
         "NVIDIA H200 Tensor Core GPU datasheet: 1,979 TFLOPS bf16 with sparsity (989.4 dense), "
         "141 GB HBM3e, 4.8 TB/s",
         true, 370 * giga),
}};

}  // namespace

std::span<const GpuSpec> gpu_specs() {
    return specs;
}

const GpuSpec& find_gpu(std::string_view name) {
    return detail::find_by_name(gpu_specs(), name, "GPU");
}

}  // namespace pipesim::models
