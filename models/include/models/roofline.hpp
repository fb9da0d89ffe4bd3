#pragma once
// Operator-level times: each kernel is a roofline, max(FLOPs / (peak × efficiency of its
// shape), bytes / (HBM bandwidth × efficiency)) plus a launch overhead; a pass is the sum of
// its kernels. docs/models.md, "Operator-level times", explains the model and its limits.

#include <span>

#include "models/cost_model.hpp"
#include "models/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/operators.hpp"
#include "models/transformer.hpp"

namespace pipesim::models {

/// Fraction of the dense peak a bf16 GEMM of `shape` reaches on `gpu`, in (0,
/// gpu.gemm_efficiency]: the best measured rate times the quantization of its output tiles.
/// The output is cut into tiles (256×128, 128×256 or 128×128, whichever wastes least, as
/// cuBLAS picks among such tiles); partly filled tiles do full work (tile quantization) and
/// the tiles run in waves of one per SM, the last wave possibly partly empty (wave
/// quantization). NVIDIA, "Matrix Multiplication Background User's Guide" (Deep Learning
/// Performance documentation). A reduction dimension K shorter than the one the efficiency
/// was measured at pays each tile's pipeline fill (GpuSpec::gemm_k_fill): (K + fill)/K
/// against the measured shape's (K_ref + fill)/K_ref.
double gemm_efficiency(const GpuSpec& gpu, const GemmShape& shape);

/// One kernel's time on a GPU and what bounds it.
struct OperatorTime {
    double seconds = 0;             ///< launch overhead + max(compute, memory)
    double compute = 0;             ///< FLOPs at compute_efficiency × peak (0: memory-bound kind)
    double memory = 0;              ///< bytes at memory_efficiency × HBM bandwidth
    double compute_efficiency = 0;  ///< share of the dense bf16 peak (GEMM, fused attention)
    double memory_efficiency = 0;   ///< share of the HBM bandwidth
    bool compute_bound() const { return compute > memory; }
};

/// One kernel on `gpu`: GEMMs compute at gemm_efficiency(), fused attention at the GPU's
/// measured attention efficiency for its pass, memory-bound kernels only move bytes (the
/// unfused attention's score kernels and the norms at their measured rates where the GPU has
/// them: memory_efficiency()).
OperatorTime operator_time(const GpuSpec& gpu, const Operator& op);

/// The share of `gpu`'s HBM bandwidth a memory-bound kernel of class `rate` reaches: its
/// measured rate where the GPU has one, else GpuSpec::memory_efficiency.
double memory_efficiency(const GpuSpec& gpu, MemoryRate rate);

/// operator_time(gpu, op).seconds.
double operator_seconds(const GpuSpec& gpu, const Operator& op);

/// The kernels' seconds summed per pass; recomputation re-runs forward kernels before B
/// (full: all of them; selective: those marked attention_core).
PassTimes pass_seconds(const GpuSpec& gpu, std::span<const Operator> ops, Recompute recompute);

/// Seconds of one tensor-parallel all-reduce of `bytes` over `tp` GPUs of a node (ring:
/// 2(t−1)/t · bytes at the measured bus bandwidth, plus a launch); 0 when tp = 1 or the GPU
/// has no bus bandwidth. With
/// sequence parallelism the all-gather and reduce-scatter that replace it take the same.
double tp_allreduce_seconds(const GpuSpec& gpu, double bytes, int tp);

/// One layer's ring attention with context parallelism (c = Workload::cp > 1) on one GPU:
/// the K/V block it passes to the next of the c ranks per step, 4·(s/c)·b·kv/t bytes (bf16 K
/// and V of its s/c tokens, its TP rank's heads); the rate it moves at, NVLink (the TP bus
/// bandwidth) while t·c GPUs fit in a node of 8, else the GPU's NIC; and the attention core's
/// seconds in F and B (W: 0), its FLOPs (this GPU's s/c queries against the causal half of
/// all s keys) at the fused kernel's measured rates. All 0 with c = 1.
struct CpRingLayer {
    double block_bytes = 0;
    double bandwidth = 0;  ///< bytes/s
    PassTimes attention;
};
CpRingLayer cp_ring_layer(const GpuSpec& gpu, const TransformerConfig& config,
                          const Workload& workload);

/// Seconds of one ring pass over `c` ranks left exposed: the attention core of `attention`
/// seconds runs as c equal blocks, block i while block i + 1 moves (`transfer` seconds a
/// step), so each of the c − 1 steps takes max(transfer, attention/c) and the pass
/// (c − 1)·max(0, transfer − attention/c) more than the attention alone. 0 for c < 2.
double ring_exposed_seconds(int c, double transfer, double attention);

/// Seconds of one layer's ring-attention transfers left exposed in F and in B (W: 0) on `gpu`
/// (cp_ring_layer()): ring_exposed_seconds() of the c − 1 blocks in F, and in B of twice
/// the bytes per step (K/V and their gradients) behind B's attention core. All 0 with c = 1.
PassTimes cp_exposed_seconds(const GpuSpec& gpu, const TransformerConfig& config,
                             const Workload& workload);

/// Seconds of one optimizer step over `params` parameters held on one GPU: memory-bound Adam
/// reading the gradients and the fp32 state, writing the state and the 16-bit weights
/// (grad + 2·optimizer + weight bytes per parameter, 30 by default), over d shards with the
/// distributed optimizer.
double optimizer_step_seconds(const GpuSpec& gpu, double params, const OptimizerConfig& optimizer);

/// The default cost model: per-operator rooflines on the GPU's measured rates.
class OperatorCostModel : public CostModel {
  public:
    /// Throws std::invalid_argument if the GPU lacks a peak, bandwidth or SM count.
    explicit OperatorCostModel(GpuSpec gpu);
    PassTimes layer(const TransformerConfig& config, const Workload& workload) const override;
    PassTimes head(const TransformerConfig& config, const Workload& workload) const override;
    PassTimes embedding(const TransformerConfig& config, const Workload& workload) const override;
    const GpuSpec& gpu() const override { return gpu_; }

  private:
    GpuSpec gpu_;
};

}  // namespace pipesim::models
