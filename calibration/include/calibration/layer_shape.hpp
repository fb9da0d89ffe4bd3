#pragma once
// Shape bookkeeping for the calibration kernels: one transformer layer (GPT-style: LayerNorm,
// GeLU, biases, learned positions; or Llama-style: RMSNorm, SwiGLU, rotary embeddings,
// grouped-query attention, no biases) on one GPU of a tensor-parallel group, as the list of
// kernels each pass (F, B, W) runs.

#include <span>
#include <string_view>
#include <vector>

#include "models/layer_costs.hpp"
#include "models/transformer.hpp"
#include "schedules/op.hpp"

namespace pipesim::calibration {

/// One layer's sizes on one GPU after the tensor-parallel split (Megatron-LM style: the QKV
/// and first MLP matrices split by output columns, the projection and second MLP matrix by
/// input rows; norms and residuals replicated).
struct LayerShape {
    int microbatch = 0;  ///< b
    int seq = 0;         ///< s
    int tokens = 0;      ///< n = b·s, the rows of every activation matrix
    int hidden = 0;      ///< h
    int heads = 0;       ///< attention heads on this GPU, a/t
    int kv_heads = 0;    ///< key/value heads on this GPU, kv/t
    int head_dim = 0;    ///< d = h/a
    int qkv_width = 0;   ///< (h + 2·kv·d)/t: columns of the QKV output
    int attn_width = 0;  ///< h/t: columns of the attention output (the projection's input)
    int kv_width = 0;    ///< kv/t·d: columns of K (and of V)
    int ffn = 0;         ///< f/t (2f/t outputs of the first MLP matrix for SwiGLU)
    int tp = 1;
    models::Mlp mlp = models::Mlp::gelu;
    models::Norm norm = models::Norm::layernorm;
    bool bias = true;     ///< biases in the linear layers
    bool rotary = false;  ///< rotary embeddings on Q and K (no learned position table)
    models::AttentionKernel attention = models::AttentionKernel::unfused;

    /// Query heads sharing one key/value head (1: multi-head attention).
    int group() const { return heads / kv_heads; }
    /// Outputs of the first MLP matrix: f/t, or 2f/t for SwiGLU (gate, then up).
    int fc1_width() const { return mlp == models::Mlp::swiglu ? 2 * ffn : ffn; }
};

/// The shape of `config`'s layer under `workload` (its attention kernel included). Throws
/// std::invalid_argument for invalid configs or workloads (models::check_config,
/// models::check_workload).
LayerShape layer_shape(const models::TransformerConfig& config, const models::Workload& workload);

/// Every kernel a layer pass may run, in execution order; a layer runs those its shape needs
/// (layer_steps). The GEMMs are the Zero Bubble split: F: Y = X·Wᵀ, B: dX = dY·W, W: dW +=
/// dYᵀ·X (fp32 accumulation into an fp32 gradient). `ln1`/`ln2` are the layer's norm
/// (LayerNorm or RMSNorm), `act` its activation (bias + GeLU, or SwiGLU).
enum class Step : int {
    // F
    ln1_f,
    qkv_f,
    qkv_bias_f,  // with biases
    rotary_f,    // with rotary embeddings
    scores_f,    // unfused attention: scores_f, softmax_f, context_f
    softmax_f,
    context_f,
    flash_f,  // fused attention
    proj_f,
    proj_residual_f,
    ln2_f,
    fc1_f,
    act_f,
    fc2_f,
    fc2_residual_f,
    // B
    fc2_b,
    act_b,
    fc1_b,
    ln2_b,
    proj_b,
    attn_dv_b,  // unfused attention: attn_dv_b … attn_dk_b
    attn_dp_b,
    softmax_b,
    attn_dq_b,
    attn_dk_b,
    flash_b,   // fused attention
    rotary_b,  // with rotary embeddings
    qkv_b,
    ln1_b,
    // W
    fc2_w,
    fc2_bias_w,
    fc1_w,
    fc1_bias_w,
    proj_w,
    proj_bias_w,
    qkv_w,
    qkv_bias_w,
    ln2_w,
    ln1_w,
};

/// A GEMM in row-major terms: C[m×n] = op(A)[m×k]·op(B)[k×n], `batch` independent products
/// (the attention GEMMs: one per sequence and head).
struct GemmShape {
    long long m = 0, n = 0, k = 0;
    long long batch = 1;
    double flops() const { return 2.0 * static_cast<double>(m * n * k * batch); }
};

/// One kernel of a pass. The GEMMs and the fused attention count FLOPs (as models/ does); the
/// other kernels are memory-bound and count the bytes they read and write.
struct KernelStep {
    Step step;
    Pass pass;              ///< F, B or W
    std::string_view name;  ///< "qkv", "softmax", ...: unique within its pass
    bool is_gemm = false;
    GemmShape gemm;    ///< when is_gemm
    double flops = 0;  ///< GEMMs and the fused attention (its causal half, as models/ counts)
    double bytes = 0;  ///< memory-bound kernels and the fused attention
};

/// The kernels of F, B and W for `shape`, in the order the GPU runs them: only the steps the
/// shape needs (no bias kernels without biases, rotary only with rotary embeddings, the
/// unfused or the fused attention).
std::vector<KernelStep> layer_steps(const LayerShape& shape);

/// The kernels of one pass (F, B or W; BW is B then W).
std::vector<KernelStep> pass_steps(const LayerShape& shape, Pass pass);

/// The sum of the steps' FLOPs for each of F, B and W: the GEMM and fused-attention FLOPs of
/// models::layer_operators (with the unfused attention, models::layer_flops / t).
models::PassFlops steps_flops(std::span<const KernelStep> steps);

/// Head dimensions the fused attention kernel is built for.
inline constexpr int flash_head_dims[] = {32, 64, 96, 128};

/// Throws std::invalid_argument (one line naming the model) unless the GPU kernels implement
/// this layer: both MLPs, norms, position kinds and any kv_heads dividing heads; the fused
/// attention needs a head dimension in flash_head_dims. Also checks the workload
/// (models::check_workload).
void check_kernel_support(const models::TransformerConfig& config,
                          const models::Workload& workload);

}  // namespace pipesim::calibration
