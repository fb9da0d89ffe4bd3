#include "models/operators.hpp"

namespace pipesim::models {

namespace {

// FLOPs per element of the memory-bound kernels (they never bound the time; counted so the
// totals are honest): LayerNorm mean, variance, normalize, scale, shift; RMSNorm without the
// mean and shift; tanh-GeLU; SiLU and the gating product; softmax max, subtract, exp, sum,
// divide; rotary's multiply-add pair per element.
constexpr double layernorm_flops = 8, rmsnorm_flops = 5, gelu_flops = 8, swiglu_flops = 6,
                 softmax_flops = 5, rotary_flops = 3, add_flops = 1, dropout_flops = 1,
                 cross_entropy_flops = 5;

// Sizes as doubles (s·b·h·h overflows 32-bit integers) for one GPU of the TP group.
struct Shape {
    double tokens;      // s·b on this GPU (s·b/c with context parallelism)
    double row_tokens;  // tokens of the replicated kernels: tokens, or tokens/t with SP
    double s;           // this GPU's queries per sequence: s, or s/c
    double s_kv;        // keys each query may attend: the whole sequence
    double b, h, kv, f, v, t, heads, head_dim;
    double mask;  // 1 with dropout (a 1-byte mask per element), else 0
};

Shape shape_of(const TransformerConfig& c, const Workload& w) {
    Shape d{};
    d.s_kv = w.seq(c);
    d.s = d.s_kv / w.cp;
    d.b = w.microbatch;
    d.t = w.tp;
    d.tokens = d.s * d.b;
    d.row_tokens = w.sequence_parallel ? d.tokens / d.t : d.tokens;
    d.h = c.hidden;
    d.kv = c.kv_dim();
    d.f = c.ffn_or_default();
    d.v = c.vocab;
    d.heads = c.heads;
    d.head_dim = c.head_dim();
    d.mask = c.dropout ? 1 : 0;
    return d;
}

// Appends operators to one list; `pass` is set before each group.
class Builder {
  public:
    explicit Builder(std::vector<Operator>& ops) : ops_(ops) {}
    Pass pass = Pass::forward;

    // A GEMM reading bf16 A and B and writing C with `out_bytes` per element (2: bf16; 8: an
    // fp32 gradient accumulated in place, read and written).
    Operator& gemm(std::string_view name, double m, double n, double k, double batch = 1,
                   double out_bytes = 2) {
        Operator op;
        op.name = name;
        op.pass = pass;
        op.kind = OpKind::gemm;
        op.shape = {m, n, k, batch};
        op.flops = 2 * m * n * k * batch;
        op.bytes = batch * (2 * m * k + 2 * k * n + out_bytes * m * n);
        return push(op);
    }
    // A memory-bound kernel over `elements`, moving `bytes_each` bytes per element.
    Operator& memory(std::string_view name, double elements, double bytes_each, double flops_each) {
        Operator op;
        op.name = name;
        op.pass = pass;
        op.kind = OpKind::memory;
        op.flops = elements * flops_each;
        op.bytes = elements * bytes_each;
        return push(op);
    }
    // The model's norm (LayerNorm or RMSNorm) and which kernels run it, for norm().
    void set_norm(const TransformerConfig& c, const Workload& w) {
        norm_flops_ = c.norm == Norm::layernorm ? layernorm_flops : rmsnorm_flops;
        persistent_norm_ = w.persistent_norm;
    }
    // A norm kernel over `elements`: forward reads X and writes Y (4 bytes each); backward
    // reads dY and X and writes dX (6; the γ and β gradients' partial reductions re-read them
    // inside the time its measured rate was taken with).
    Operator& norm(std::string_view name, double elements) {
        const bool forward = pass == Pass::forward;
        Operator& op = memory(name, elements, forward ? 4 : 6, norm_flops_);
        if (persistent_norm_)
            op.memory_rate = forward ? MemoryRate::norm_forward : MemoryRate::norm_backward;
        else
            op.memory_rate = forward ? MemoryRate::nonpersistent_norm_forward
                                     : MemoryRate::nonpersistent_norm_backward;
        return op;
    }
    Operator& attention(std::string_view name, double flops, double bytes) {
        Operator op;
        op.name = name;
        op.pass = pass;
        op.kind = OpKind::attention;
        op.flops = flops;
        op.bytes = bytes;
        op.attention_core = pass == Pass::forward;
        return push(op);
    }

    std::size_t size() const { return ops_.size(); }
    // The operators from `first` on move the unfused attention's s×s scores; forward ones
    // are also the attention core selective recomputation re-runs.
    void mark_scores(std::size_t first, bool core) {
        for (std::size_t i = first; i < ops_.size(); ++i) {
            ops_[i].memory_rate = MemoryRate::scores;
            ops_[i].attention_core = core;
        }
    }

  private:
    Operator& push(const Operator& op) {
        ops_.push_back(op);
        return ops_.back();
    }
    std::vector<Operator>& ops_;
    double norm_flops_ = layernorm_flops;
    bool persistent_norm_ = true;
};

// The unfused gradient accumulation runs on m − 1 of an iteration's m microbatches: the share
// of it one microbatch is charged (all of it when m is unknown).
double accumulated_share(const Workload& w) {
    const int m = w.iteration_microbatches;
    return m > 0 ? (m - 1.0) / m : 1.0;
}

// Bytes per element a weight-gradient GEMM writes: with accumulation fusion it reads and
// writes the gradient buffer in place, else it writes a 16-bit dW.
double dw_out_bytes(const Workload& w) {
    return w.grad_accumulation_fusion ? 2 * w.grad_bytes : 2;
}

// Without accumulation fusion: the kernel that adds a 16-bit dW of `elements` into the gradient
// buffer (reads both, writes the buffer), on (m − 1)/m of the microbatches.
void accumulate_gradient(Builder& o, const Workload& w, std::string_view name, double elements) {
    const double share = accumulated_share(w);
    if (w.grad_accumulation_fusion || share == 0) return;
    o.memory(name, elements * share, 2 + 2 * w.grad_bytes, add_flops);
}

// The attention core of F and B. Unfused (Megatron-LM before FlashAttention): batched GEMMs
// over all s×s scores (the causal mask is applied, not skipped), a fused scale-mask-softmax
// kernel and a dropout kernel on the s×s probabilities.
void attention_core(Builder& o, const Shape& d, bool fused, Pass pass) {
    const double batch = d.b * d.heads / d.t;  // (sequence, head) pairs on this rank
    const double scores = batch * d.s * d.s_kv;
    o.pass = pass;
    if (fused) {
        // FlashAttention: the unmasked half of QKᵀ and AV; it reads Q, K, V and writes O
        // (and the fp32 log-sum-exp per row); B reads them and dO, writes dQ, dK, dV.
        // With context parallelism K and V of the whole sequence pass through, block by block.
        const double forward_flops = 4 * d.b * d.s * d.s_kv * d.h / d.t / 2;
        const double qkvo = 2 * (d.tokens * 2 * d.h + d.b * d.s_kv * 2 * d.kv) / d.t;
        const double lse = 4 * d.tokens * d.heads / d.t;
        if (pass == Pass::forward)
            o.attention("flash attention", forward_flops, qkvo + lse);
        else
            o.attention("flash attention backward", 2.5 * forward_flops,
                        qkvo + lse + 2 * (d.tokens * 2 * d.h + d.b * d.s_kv * 2 * d.kv) / d.t);
        return;
    }
    // Megatron-LM's unfused core attention returns its context as [s, b, h]: the batched AV
    // writes it head by head ([b·a, s, d]), and a permute(...).contiguous() copies it, read
    // and written once (part of the core, so selective recomputation re-runs it). In B the
    // context's gradient is copied back to the heads' layout first, and the gradients of Q,
    // K and V, views into one QKV output in F, are gathered into one tensor last.
    const double context = d.tokens * d.heads * d.head_dim / d.t;
    if (pass == Pass::backward_input) o.memory("context gradient copy", context, 4, 0);
    const std::size_t first = o.size();
    if (pass == Pass::forward) {
        o.gemm("QKᵀ", d.s, d.s_kv, d.head_dim, batch);
        o.memory("scale-mask-softmax", scores, 4, softmax_flops);
        if (d.mask > 0) o.memory("attention dropout", scores, 5, dropout_flops);
        o.gemm("AV", d.s, d.head_dim, d.s_kv, batch);
    } else {
        o.gemm("dP = dO·Vᵀ", d.s, d.s_kv, d.head_dim, batch);
        o.gemm("dV = Pᵀ·dO", d.s_kv, d.head_dim, d.s, batch);
        if (d.mask > 0) o.memory("attention dropout backward", scores, 5, dropout_flops);
        o.memory("softmax backward", scores, 6, softmax_flops);
        o.gemm("dQ = dS·K", d.s, d.head_dim, d.s_kv, batch);
        o.gemm("dK = dSᵀ·Q", d.s_kv, d.head_dim, d.s, batch);
    }
    o.mark_scores(first, pass == Pass::forward);
    if (pass == Pass::forward)
        o.memory("context copy", context, 4, 0).attention_core = true;
    else
        o.memory("QKV gradient gather", d.tokens * (d.h + 2 * d.kv) / d.t, 4, 0);
}

}  // namespace

const char* pass_letter(Pass pass) {
    switch (pass) {
        case Pass::forward:
            return "F";
        case Pass::backward_input:
            return "B";
        case Pass::backward_weight:
            return "W";
    }
    return "?";
}

const char* op_kind_name(OpKind kind) {
    switch (kind) {
        case OpKind::gemm:
            return "gemm";
        case OpKind::attention:
            return "attention";
        case OpKind::memory:
            return "memory";
    }
    return "?";
}

std::vector<Operator> layer_operators(const TransformerConfig& c, const Workload& w) {
    const Shape d = shape_of(c, w);
    const bool fused = w.attention == AttentionKernel::fused;
    const bool rotary = !c.learned_positions;
    const bool gated = c.mlp == Mlp::swiglu;
    const double qkv = (d.h + 2 * d.kv) / d.t;      // QKV outputs on this rank
    const double up = (gated ? 2 : 1) * d.f / d.t;  // MLP up (and gate) outputs on this rank
    const double rows = d.row_tokens * d.h;         // elements of a replicated h-wide tensor
    // Residual add with the (bias and) dropout before it: reads the branch and the residual,
    // writes the sum and the mask. Without dropout it is a plain add, whose backward runs no
    // kernel (the sum's gradient is passed to both inputs as it is).
    const bool dropout = d.mask > 0;
    const double add_bytes = 2 + 2 + 2 + d.mask;
    const double add_op_flops = add_flops + (dropout ? dropout_flops : 0);

    std::vector<Operator> ops;
    Builder o(ops);
    o.set_norm(c, w);
    o.pass = Pass::forward;
    o.norm("norm 1", rows);
    o.gemm("QKV", d.tokens, qkv, d.h);
    // Megatron-LM fuses the other projections' biases into the GeLU and the dropout-adds
    // (skip_bias_add), but adds the QKV bias in a kernel of its own after the GEMM: it reads
    // the GEMM's output and writes the sum.
    if (c.linear_bias) o.memory("QKV bias add", d.tokens * qkv, 4, add_flops);
    if (rotary) o.memory("rotary", d.tokens * (d.h + d.kv) / d.t, 4, rotary_flops);
    attention_core(o, d, fused, Pass::forward);
    o.pass = Pass::forward;
    o.gemm("attention projection", d.tokens, d.h, d.h / d.t);
    o.memory(dropout ? "dropout-add 1" : "residual add 1", rows, add_bytes, add_op_flops);
    o.norm("norm 2", rows);
    o.gemm("MLP up", d.tokens, up, d.h);
    o.memory(gated ? "SwiGLU" : "GeLU", d.tokens * d.f / d.t, gated ? 6 : 4,
             gated ? swiglu_flops : gelu_flops);
    o.gemm("MLP down", d.tokens, d.h, d.f / d.t);
    o.memory(dropout ? "dropout-add 2" : "residual add 2", rows, add_bytes, add_op_flops);

    // B in reverse order: dX = dY·Wᵀ for every GEMM, the backward of every memory-bound kernel.
    // Dropout-add backward reads the gradient (and mask), writes the branch's gradient. A norm's
    // input also feeds the residual path: autograd adds the two gradients in a kernel of its
    // own after the norm's backward (reads both, writes the sum).
    o.pass = Pass::backward_input;
    if (dropout) o.memory("dropout-add 2 backward", rows, 4 + d.mask, dropout_flops);
    o.gemm("MLP down dX", d.tokens, d.f / d.t, d.h);
    o.memory(gated ? "SwiGLU backward" : "GeLU backward", d.tokens * d.f / d.t, gated ? 10 : 6,
             gated ? swiglu_flops : gelu_flops);
    o.gemm("MLP up dX", d.tokens, d.h, up);
    o.norm("norm 2 backward", rows);
    o.memory("residual gradient add 2", rows, 6, add_flops);
    if (dropout) o.memory("dropout-add 1 backward", rows, 4 + d.mask, dropout_flops);
    o.gemm("attention projection dX", d.tokens, d.h / d.t, d.h);
    attention_core(o, d, fused, Pass::backward_input);
    o.pass = Pass::backward_input;
    if (rotary) o.memory("rotary backward", d.tokens * (d.h + d.kv) / d.t, 4, rotary_flops);
    o.gemm("QKV dX", d.tokens, d.h, qkv);
    o.norm("norm 1 backward", rows);
    o.memory("residual gradient add 1", rows, 6, add_flops);

    // W: dW = Xᵀ·dY, accumulated into the gradient buffer by the GEMMs (Megatron-LM's gradient
    // accumulation fusion) or by a kernel of its own after them, and the bias gradients (a
    // reduction over the tokens of each dY).
    o.pass = Pass::backward_weight;
    const double dw = dw_out_bytes(w);
    o.gemm("QKV dW", d.h, qkv, d.tokens, 1, dw);
    o.gemm("attention projection dW", d.h / d.t, d.h, d.tokens, 1, dw);
    o.gemm("MLP up dW", d.h, up, d.tokens, 1, dw);
    o.gemm("MLP down dW", d.f / d.t, d.h, d.tokens, 1, dw);
    if (c.linear_bias) o.memory("bias gradients", d.tokens * (qkv + d.h + up + d.h), 2, 1);
    accumulate_gradient(
        o, w, "gradient accumulation",
        d.h * (qkv + up) + d.h * (d.h + d.f) / d.t + (c.linear_bias ? qkv + d.h + up + d.h : 0));
    return ops;
}

std::vector<Operator> embedding_operators(const TransformerConfig& c, const Workload& w) {
    const Shape d = shape_of(c, w);
    const double positions = c.learned_positions ? 1 : 0;
    std::vector<Operator> ops;
    Builder o(ops);
    // Vocabulary-parallel lookup: every rank writes all s·b·h outputs (zeros where another
    // rank owns the token) before the TP reduction; learned positions are read and added.
    o.pass = Pass::forward;
    o.memory("embedding lookup", d.tokens * d.h, 4 + 2 * positions, positions * add_flops);
    if (d.mask > 0) o.memory("embedding dropout", d.row_tokens * d.h, 5, dropout_flops);
    o.pass = Pass::backward_input;
    if (d.mask > 0) o.memory("embedding dropout backward", d.row_tokens * d.h, 5, dropout_flops);
    // Scatter-add of dY into the gradient buffer (read dY, read and write the row). Without
    // accumulation fusion PyTorch's dense embedding backward first fills a zeroed 16-bit
    // gradient of the whole table (vocabulary and positions), which is then accumulated.
    o.pass = Pass::backward_weight;
    const double table =
        d.v / d.t * d.h + positions * c.seq_len * d.h;  // the table stage_params() counts
    if (w.grad_accumulation_fusion) {
        o.memory("embedding gradient", d.tokens * d.h, (2 + 2 * w.grad_bytes) * (1 + positions),
                 add_flops);
    } else {
        o.memory("embedding gradient zero", table, 2, 0);
        o.memory("embedding gradient", d.tokens * d.h, (2 + 4) * (1 + positions), add_flops);
        accumulate_gradient(o, w, "embedding gradient accumulation", table);
    }
    return ops;
}

std::vector<Operator> head_operators(const TransformerConfig& c, const Workload& w) {
    const Shape d = shape_of(c, w);
    const double vocab = d.v / d.t;  // vocabulary-parallel logits on this rank
    std::vector<Operator> ops;
    Builder o(ops);
    o.set_norm(c, w);
    o.pass = Pass::forward;
    o.norm("final norm", d.row_tokens * d.h);
    o.gemm("logits", d.tokens, vocab, d.h);
    const double logits = d.tokens * vocab;
    if (w.cross_entropy_fusion) {
        // One kernel reads the 16-bit logits and keeps fp32 probabilities for B, which turns
        // them into the logits' 16-bit gradient.
        o.memory("cross-entropy", logits, 2 + 4, cross_entropy_flops);
        o.pass = Pass::backward_input;
        o.memory("cross-entropy backward", logits, 4 + 2, cross_entropy_flops);
    } else {
        // Megatron-LM's vocabulary-parallel cross-entropy (megatron/core/tensor_parallel/
        // cross_entropy.py; mpu/cross_entropy.py in 2021), one PyTorch kernel per step over the
        // fp32 logits: the cast, the row maximum, its subtraction in place, exp in place, the
        // row sum, the division into the probabilities kept for B; in B the scaling by the
        // loss's gradient in place, and the cast of the result back to 16 bits.
        o.memory("logits to fp32", logits, 2 + 4, 0);
        o.memory("logits row max", logits, 4, 1);
        o.memory("logits minus max", logits, 4 + 4, 1);
        o.memory("logits exp", logits, 4 + 4, 1);
        o.memory("exp row sum", logits, 4, 1);
        o.memory("softmax divide", logits, 4 + 4, 1);
        o.pass = Pass::backward_input;
        o.memory("cross-entropy gradient", logits, 4 + 4, 1);
        o.memory("logits gradient to 16-bit", logits, 4 + 2, 0);
    }
    o.gemm("logits dX", d.tokens, d.h, vocab);
    o.norm("final norm backward", d.row_tokens * d.h);
    o.pass = Pass::backward_weight;
    o.gemm("logits dW", d.h, vocab, d.tokens, 1, dw_out_bytes(w));
    accumulate_gradient(o, w, "logits gradient accumulation", d.h * vocab);
    return ops;
}

}  // namespace pipesim::models
