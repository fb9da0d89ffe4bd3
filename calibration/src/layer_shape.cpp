#include "calibration/layer_shape.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pipesim::calibration {

LayerShape layer_shape(const models::TransformerConfig& config, const models::Workload& workload) {
    models::check_config(config);
    models::check_workload(config, workload);
    LayerShape s;
    s.microbatch = workload.microbatch;
    s.seq = workload.seq(config);
    s.tokens = s.microbatch * s.seq;
    s.hidden = config.hidden;
    s.tp = workload.tp;
    s.heads = config.heads / s.tp;
    s.kv_heads = config.kv_heads_or_default() / s.tp;
    s.head_dim = config.head_dim();
    s.attn_width = s.heads * s.head_dim;
    s.kv_width = s.kv_heads * s.head_dim;
    s.qkv_width = s.attn_width + 2 * s.kv_width;
    s.ffn = config.ffn_or_default() / s.tp;
    s.mlp = config.mlp;
    s.norm = config.norm;
    s.bias = config.linear_bias;
    s.rotary = !config.learned_positions;
    s.attention = workload.attention;
    return s;
}

namespace {

// Builds the step table: each linear layer contributes one GEMM per pass, the unfused
// attention core two in F and four in B (the fused one a kernel per pass), the memory-bound
// kernels their bytes.
class StepList {
  public:
    explicit StepList(const LayerShape& s) : s_(s) {}

    // A linear layer with `in` inputs and `out` outputs per token, split the Zero Bubble way.
    void linear(Step step, Pass pass, std::string_view name, long long in, long long out) {
        const long long n = s_.tokens;
        GemmShape g;
        if (pass == Pass::F)
            g = {n, out, in, 1};  // Y[n×out] = X[n×in]·Wᵀ
        else if (pass == Pass::B)
            g = {n, in, out, 1};  // dX[n×in] = dY[n×out]·W
        else
            g = {out, in, n, 1};  // dW[out×in] += dYᵀ·X
        gemm(step, pass, name, g);
    }
    void gemm(Step step, Pass pass, std::string_view name, GemmShape g) {
        steps_.push_back({step, pass, name, true, g, g.flops(), 0});
    }
    void memory(Step step, Pass pass, std::string_view name, double bytes) {
        steps_.push_back({step, pass, name, false, {}, 0, bytes});
    }
    void fused(Step step, Pass pass, std::string_view name, double flops, double bytes) {
        steps_.push_back({step, pass, name, false, {}, flops, bytes});
    }
    std::vector<KernelStep> take() { return std::move(steps_); }

  private:
    const LayerShape& s_;
    std::vector<KernelStep> steps_;
};

}  // namespace

std::vector<KernelStep> layer_steps(const LayerShape& s) {
    const double n = s.tokens, h = s.hidden, q = s.qkv_width, f = s.ffn, f1 = s.fc1_width();
    const double qk_cols = s.attn_width + s.kv_width;  // columns rotary touches: Q and K
    const double scores = static_cast<double>(s.microbatch) * s.heads * s.seq * s.seq;
    const double rows = static_cast<double>(s.microbatch) * s.heads * s.seq;  // attention rows
    const long long batch = static_cast<long long>(s.microbatch) * s.heads;
    const GemmShape qk{s.seq, s.seq, s.head_dim, batch};  // S = Q·Kᵀ, dP = dO·Vᵀ
    const GemmShape av{s.seq, s.head_dim, s.seq, batch};  // O = P·V, dV, dQ, dK
    const bool rms = s.norm == models::Norm::rmsnorm;
    const bool swiglu = s.mlp == models::Mlp::swiglu;
    const bool fused = s.attention == models::AttentionKernel::fused;
    constexpr double bf16 = 2, f32 = 4;
    // Per-row statistics a norm saves: mean and rstd (LayerNorm), rstd (RMSNorm).
    const double stats = f32 * (rms ? 1 : 2) * n;
    const std::string_view norm1 = rms ? "rmsnorm1" : "ln1", norm2 = rms ? "rmsnorm2" : "ln2";
    // Fused attention: models/' count, the causally unmasked half of QKᵀ and AV in F; B
    // recomputes QKᵀ and runs dP, dV, dK, dQ (2.5× F).
    const double flash_flops = 2.0 * static_cast<double>(batch) * s.seq * s.seq * s.head_dim;
    const double qkv_o = bf16 * n * (q + s.attn_width);  // read Q, K, V; write O

    StepList l(s);
    // F
    l.memory(Step::ln1_f, Pass::F, norm1, bf16 * 2 * n * h + stats);
    l.linear(Step::qkv_f, Pass::F, "qkv", s.hidden, s.qkv_width);
    if (s.bias) l.memory(Step::qkv_bias_f, Pass::F, "qkv_bias", bf16 * 2 * n * q);
    if (s.rotary) l.memory(Step::rotary_f, Pass::F, "rotary", bf16 * 2 * n * qk_cols);
    if (fused) {
        l.fused(Step::flash_f, Pass::F, "flash", flash_flops, qkv_o + f32 * rows);
    } else {
        l.gemm(Step::scores_f, Pass::F, "scores", qk);
        l.memory(Step::softmax_f, Pass::F, "softmax", bf16 * 2 * scores);
        l.gemm(Step::context_f, Pass::F, "context", av);
    }
    l.linear(Step::proj_f, Pass::F, "proj", s.attn_width, s.hidden);
    l.memory(Step::proj_residual_f, Pass::F, "proj_residual", bf16 * 3 * n * h);
    l.memory(Step::ln2_f, Pass::F, norm2, bf16 * 2 * n * h + stats);
    l.linear(Step::fc1_f, Pass::F, "fc1", s.hidden, s.fc1_width());
    // The activation reads the f1 pre-activations (rewriting them with the bias added) and
    // writes the f activations.
    l.memory(Step::act_f, Pass::F,
             swiglu ? (s.bias ? "bias_swiglu" : "swiglu") : (s.bias ? "bias_gelu" : "gelu"),
             bf16 * n * ((s.bias ? 2 : 1) * f1 + f));
    l.linear(Step::fc2_f, Pass::F, "fc2", s.ffn, s.hidden);
    l.memory(Step::fc2_residual_f, Pass::F, "fc2_residual", bf16 * 3 * n * h);
    // B: input gradients, in reverse
    l.linear(Step::fc2_b, Pass::B, "fc2", s.ffn, s.hidden);
    l.memory(Step::act_b, Pass::B, swiglu ? "swiglu" : "gelu", bf16 * n * (f + 2 * f1));
    l.linear(Step::fc1_b, Pass::B, "fc1", s.hidden, s.fc1_width());
    l.memory(Step::ln2_b, Pass::B, norm2, bf16 * 4 * n * h + stats);
    l.linear(Step::proj_b, Pass::B, "proj", s.attn_width, s.hidden);
    if (fused) {
        // Reads Q, K, V, O, dO and the row statistics, writes dQ (through an fp32 sum), dK, dV.
        l.fused(Step::flash_b, Pass::B, "flash", 2.5 * flash_flops,
                2 * qkv_o + f32 * (3 * rows + 2 * n * s.attn_width));
    } else {
        l.gemm(Step::attn_dv_b, Pass::B, "attn_dv", av);
        l.gemm(Step::attn_dp_b, Pass::B, "attn_dp", qk);
        l.memory(Step::softmax_b, Pass::B, "softmax", bf16 * 3 * scores);
        l.gemm(Step::attn_dq_b, Pass::B, "attn_dq", av);
        l.gemm(Step::attn_dk_b, Pass::B, "attn_dk", av);
    }
    if (s.rotary) l.memory(Step::rotary_b, Pass::B, "rotary", bf16 * 2 * n * qk_cols);
    l.linear(Step::qkv_b, Pass::B, "qkv", s.hidden, s.qkv_width);
    l.memory(Step::ln1_b, Pass::B, norm1, bf16 * 4 * n * h + stats);
    // W: weight gradients (GEMMs into fp32 gradients, bias and norm reductions)
    l.linear(Step::fc2_w, Pass::W, "fc2", s.ffn, s.hidden);
    if (s.bias) l.memory(Step::fc2_bias_w, Pass::W, "fc2_bias", bf16 * n * h);
    l.linear(Step::fc1_w, Pass::W, "fc1", s.hidden, s.fc1_width());
    if (s.bias) l.memory(Step::fc1_bias_w, Pass::W, "fc1_bias", bf16 * n * f1);
    l.linear(Step::proj_w, Pass::W, "proj", s.attn_width, s.hidden);
    if (s.bias) l.memory(Step::proj_bias_w, Pass::W, "proj_bias", bf16 * n * h);
    l.linear(Step::qkv_w, Pass::W, "qkv", s.hidden, s.qkv_width);
    if (s.bias) l.memory(Step::qkv_bias_w, Pass::W, "qkv_bias", bf16 * n * q);
    l.memory(Step::ln2_w, Pass::W, norm2, bf16 * 2 * n * h + stats);
    l.memory(Step::ln1_w, Pass::W, norm1, bf16 * 2 * n * h + stats);
    return l.take();
}

std::vector<KernelStep> pass_steps(const LayerShape& shape, Pass pass) {
    std::vector<KernelStep> out;
    for (const KernelStep& k : layer_steps(shape))
        if (k.pass == pass || (pass == Pass::BW && (k.pass == Pass::B || k.pass == Pass::W)))
            out.push_back(k);
    return out;
}

models::PassFlops steps_flops(std::span<const KernelStep> steps) {
    models::PassFlops f;
    for (const KernelStep& k : steps) {
        if (k.pass == Pass::F) f.forward += k.flops;
        if (k.pass == Pass::B) f.backward_input += k.flops;
        if (k.pass == Pass::W) f.backward_weight += k.flops;
    }
    return f;
}

void check_kernel_support(const models::TransformerConfig& config,
                          const models::Workload& workload) {
    const LayerShape s = layer_shape(config, workload);
    if (s.attention != models::AttentionKernel::fused) return;
    for (int d : flash_head_dims)
        if (d == s.head_dim) return;
    throw std::invalid_argument(
        fmt::format("the fused attention kernel is built for head dimensions {}; {} has {} (use "
                    "--attention unfused)",
                    fmt::join(flash_head_dims, ", "), config.name, s.head_dim));
}

}  // namespace pipesim::calibration
