#include "layer_runner.hpp"

#include <cmath>
#include <utility>

#include "cuda_check.hpp"

namespace pipesim::calibration::detail {

namespace {

// Carves typed arrays out of one allocation, each 256-byte aligned.
class Carver {
  public:
    template <class T>
    void add(T*& p, long long count) {
        parts_.push_back({reinterpret_cast<void**>(&p), bytes_});
        bytes_ += (static_cast<std::size_t>(count) * sizeof(T) + 255) / 256 * 256;
    }
    std::size_t bytes() const { return bytes_; }
    void assign(void* base) {
        for (auto& [slot, off] : parts_)
            *slot = static_cast<char*>(base) + off;
    }

  private:
    std::vector<std::pair<void**, std::size_t>> parts_;
    std::size_t bytes_ = 0;
};

}  // namespace

LayerRunner::LayerRunner(const LayerShape& s, std::uint64_t seed)
    : shape_(s), steps_(layer_steps(s)) {
    const long long n = s.tokens, h = s.hidden, q = s.qkv_width, hp = s.attn_width, f = s.ffn;
    const long long f1 = s.fc1_width();
    const bool fused = s.attention == models::AttentionKernel::fused;
    const long long rows = static_cast<long long>(s.microbatch) * s.heads * s.seq;
    const long long sc = fused ? 0 : rows * s.seq;
    const long long stats = fused ? rows : 0;
    LayerBuffers& b = buf_;
    Carver c;
    // bf16 first (filled at random), then fp32 (zeroed).
    c.add(b.w_qkv, q * h), c.add(b.b_qkv, q), c.add(b.w_proj, h * hp), c.add(b.b_proj, h);
    c.add(b.w_fc1, f1 * h), c.add(b.b_fc1, f1), c.add(b.w_fc2, h * f), c.add(b.b_fc2, h);
    c.add(b.gamma1, h), c.add(b.beta1, h), c.add(b.gamma2, h), c.add(b.beta2, h);
    c.add(b.x, n * h), c.add(b.ln1_out, n * h), c.add(b.qkv, n * q), c.add(b.probs, sc);
    c.add(b.ctx, n * hp), c.add(b.y, n * h), c.add(b.out1, n * h), c.add(b.ln2_out, n * h);
    c.add(b.pre, n * f1), c.add(b.act, n * f), c.add(b.out, n * h);
    c.add(b.d_out, n * h), c.add(b.d_act, n * f), c.add(b.d_pre, n * f1), c.add(b.d_ln2, n * h);
    c.add(b.d_out1, n * h), c.add(b.d_ctx, n * hp), c.add(b.d_probs, sc), c.add(b.d_qkv, n * q);
    c.add(b.d_ln1, n * h), c.add(b.d_x, n * h);
    const std::size_t bf16_bytes = c.bytes();
    c.add(b.g_qkv, q * h), c.add(b.gb_qkv, q), c.add(b.g_proj, h * hp), c.add(b.gb_proj, h);
    c.add(b.g_fc1, f1 * h), c.add(b.gb_fc1, f1), c.add(b.g_fc2, h * f), c.add(b.gb_fc2, h);
    c.add(b.g_gamma1, h), c.add(b.g_beta1, h), c.add(b.g_gamma2, h), c.add(b.g_beta2, h);
    c.add(b.mean1, n), c.add(b.rstd1, n), c.add(b.mean2, n), c.add(b.rstd2, n);
    c.add(b.lse, stats), c.add(b.delta, stats), c.add(b.dq_sum, fused ? n * hp : 0);
    check(cudaMalloc(&memory_, c.bytes()), "cudaMalloc (layer buffers)");
    c.assign(memory_);
    // Weights ~ U(±1/√h) keep activations of order one; everything else U(±1).
    const float w_scale = 1.0f / std::sqrt(static_cast<float>(h));
    fill_uniform(b.w_qkv, b.gamma1 - b.w_qkv, w_scale, seed, nullptr);
    fill_uniform(b.gamma1, static_cast<bf16*>(memory_) + bf16_bytes / 2 - b.gamma1, 1.0f, seed + 1,
                 nullptr);
    check(cudaMemset(static_cast<char*>(memory_) + bf16_bytes, 0, c.bytes() - bf16_bytes),
          "cudaMemset");
    check(cudaDeviceSynchronize(), "filling layer buffers");
}

LayerRunner::~LayerRunner() {
    cudaFree(memory_);
}

GemmCall LayerRunner::gemm_call(Step step) const {
    const LayerShape& s = shape_;
    const LayerBuffers& b = buf_;
    const long long n = s.tokens, h = s.hidden, q = s.qkv_width, hp = s.attn_width, f = s.ffn;
    const long long f1 = s.fc1_width();
    const long long d = s.head_dim, sq = s.seq, ss = sq * sq, grp = s.group();
    const long long heads_ss = s.heads * ss;  // one sequence's scores
    const long long seq_q = sq * q, seq_hp = sq * hp;
    auto m = [](const void* p, long long ld, bool t = false) { return Operand{p, ld, 0, 0, t}; };
    auto linear = [&](long long rows, long long cols, long long inner, Operand a, Operand bb,
                      Operand c, bool fp32 = false) {
        GemmCall g;
        g.m = rows, g.n = cols, g.k = inner, g.a = a, g.b = bb, g.c = c;
        g.c_fp32 = fp32;
        g.beta = fp32 ? 1.0f : 0.0f;
        return g;
    };
    // Operands of the attention GEMMs: one cuBLAS call per (sequence, query head of a group),
    // batched over the key/value heads. Query head j·g + i of a sequence: Q, O and the scores
    // step g heads per batch entry and one head per member; K and V one head per batch entry
    // and none per member (the group's query heads share them, and their gradients sum).
    const bf16* qp = b.qkv;
    const bf16* kp = b.qkv + hp;
    const bf16* vp = b.qkv + hp + s.kv_width;
    auto head = [&](const void* p, long long ld, long long outer, bool t = false) {
        return Operand{p, ld, grp * d, outer, t, d};
    };
    auto kv_head = [&](const void* p, long long outer, bool t = false) {
        return Operand{p, q, d, outer, t, 0};
    };
    auto scores = [&](const void* p, bool t = false) {
        return Operand{p, sq, grp * ss, heads_ss, t, ss};
    };
    auto attention = [&](long long rows, long long cols, long long inner, Operand a, Operand bb,
                         Operand c) {
        GemmCall call;
        call.m = rows, call.n = cols, call.k = inner, call.a = a, call.b = bb, call.c = c;
        call.batch = s.kv_heads;
        call.group = s.group();
        call.repeat = s.microbatch;
        return call;
    };
    switch (step) {
        case Step::qkv_f:
            return linear(n, q, h, m(b.ln1_out, h), m(b.w_qkv, h, true), m(b.qkv, q));
        case Step::proj_f:
            return linear(n, h, hp, m(b.ctx, hp), m(b.w_proj, hp, true), m(b.y, h));
        case Step::fc1_f:
            return linear(n, f1, h, m(b.ln2_out, h), m(b.w_fc1, h, true), m(b.pre, f1));
        case Step::fc2_f:
            return linear(n, h, f, m(b.act, f), m(b.w_fc2, f, true), m(b.y, h));
        case Step::fc2_b:
            return linear(n, f, h, m(b.d_out, h), m(b.w_fc2, f), m(b.d_act, f));
        case Step::fc1_b:
            return linear(n, h, f1, m(b.d_pre, f1), m(b.w_fc1, h), m(b.d_ln2, h));
        case Step::proj_b:
            return linear(n, hp, h, m(b.d_out1, h), m(b.w_proj, hp), m(b.d_ctx, hp));
        case Step::qkv_b:
            return linear(n, h, q, m(b.d_qkv, q), m(b.w_qkv, h), m(b.d_ln1, h));
        case Step::fc2_w:
            return linear(h, f, n, m(b.d_out, h, true), m(b.act, f), m(b.g_fc2, f), true);
        case Step::fc1_w:
            return linear(f1, h, n, m(b.d_pre, f1, true), m(b.ln2_out, h), m(b.g_fc1, h), true);
        case Step::proj_w:
            return linear(h, hp, n, m(b.d_out1, h, true), m(b.ctx, hp), m(b.g_proj, hp), true);
        case Step::qkv_w:
            return linear(q, h, n, m(b.d_qkv, q, true), m(b.ln1_out, h), m(b.g_qkv, h), true);
        case Step::scores_f:  // S = Q·Kᵀ
            return attention(sq, sq, d, head(qp, q, seq_q), kv_head(kp, seq_q, true),
                             scores(b.probs));
        case Step::context_f:  // O = P·V
            return attention(sq, d, sq, scores(b.probs), kv_head(vp, seq_q),
                             head(b.ctx, hp, seq_hp));
        case Step::attn_dv_b:  // dV = Pᵀ·dO (summed over the group)
            return attention(sq, d, sq, scores(b.probs, true), head(b.d_ctx, hp, seq_hp),
                             kv_head(b.d_qkv + (vp - qp), seq_q));
        case Step::attn_dp_b:  // dP = dO·Vᵀ
            return attention(sq, sq, d, head(b.d_ctx, hp, seq_hp), kv_head(vp, seq_q, true),
                             scores(b.d_probs));
        case Step::attn_dq_b:  // dQ = dS·K
            return attention(sq, d, sq, scores(b.d_probs), kv_head(kp, seq_q),
                             head(b.d_qkv, q, seq_q));
        case Step::attn_dk_b:  // dK = dSᵀ·Q (summed over the group)
            return attention(sq, d, sq, scores(b.d_probs, true), head(qp, q, seq_q),
                             kv_head(b.d_qkv + (kp - qp), seq_q));
        default:
            throw std::logic_error("gemm_call: not a GEMM step");
    }
}

FlashShape LayerRunner::flash_shape() const {
    const LayerShape& s = shape_;
    return {
        s.microbatch, s.seq,       s.heads,      s.kv_heads,
        s.head_dim,   s.qkv_width, s.attn_width, 1.0f / std::sqrt(static_cast<float>(s.head_dim))};
}

void LayerRunner::run_step(Step step, cublasHandle_t blas, cudaStream_t st) const {
    const LayerShape& s = shape_;
    const LayerBuffers& b = buf_;
    const int n = s.tokens, h = s.hidden, q = s.qkv_width, f = s.ffn;
    const long long score_rows = static_cast<long long>(s.microbatch) * s.heads * s.seq;
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    const bool rms = s.norm == models::Norm::rmsnorm;
    const bool swiglu = s.mlp == models::Mlp::swiglu;
    // RMSNorm runs the LayerNorm kernels without beta and mean; no biases without biases.
    const bf16* beta1 = rms ? nullptr : b.beta1;
    const bf16* beta2 = rms ? nullptr : b.beta2;
    float* mean1 = rms ? nullptr : b.mean1;
    float* mean2 = rms ? nullptr : b.mean2;
    auto bias = [&](const bf16* p) { return s.bias ? p : nullptr; };
    const int rotated = s.attn_width + s.kv_width;  // Q and K columns
    bf16* const kq = b.qkv + s.attn_width;
    bf16* const vq = kq + s.kv_width;
    constexpr float eps = 1e-5f;
    switch (step) {
        case Step::ln1_f:
            return layernorm_forward(b.x, b.gamma1, beta1, b.ln1_out, mean1, b.rstd1, n, h, eps,
                                     st);
        case Step::qkv_bias_f:
            return add_bias_residual(b.qkv, b.b_qkv, nullptr, b.qkv, n, q, st);
        case Step::rotary_f:
            return rotary(b.qkv, n, s.seq, rotated, s.head_dim, q, rotary_base, false, st);
        case Step::softmax_f:
            return causal_softmax_forward(b.probs, b.probs, score_rows, s.seq, scale, st);
        case Step::flash_f:
            return flash_attention_forward(b.qkv, kq, vq, b.ctx, b.lse, flash_shape(), st);
        case Step::proj_residual_f:
            return add_bias_residual(b.y, bias(b.b_proj), b.x, b.out1, n, h, st);
        case Step::ln2_f:
            return layernorm_forward(b.out1, b.gamma2, beta2, b.ln2_out, mean2, b.rstd2, n, h, eps,
                                     st);
        case Step::act_f:
            return swiglu ? swiglu_forward(b.pre, bias(b.b_fc1), b.act, n, f, st)
                          : bias_gelu_forward(b.pre, bias(b.b_fc1), b.act, n, f, st);
        case Step::fc2_residual_f:
            return add_bias_residual(b.y, bias(b.b_fc2), b.out1, b.out, n, h, st);
        case Step::act_b:
            return swiglu
                       ? swiglu_backward(b.d_act, b.pre, b.d_pre, n, f, st)
                       : gelu_backward(b.d_act, b.pre, b.d_pre, static_cast<long long>(n) * f, st);
        case Step::ln2_b:
            return layernorm_backward_input(b.d_ln2, b.out1, mean2, b.rstd2, b.gamma2, b.d_out,
                                            b.d_out1, n, h, st);
        case Step::softmax_b:
            return causal_softmax_backward(b.probs, b.d_probs, score_rows, s.seq, scale, st);
        case Step::flash_b:
            return flash_attention_backward(b.qkv, kq, vq, b.ctx, b.d_ctx, b.lse, b.delta, b.dq_sum,
                                            b.d_qkv, b.d_qkv + s.attn_width,
                                            b.d_qkv + s.attn_width + s.kv_width, flash_shape(), st);
        case Step::rotary_b:
            return rotary(b.d_qkv, n, s.seq, rotated, s.head_dim, q, rotary_base, true, st);
        case Step::ln1_b:
            return layernorm_backward_input(b.d_ln1, b.x, mean1, b.rstd1, b.gamma1, b.d_out1, b.d_x,
                                            n, h, st);
        case Step::fc2_bias_w:
            return column_reduce(b.d_out, nullptr, nullptr, nullptr, nullptr, b.gb_fc2, n, h, st);
        case Step::fc1_bias_w:
            return column_reduce(b.d_pre, nullptr, nullptr, nullptr, nullptr, b.gb_fc1, n,
                                 s.fc1_width(), st);
        case Step::proj_bias_w:
            return column_reduce(b.d_out1, nullptr, nullptr, nullptr, nullptr, b.gb_proj, n, h, st);
        case Step::qkv_bias_w:
            return column_reduce(b.d_qkv, nullptr, nullptr, nullptr, nullptr, b.gb_qkv, n, q, st);
        case Step::ln2_w:
            return column_reduce(b.d_ln2, b.out1, mean2, b.rstd2, b.g_gamma2,
                                 rms ? nullptr : b.g_beta2, n, h, st);
        case Step::ln1_w:
            return column_reduce(b.d_ln1, b.x, mean1, b.rstd1, b.g_gamma1,
                                 rms ? nullptr : b.g_beta1, n, h, st);
        default:
            return run_gemm(blas, gemm_call(step));
    }
}

void LayerRunner::run_pass(Pass pass, cublasHandle_t blas, cudaStream_t stream) const {
    for (const KernelStep& k : steps_)
        if (k.pass == pass || (pass == Pass::BW && k.pass != Pass::F))
            run_step(k.step, blas, stream);
}

}  // namespace pipesim::calibration::detail
