#include "models/layer_costs.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/parse_error.hpp"

namespace pipesim::models {

Recompute parse_recompute(std::string_view name) {
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
        if (name == recompute_name(r)) return r;
    throw std::invalid_argument(
        fmt::format("expected none, selective or full, got {}", fileio::quote_excerpt(name)));
}

const char* recompute_name(Recompute recompute) {
    switch (recompute) {
        case Recompute::none:
            return "none";
        case Recompute::selective:
            return "selective";
        case Recompute::full:
            return "full";
    }
    return "none";
}

AttentionKernel parse_attention_kernel(std::string_view name) {
    for (AttentionKernel k : {AttentionKernel::fused, AttentionKernel::unfused})
        if (name == attention_kernel_name(k)) return k;
    throw std::invalid_argument(
        fmt::format("expected fused or unfused, got {}", fileio::quote_excerpt(name)));
}

const char* attention_kernel_name(AttentionKernel kernel) {
    return kernel == AttentionKernel::unfused ? "unfused" : "fused";
}

double parse_grad_dtype(std::string_view name) {
    if (name == "fp32") return 4;
    if (name == "fp16" || name == "bf16") return 2;
    throw std::invalid_argument(
        fmt::format("expected fp32, bf16 or fp16, got {}", fileio::quote_excerpt(name)));
}

namespace {

// Sizes as doubles: s·b·h·h overflows 32-bit integers for large models.
struct Dims {
    double s, b, h, a, kv, f, v, t;
    double c;  // context-parallel degree: a GPU holds s/c of each sequence
};

Dims dims(const TransformerConfig& c, const Workload& w) {
    return {static_cast<double>(w.seq(c)),   static_cast<double>(w.microbatch),
            static_cast<double>(c.hidden),   static_cast<double>(c.heads),
            static_cast<double>(c.kv_dim()), static_cast<double>(c.ffn_or_default()),
            static_cast<double>(c.vocab),    static_cast<double>(w.tp),
            static_cast<double>(w.cp)};
}

// Forward FLOPs of the attention core (QKᵀ and AV), counting the full s×s score matrix as
// Megatron and the Zero Bubble paper do (no causal-mask saving).
double attention_core_forward(const Dims& d) {
    return 4 * d.b * d.s * d.s * d.h;
}

// Parameters in the layer's weight matrices (what the GEMMs multiply by).
double matrix_params(const TransformerConfig& c) {
    const Dims d = dims(c, Workload{});
    const double mlp_matrices = c.mlp == Mlp::swiglu ? 3 : 2;
    return 2 * d.h * d.h + 2 * d.h * d.kv + mlp_matrices * d.h * d.f;
}

}  // namespace

void check_workload(const TransformerConfig& c, const Workload& w) {
    if (w.microbatch < 1)
        throw std::invalid_argument(
            fmt::format("microbatch size must be ≥ 1, got {}", w.microbatch));
    if (w.seq(c) < 1)
        throw std::invalid_argument(fmt::format("sequence length must be ≥ 1, got {}", w.seq(c)));
    // A learned position table (GPT's) holds seq_len rows and cannot place a longer
    // sequence's tokens; rotary positions have no such bound.
    if (c.learned_positions && w.seq(c) > c.seq_len)
        throw std::invalid_argument(fmt::format(
            "sequence length {} is longer than {}'s learned position table of {} positions "
            "(its seq_len): give the model a seq_len of at least {}",
            w.seq(c), c.name, c.seq_len, w.seq(c)));
    if (w.tp < 1)
        throw std::invalid_argument(
            fmt::format("tensor-parallel degree must be ≥ 1, got {}", w.tp));
    auto divides = [&](const char* what, int value) {
        if (value % w.tp != 0)
            throw std::invalid_argument(
                fmt::format("tensor-parallel degree {} does not divide {}'s {} ({})", w.tp, c.name,
                            what, value));
    };
    divides("attention heads", c.heads);
    divides("key/value heads", c.kv_heads_or_default());
    divides("ffn_hidden", c.ffn_or_default());
    if (w.cp < 1)
        throw std::invalid_argument(
            fmt::format("context-parallel degree must be ≥ 1, got {}", w.cp));
    // Megatron-LM balances causal attention over the ranks by cutting each sequence into 2·C
    // chunks, rank r taking chunks r and 2C − 1 − r (get_batch_on_this_cp_rank): 2·C must
    // divide the sequence.
    if (w.cp > 1 && w.seq(c) % (2 * w.cp) != 0)
        throw std::invalid_argument(
            fmt::format("context-parallel degree {} needs a sequence length that 2·{} = {} "
                        "divides (load-balanced causal chunks), got {}",
                        w.cp, w.cp, 2 * w.cp, w.seq(c)));
    // Sequence parallelism splits each rank's tokens over the t GPUs along the sequence
    // (Megatron-LM's _split_along_first_dim asserts that t divides that dimension).
    if (w.sequence_parallel && w.tp > 1 && (w.seq(c) / w.cp) % w.tp != 0)
        throw std::invalid_argument(fmt::format(
            "sequence parallelism splits {} (length {}) over the {} tensor-parallel GPUs, "
            "which must divide it: give a sequence length they divide, or --no-sp",
            w.cp > 1 ? "a context-parallel rank's share of the sequence" : "the sequence",
            w.seq(c) / w.cp, w.tp));
    // Megatron-LM's context parallelism passes K/V blocks through Transformer Engine's fused
    // attention; the ring model (cp_ring_layer) times those kernels.
    if (w.cp > 1 && w.attention == AttentionKernel::unfused)
        throw std::invalid_argument(fmt::format(
            "context parallelism (ring attention over {} GPUs) runs on the fused attention "
            "kernel, not the unfused one",
            w.cp));
}

PassFlops layer_flops(const TransformerConfig& c, const Workload& w) {
    const Dims d = dims(c, w);
    // Each pass multiplies every weight matrix once: F computes X·W, B computes dY·Wᵀ and W
    // computes Xᵀ·dY (Zero Bubble paper, §2). For the GPT shape the matrices hold 12h² and
    // this gives 24sbh² per pass.
    const double linear = 2 * d.s * d.b * matrix_params(c);
    const double core = attention_core_forward(d);
    return {linear + core, linear + 2 * core, linear};
}

double layer_recompute_flops(const TransformerConfig& c, const Workload& w) {
    switch (w.recompute) {
        case Recompute::none:
            return 0;
        case Recompute::selective:
            return attention_core_forward(dims(c, w));
        case Recompute::full:
            return layer_flops(c, w).forward;
    }
    return 0;
}

PassFlops head_flops(const TransformerConfig& c, const Workload& w) {
    const Dims d = dims(c, w);
    const double gemm = 2 * d.s * d.b * d.h * d.v;
    return {gemm, gemm, gemm};
}

ActivationBytes layer_activation_bytes(const TransformerConfig& c, const Workload& w) {
    const Dims d = dims(c, w);
    const double sb = d.s * d.b / d.c;  // this GPU's tokens
    const double drop = c.dropout ? 1 : 0;
    // Split over the TP ranks only with sequence parallelism: norm inputs, the QKV and MLP
    // inputs and the dropout masks (Korthikanti et al., 2022, §4.2.2).
    const double shard = w.sequence_parallel ? d.t : 1;
    const double gated = c.mlp == Mlp::swiglu ? 1 : 0;

    // Korthikanti et al., 2022, §4.1, per component, in bytes (16-bit values, 1-byte masks).
    // Not split by TP: two norm inputs (2sbh each), QKV input (2sbh), MLP input (2sbh),
    // two dropout masks (sbh each): 10sbh for GPT.
    const double replicated = sb * (2 * 2 * d.h + 2 * d.h + 2 * d.h + 2 * drop * d.h);
    // Split by TP: Q and K (2sbh + 2sb·kv), V (2sb·kv), output-projection input (2sbh), the
    // MLP's hidden activations (GeLU: input and output, 4sbf; SwiGLU: gate, up and product,
    // 6sbf): 24sbh for GPT.
    const double split = sb * (2 * d.h + 4 * d.kv + 2 * d.h + (4 + 2 * gated) * d.f);
    // The attention core: softmax output (2as²b), its dropout mask (as²b) and dropout output
    // (2as²b): 5as²b; without dropout AV reads the softmax output. A fused (FlashAttention)
    // kernel materializes no s×s matrix: it keeps the fp32 log-sum-exp of each row (4asb)
    // and recomputes the rest in its backward pass (Dao et al., 2022, §3.1).
    // With context parallelism a GPU's s/c queries attend all s keys.
    const double core =
        w.attention == AttentionKernel::fused ? 4 * d.a * sb : d.a * sb * d.s * (2 + 3 * drop);

    // W needs the inputs of the linear layers and the gradients of their outputs (Zero Bubble
    // paper, Table 1: 32sbh for GPT). Replicated: QKV and MLP inputs, the gradients of the
    // output projection's and second MLP matrix's outputs (8sbh). Split: the gradients of
    // the QKV (2sbh + 4sb·kv) and first-MLP outputs (2sbf, 4sbf gated), the output projection
    // and second MLP inputs (2sbh + 2sbf): 24sbh for GPT.
    const double w_replicated = sb * 4 * 2 * d.h;
    const double w_split = sb * (2 * d.h + 4 * d.kv + 2 * d.h + (4 + 2 * gated) * d.f);

    ActivationBytes bytes;
    bytes.held_for_w = w_replicated / shard + w_split / d.t;
    switch (w.recompute) {
        case Recompute::none:
            bytes.activation = replicated / shard + split / d.t + core / d.t;
            break;
        case Recompute::selective:
            bytes.activation = replicated / shard + split / d.t;
            break;
        case Recompute::full:
            // Only the layer input is kept; B recomputes the rest. The MemoryModel cannot
            // express B growing the held memory, so M_W is capped at M_B (docs/models.md).
            bytes.activation = 2 * sb * d.h / shard;
            bytes.held_for_w = bytes.activation;
            break;
    }
    return bytes;
}

ActivationBytes embedding_activation_bytes(const TransformerConfig& c, const Workload& w) {
    const Dims d = dims(c, w);
    const double shard = w.sequence_parallel ? d.t : 1;
    return {c.dropout ? d.s * d.b / d.c * d.h / shard : 0.0, 0.0};
}

ActivationBytes head_activation_bytes(const TransformerConfig& c, const Workload& w) {
    const Dims d = dims(c, w);
    const double sb = d.s * d.b / d.c;
    const double shard = w.sequence_parallel ? d.t : 1;
    // Final-norm input and head input (2sbh each) and the fp32 logits for the cross-entropy
    // (4sbV/t, vocabulary-parallel); Korthikanti et al., 2022, §4.3 counts 4sbh/t·(1 + V/h).
    ActivationBytes bytes;
    bytes.activation = 4 * sb * d.h / shard + 4 * sb * d.v / d.t;
    bytes.held_for_w = 2 * sb * d.h / shard + 2 * sb * d.v / d.t;
    return bytes;
}

TensorParallelComm layer_tp_comm(const TransformerConfig& c, const Workload& w) {
    if (w.tp == 1) return {};
    const Dims d = dims(c, w);
    // Megatron-LM tensor parallelism: one all-reduce after attention and one after the MLP
    // in F, and their conjugates in B (Shoeybi et al., 2019, Fig. 4).
    return {2 * d.s * d.b / d.c * d.h, 2, 2};
}

int tp_collectives_backward(const TensorParallelComm& comm, Recompute recompute) {
    return comm.collectives_backward +
           (recompute == Recompute::full ? comm.collectives_forward : 0);
}

double pipeline_message_bytes(const TransformerConfig& c, const Workload& w) {
    const Dims d = dims(c, w);
    return 2 * d.s * d.b / d.c * d.h;
}

double bytes_per_param(const OptimizerConfig& o) {
    if (o.data_parallel < 1)
        throw std::invalid_argument(
            fmt::format("data-parallel size must be ≥ 1, got {}", o.data_parallel));
    if (o.weight_bytes < 0 || o.grad_bytes < 0 || o.optimizer_bytes < 0)
        throw std::invalid_argument("bytes per parameter must be ≥ 0");
    if (o.zero_stage < 0 || o.zero_stage > 3)
        throw std::invalid_argument(
            fmt::format("ZeRO stage must be 0, 1, 2 or 3, got {}", o.zero_stage));
    const int stage = o.sharding();
    const double d = o.data_parallel;
    return o.weight_bytes / (stage >= 3 ? d : 1) + o.grad_bytes / (stage >= 2 ? d : 1) +
           o.optimizer_bytes / (stage >= 1 ? d : 1);
}

double overlapped_seconds(double compute, double comm, double efficiency) {
    return compute + comm - efficiency * std::min(compute, comm);
}

}  // namespace pipesim::models
