#include "calibration/layer_shape.hpp"

#include <stdexcept>

#include <fmt/format.h>

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
    s.qkv_width = s.attn_width + 2 * s.kv_heads * s.head_dim;
    s.ffn = config.ffn_or_default() / s.tp;
    s.mlp = config.mlp;
    return s;
}

namespace {

// Builds the step table: each linear layer contributes one GEMM per pass, the attention core
// two in F and four in B, the memory-bound kernels their bytes.
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
    std::vector<KernelStep> take() { return std::move(steps_); }

  private:
    const LayerShape& s_;
    std::vector<KernelStep> steps_;
};

}  // namespace

std::vector<KernelStep> layer_steps(const LayerShape& s) {
    const double n = s.tokens, h = s.hidden, q = s.qkv_width, f = s.ffn;
    const double fc1_out = s.mlp == models::Mlp::swiglu ? 2 * f : f;
    const double scores = static_cast<double>(s.microbatch) * s.heads * s.seq * s.seq;
    const long long batch = static_cast<long long>(s.microbatch) * s.heads;
    const GemmShape qk{s.seq, s.seq, s.head_dim, batch};  // S = Q·Kᵀ, dP = dO·Vᵀ
    const GemmShape av{s.seq, s.head_dim, s.seq, batch};  // O = P·V, dV, dQ, dK
    const auto fc1_width = static_cast<long long>(fc1_out);
    constexpr double bf16 = 2, f32 = 4;

    StepList l(s);
    // F
    l.memory(Step::ln1_f, Pass::F, "ln1", bf16 * 2 * n * h + f32 * 2 * n);
    l.linear(Step::qkv_f, Pass::F, "qkv", s.hidden, s.qkv_width);
    l.memory(Step::qkv_bias_f, Pass::F, "qkv_bias", bf16 * 2 * n * q);
    l.gemm(Step::scores_f, Pass::F, "scores", qk);
    l.memory(Step::softmax_f, Pass::F, "softmax", bf16 * 2 * scores);
    l.gemm(Step::context_f, Pass::F, "context", av);
    l.linear(Step::proj_f, Pass::F, "proj", s.attn_width, s.hidden);
    l.memory(Step::proj_residual_f, Pass::F, "proj_residual", bf16 * 3 * n * h);
    l.memory(Step::ln2_f, Pass::F, "ln2", bf16 * 2 * n * h + f32 * 2 * n);
    l.linear(Step::fc1_f, Pass::F, "fc1", s.hidden, fc1_width);
    l.memory(Step::bias_gelu_f, Pass::F, "bias_gelu", bf16 * 3 * n * fc1_out);
    l.linear(Step::fc2_f, Pass::F, "fc2", s.ffn, s.hidden);
    l.memory(Step::fc2_residual_f, Pass::F, "fc2_residual", bf16 * 3 * n * h);
    // B: input gradients, in reverse
    l.linear(Step::fc2_b, Pass::B, "fc2", s.ffn, s.hidden);
    l.memory(Step::gelu_b, Pass::B, "gelu", bf16 * 3 * n * fc1_out);
    l.linear(Step::fc1_b, Pass::B, "fc1", s.hidden, fc1_width);
    l.memory(Step::ln2_b, Pass::B, "ln2", bf16 * 4 * n * h + f32 * 2 * n);
    l.linear(Step::proj_b, Pass::B, "proj", s.attn_width, s.hidden);
    l.gemm(Step::attn_dv_b, Pass::B, "attn_dv", av);
    l.gemm(Step::attn_dp_b, Pass::B, "attn_dp", qk);
    l.memory(Step::softmax_b, Pass::B, "softmax", bf16 * 3 * scores);
    l.gemm(Step::attn_dq_b, Pass::B, "attn_dq", av);
    l.gemm(Step::attn_dk_b, Pass::B, "attn_dk", av);
    l.linear(Step::qkv_b, Pass::B, "qkv", s.hidden, s.qkv_width);
    l.memory(Step::ln1_b, Pass::B, "ln1", bf16 * 4 * n * h + f32 * 2 * n);
    // W: weight gradients (GEMMs into fp32 gradients, bias and norm reductions)
    l.linear(Step::fc2_w, Pass::W, "fc2", s.ffn, s.hidden);
    l.memory(Step::fc2_bias_w, Pass::W, "fc2_bias", bf16 * n * h);
    l.linear(Step::fc1_w, Pass::W, "fc1", s.hidden, fc1_width);
    l.memory(Step::fc1_bias_w, Pass::W, "fc1_bias", bf16 * n * fc1_out);
    l.linear(Step::proj_w, Pass::W, "proj", s.attn_width, s.hidden);
    l.memory(Step::proj_bias_w, Pass::W, "proj_bias", bf16 * n * h);
    l.linear(Step::qkv_w, Pass::W, "qkv", s.hidden, s.qkv_width);
    l.memory(Step::qkv_bias_w, Pass::W, "qkv_bias", bf16 * n * q);
    l.memory(Step::ln2_w, Pass::W, "ln2", bf16 * 2 * n * h + f32 * 2 * n);
    l.memory(Step::ln1_w, Pass::W, "ln1", bf16 * 2 * n * h + f32 * 2 * n);
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

void check_kernel_support(const models::TransformerConfig& config) {
    if (config.mlp != models::Mlp::gelu)
        throw std::invalid_argument(fmt::format(
            "the calibration kernels implement GeLU MLPs (GPT-style models); {} uses SwiGLU",
            config.name));
    if (config.kv_heads_or_default() != config.heads)
        throw std::invalid_argument(fmt::format(
            "the calibration kernels implement multi-head attention; {} uses grouped-query "
            "attention ({} key/value heads for {} heads)",
            config.name, config.kv_heads_or_default(), config.heads));
    if (config.norm != models::Norm::layernorm)
        throw std::invalid_argument(fmt::format(
            "the calibration kernels implement LayerNorm; {} uses RMSNorm", config.name));
}

}  // namespace pipesim::calibration
