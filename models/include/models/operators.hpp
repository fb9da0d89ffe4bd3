#pragma once
// The kernels of one transformer layer, the embedding and the LM head, for one microbatch on
// one GPU of its tensor-parallel group: each with its pass (F, B, W), FLOPs and HBM bytes.
// models/roofline.hpp turns them into seconds.

#include <string_view>
#include <vector>

#include "models/layer_costs.hpp"
#include "models/transformer.hpp"

namespace pipesim::models {

/// The Zero Bubble pass an operator runs in. B: activation gradients (dX = dY·Wᵀ) and the
/// memory-bound backward kernels; W: weight gradients (dW = Xᵀ·dY).
enum class Pass { forward, backward_input, backward_weight };

/// How an operator's rate is bounded: a GEMM (tensor cores, efficiency by shape), the fused
/// attention kernel (its own measured efficiency), or memory bandwidth alone.
enum class OpKind { gemm, attention, memory };

/// "F", "B" or "W".
const char* pass_letter(Pass pass);
/// "gemm", "attention" or "memory".
const char* op_kind_name(OpKind kind);

/// Which measured bandwidth a memory-bound kernel moves its bytes at (GpuSpec): a streaming
/// kernel's, the unfused attention's score kernels', or a norm kernel's forward or backward,
/// persistent (one row held in registers; Megatron-LM's default since late 2021) or not.
enum class MemoryRate {
    stream,
    scores,
    norm_forward,
    norm_backward,
    nonpersistent_norm_forward,
    nonpersistent_norm_backward
};

/// C[m×n] = A[m×k]·B[k×n], `batch` independent products (batched attention GEMMs).
struct GemmShape {
    double m = 0;
    double n = 0;
    double k = 0;
    double batch = 1;
};

/// One kernel. FLOPs count a multiply-add as 2; bytes are the HBM bytes read plus written
/// (16-bit activations, 1-byte dropout masks, fp32 weight-gradient accumulation).
struct Operator {
    std::string_view name;
    Pass pass = Pass::forward;
    OpKind kind = OpKind::memory;
    double flops = 0;
    double bytes = 0;
    GemmShape shape;              ///< kind == gemm only
    bool attention_core = false;  ///< a forward kernel selective recomputation re-runs
    MemoryRate memory_rate = MemoryRate::stream;  ///< the bandwidth its bytes move at
};

/// The kernels of one layer without recomputation (the cost model re-runs forward kernels for
/// it), in execution order within each pass. TP splits the GEMMs' output (column-parallel:
/// QKV, MLP up) or input (row-parallel: projection, MLP down) dimension and the heads; norms,
/// dropout and residual adds run on all s·b tokens on every rank, or on s·b/t with sequence
/// parallelism. For the unfused attention the GEMM FLOPs of F, B and W sum to layer_flops()/t
/// exactly; the fused kernel skips the causally masked half (and its backward recomputes QKᵀ:
/// 2.5× the forward's FLOPs).
std::vector<Operator> layer_operators(const TransformerConfig& config, const Workload& workload);

/// The first stage's extra kernels: the embedding lookup (with learned positions added), its
/// dropout, and in W the scatter-add of its gradient into the fp32 gradient buffer.
std::vector<Operator> embedding_operators(const TransformerConfig& config,
                                          const Workload& workload);

/// The last stage's extra kernels: the final norm, the vocabulary-parallel logits GEMM (F, its
/// dX in B, its dW in W) and the cross-entropy: Megatron-LM's vocabulary-parallel one, eight
/// kernels over the fp32 logits (38 bytes per logit in F, 14 in B), or with
/// Workload::cross_entropy_fusion one kernel per pass (6 bytes each).
std::vector<Operator> head_operators(const TransformerConfig& config, const Workload& workload);

}  // namespace pipesim::models
