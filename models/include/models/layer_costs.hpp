#pragma once
// FLOPs, activation memory and communication of one transformer layer, the embedding and
// the LM head, for one microbatch, split into the Zero Bubble passes F, B and W.

#include <string_view>

#include "models/transformer.hpp"

namespace pipesim::models {

/// What is recomputed in the backward pass (Korthikanti et al., 2022, §4 and §5).
/// selective: the attention core (softmax, dropout, QKᵀ, AV) is recomputed and not stored;
/// full: only each layer's input is stored and the whole forward is recomputed before B.
enum class Recompute { none, selective, full };

/// "none", "selective" or "full" as a Recompute. Throws std::invalid_argument ("expected
/// none, selective or full, got 'x'") for any other text.
Recompute parse_recompute(std::string_view name);
/// The name parse_recompute() reads.
const char* recompute_name(Recompute recompute);

/// How the attention core (QKᵀ, softmax, dropout, AV) runs. `fused`: one FlashAttention-style
/// kernel per pass that skips the causally masked half and keeps no s×s matrix; `unfused`:
/// batched GEMMs over the full s×s scores and separate softmax and dropout kernels
/// (Megatron-LM before FlashAttention, as in Narayanan et al., SC'21).
enum class AttentionKernel { fused, unfused };

/// "fused" or "unfused" as an AttentionKernel. Throws std::invalid_argument ("expected fused
/// or unfused, got 'x'") for any other text.
AttentionKernel parse_attention_kernel(std::string_view name);
/// The name parse_attention_kernel() reads.
const char* attention_kernel_name(AttentionKernel kernel);

/// Bytes per gradient element for the name of the gradients' type: 4 for "fp32", 2 for "fp16"
/// or "bf16". Throws std::invalid_argument ("expected fp32, bf16 or fp16, got 'x'") for any
/// other text.
double parse_grad_dtype(std::string_view name);

/// How the layers run: microbatch size, sequence length and tensor parallelism.
struct Workload {
    int microbatch = 1;             ///< b, sequences per microbatch
    int seq_len = 0;                ///< s; 0 means the model's seq_len
    int tp = 1;                     ///< t, tensor-parallel degree (inside a node)
    bool sequence_parallel = true;  ///< with t > 1, shard norms/dropout over the sequence
    Recompute recompute = Recompute::none;
    AttentionKernel attention = AttentionKernel::fused;  ///< times and the stored s×s terms
    /// c, context-parallel degree (ring attention): each GPU holds s/c of every sequence,
    /// passes its K/V block around the c ranks and attends its queries to all s keys.
    int cp = 1;
    /// With t > 1, overlap the tensor-parallel collectives with the GEMMs (Megatron-LM's
    /// --tp-comm-overlap, Transformer Engine's userbuffers) at tp_overlap_efficiency.
    bool tp_comm_overlap = false;
    /// Bytes per element of the gradient buffer the weight gradients accumulate into: 4 (fp32
    /// main gradients) or 2 (16-bit gradients, as fp16 training without
    /// --accumulate-allreduce-grads-in-fp32 kept them). plan_pipeline() sets it from
    /// OptimizerConfig::grad_bytes, which the memory and the optimizer step count with.
    double grad_bytes = 4;
    /// W's GEMMs accumulate into the gradient buffer themselves (Megatron-LM's gradient
    /// accumulation fusion, its default since 2022). false: they write a 16-bit dW, and a
    /// separate memory-bound kernel adds it to the buffer (PyTorch's AccumulateGrad, or the
    /// main_grad hook of Megatron-LM's own DDP) on every microbatch of an iteration but the
    /// first, which stores its dW as the gradient.
    bool grad_accumulation_fusion = true;
    /// The norm kernels are the persistent ones (apex's FastLayerNorm or Transformer Engine's,
    /// Megatron-LM's default since October 2021). false: the non-persistent apex kernels
    /// (Megatron-LM's --no-persist-layer-norm, and all it had before).
    bool persistent_norm = true;
    /// The loss is Megatron-LM's fused cross-entropy (--cross-entropy-loss-fusion): one pass
    /// over the logits in F and one in B. false (Megatron-LM's default): its vocabulary-parallel
    /// cross-entropy of separate PyTorch kernels, eight passes over the fp32 logits.
    bool cross_entropy_fusion = false;
    /// m, the microbatches of one iteration, for the unfused accumulation: it runs on m − 1
    /// of them, charged as (m − 1)/m of one on each. 0: unknown, charged on every microbatch.
    /// analysis::plan_model() sets it from the schedule.
    int iteration_microbatches = 0;

    int seq(const TransformerConfig& config) const {
        return seq_len > 0 ? seq_len : config.seq_len;
    }
};

/// Throws std::invalid_argument unless b, s, t, c ≥ 1, t divides heads, kv_heads and
/// ffn_hidden, c divides s and c > 1 comes with the fused attention (one line naming the
/// model and the numbers).
void check_workload(const TransformerConfig& config, const Workload& workload);

/// Floating-point operations of the three passes (multiply-add = 2 FLOPs).
struct PassFlops {
    double forward = 0;
    double backward_input = 0;
    double backward_weight = 0;
    double total() const { return forward + backward_input + backward_weight; }
};

/// Model FLOPs of one layer for the whole microbatch, before the TP split and without
/// recomputation. GPT shape: F = sbh(24h+4s), B = sbh(24h+8s), W = 24sbh² (Zero Bubble
/// paper, Qi et al., 2024, Table 1); in general the linear part is 2·s·b·(matrix params)
/// per pass and attention adds 4bs²h to F and 8bs²h to B.
PassFlops layer_flops(const TransformerConfig& config, const Workload& workload);

/// Extra FLOPs the recomputation adds to B (0, the attention core's forward, or all of F).
double layer_recompute_flops(const TransformerConfig& config, const Workload& workload);

/// The LM head (hidden → vocab projection): 2sbhV per pass. The softmax/cross-entropy and
/// the embedding lookup are memory-bound and counted as 0 FLOPs.
PassFlops head_flops(const TransformerConfig& config, const Workload& workload);

/// Activation bytes one microbatch holds on one GPU (after the TP/SP/CP split):
/// `activation` from F to B (M_B), of which `held_for_w` is still needed from B to W (M_W).
struct ActivationBytes {
    double activation = 0;
    double held_for_w = 0;
};

/// One layer: sb(34h + 5as) bytes in 16-bit training for the GPT shape (Korthikanti et al.,
/// 2022, eq. 1), sbh(10 + 24/t + 5as/(ht)) with t-way TP, sbh/t·(34 + 5as/h) with SP; of it
/// 32sbh (inputs of the linear layers and gradients of their outputs) is held for W.
/// Full recomputation keeps only the layer input (2sbh) and M_W = M_B; see docs/models.md.
/// These are Korthikanti's figures for the unfused attention; with the fused kernel (the
/// default) the 5as²b of the s×s matrices becomes the 4asb of the rows' log-sum-exp.
ActivationBytes layer_activation_bytes(const TransformerConfig& config, const Workload& workload);

/// The first stage's extra: the embedding dropout mask (sbh bytes, 0 without dropout).
ActivationBytes embedding_activation_bytes(const TransformerConfig& config,
                                           const Workload& workload);

/// The last stage's extra: final-norm and head inputs (4sbh) and the fp32 logits kept for
/// the cross-entropy (4sbV/t); W keeps the head input and the logits' gradient.
ActivationBytes head_activation_bytes(const TransformerConfig& config, const Workload& workload);

/// Tensor-parallel traffic of one layer on one microbatch: `collectives_forward` all-reduces
/// in F and `collectives_backward` in B, each over `bytes` (2sbh; with SP each is an
/// all-gather plus reduce-scatter of the same volume). All zero when t = 1.
struct TensorParallelComm {
    double bytes = 0;
    int collectives_forward = 0;
    int collectives_backward = 0;
};

TensorParallelComm layer_tp_comm(const TransformerConfig& config, const Workload& workload);

/// The TP collectives of one layer's B: its own and, with full recomputation, those of the
/// forward it re-runs.
int tp_collectives_backward(const TensorParallelComm& comm, Recompute recompute);

/// Bytes sent between adjacent pipeline stages per microbatch: s·b·h 16-bit values.
double pipeline_message_bytes(const TransformerConfig& config, const Workload& workload);

/// The share of a tensor-parallel collective hidden behind the GEMMs with tp_comm_overlap:
/// 0.96, the most FLUX (Chang et al., 2024, "FLUX: Fast Software-based Communication Overlap
/// on GPUs Through Kernel Fusion") overlaps with its fused GEMM-collective kernels — an upper
/// bound; Transformer Engine's decomposed userbuffers overlap hides less.
inline constexpr double tp_overlap_efficiency = 0.96;

/// A pass of `compute` seconds with `comm` seconds of collectives overlapped at `efficiency`
/// (0..1): compute + comm − efficiency · min(compute, comm). Never longer than compute + comm
/// (no overlap), never shorter than max(compute, comm).
double overlapped_seconds(double compute, double comm, double efficiency);

/// Bytes per parameter for mixed-precision Adam, on one GPU.
struct OptimizerConfig {
    double weight_bytes = 2;      ///< bf16 weights
    double grad_bytes = 4;        ///< fp32 gradient accumulation (2 for bf16 gradients)
    double optimizer_bytes = 12;  ///< fp32 master copy and two Adam moments
    /// d, the GPUs that hold the same weights and share the sharded state: the data-parallel
    /// replicas times the context-parallel ranks (Megatron-LM's distributed optimizer spans
    /// both).
    int data_parallel = 1;
    bool distributed = false;  ///< shard the optimizer state over the d ranks (ZeRO-1)
    /// ZeRO stage (Rajbhandari et al., 2020, §5): 1 shards the optimizer state over the d
    /// ranks (as `distributed`, Megatron-LM's distributed optimizer), 2 also the gradients,
    /// 3 also the weights (FSDP); 0: none.
    int zero_stage = 0;

    /// The ZeRO stage in effect: zero_stage, or 1 with `distributed`.
    int sharding() const { return zero_stage > 0 ? zero_stage : (distributed ? 1 : 0); }
};

/// weight/(d if stage 3) + grad/(d if stage ≥ 2) + optimizer/(d if stage ≥ 1): 18 bytes,
/// 6 + 12/d with the distributed optimizer or ZeRO-1 (Megatron-LM docs/distrib_optimizer.md,
/// "bf16 param, fp32 grads"), 2 + 16/d with ZeRO-2, 18/d with ZeRO-3 (ZeRO, Rajbhandari et
/// al., 2020, §5.3 counts 2 + 2 + 12 = 16 with bf16 gradients). Throws std::invalid_argument
/// for d < 1, negative bytes or a stage outside 0..3.
double bytes_per_param(const OptimizerConfig& optimizer);

}  // namespace pipesim::models
