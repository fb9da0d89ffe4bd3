// check_kernels(): every kernel of small GPT- and Llama-style layers, with either attention
// kernel, against the CPU references, on the buffers and calls calibrate and gpu-run use.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "calibration/gpu.hpp"
#include "calibration/reference.hpp"
#include "cuda_check.hpp"
#include "layer_runner.hpp"
#include "measure.hpp"

namespace pipesim::calibration {

namespace {

using detail::bf16;
using detail::check;
namespace ref = reference;
using Vec = std::vector<float>;

Vec get(const void* p, long long count) {
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
    check(cudaMemcpy(bits.data(), p, bits.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
    Vec v(bits.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = ref::from_bf16(bits[i]);
    return v;
}

Vec get_f32(const float* p, long long count) {
    Vec v(static_cast<std::size_t>(count));
    check(cudaMemcpy(v.data(), p, v.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return v;
}

Vec concat(Vec a, const Vec& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Elements an operand spans from its pointer (all repeats, group members and batch entries).
long long extent(const detail::Operand& o, long long rows, long long cols,
                 const detail::GemmCall& g) {
    return (g.repeat - 1) * o.outer + (g.group - 1) * o.member + (g.batch - 1) * o.stride +
           (rows - 1) * o.ld + cols;
}

// Runs a GEMM step and returns {GPU result, reference} over C's extent.
std::pair<Vec, Vec> check_gemm(const detail::LayerRunner& runner, Step step, cublasHandle_t blas,
                               cudaStream_t stream) {
    const detail::GemmCall g = runner.gemm_call(step);
    const long long ea = extent(g.a, g.a.trans ? g.k : g.m, g.a.trans ? g.m : g.k, g);
    const long long eb = extent(g.b, g.b.trans ? g.n : g.k, g.b.trans ? g.k : g.n, g);
    const long long ec = extent(g.c, g.m, g.n, g);
    const Vec a = get(g.a.data, ea), b = get(g.b.data, eb);
    Vec want = g.c_fp32 ? get_f32(static_cast<const float*>(g.c.data), ec) : get(g.c.data, ec);
    runner.run_step(step, blas, stream);
    check(cudaStreamSynchronize(stream), "GEMM");
    for (int r = 0; r < g.repeat; ++r)
        for (int member = 0; member < g.group; ++member)
            for (long long i = 0; i < g.batch; ++i)
                ref::gemm(g.a.trans, g.b.trans, static_cast<int>(g.m), static_cast<int>(g.n),
                          static_cast<int>(g.k),
                          a.data() + detail::operand_offset(g.a, r, member) + i * g.a.stride,
                          static_cast<int>(g.a.ld),
                          b.data() + detail::operand_offset(g.b, r, member) + i * g.b.stride,
                          static_cast<int>(g.b.ld), detail::member_beta(g, member),
                          want.data() + detail::operand_offset(g.c, r, member) + i * g.c.stride,
                          static_cast<int>(g.c.ld));
    Vec got = g.c_fp32 ? get_f32(static_cast<const float*>(g.c.data), ec) : get(g.c.data, ec);
    return {std::move(got), std::move(want)};
}

// Every kernel of one small layer, in pass order, against the references; names start with
// `label`.
std::vector<KernelCheck> check_layer(const std::string& label, const models::TransformerConfig& c,
                                     const models::Workload& w, cublasHandle_t blas,
                                     cudaStream_t stream) {
    const LayerShape s = layer_shape(c, w);
    const detail::LayerRunner runner(s, 42);
    const detail::LayerBuffers& b = runner.buffers();
    const int n = s.tokens, h = s.hidden, q = s.qkv_width, f = s.ffn, f1 = s.fc1_width();
    const int hp = s.attn_width, kvw = s.kv_width;
    const int blocks = s.microbatch * s.heads;
    const long long sc = static_cast<long long>(blocks) * s.seq * s.seq;
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    const bool rms = s.norm == models::Norm::rmsnorm;
    auto run = [&](Step step) {
        runner.run_step(step, blas, stream);
        check(cudaStreamSynchronize(stream), "kernel");
    };
    // out = y + bias (if the layer has biases) + residual, row-major rows×cols.
    auto bias_residual = [&](Vec y, const bf16* bias, const Vec* res, int cols) {
        const Vec bv = s.bias ? get(bias, cols) : Vec(static_cast<std::size_t>(cols), 0.0f);
        for (std::size_t i = 0; i < y.size(); ++i)
            y[i] += bv[i % static_cast<std::size_t>(cols)] + (res ? (*res)[i] : 0.0f);
        return y;
    };
    auto norm = [&](const bf16* x, const bf16* gamma, const bf16* beta, const bf16* out,
                    Step step) {
        const Vec xv = get(x, 1LL * n * h), gv = get(gamma, h);
        Vec y(xv.size()), mean(n), rstd(n);
        if (rms)
            ref::rmsnorm_forward(n, h, xv.data(), gv.data(), 1e-5f, y.data(), rstd.data());
        else
            ref::layernorm_forward(n, h, xv.data(), gv.data(), get(beta, h).data(), 1e-5f, y.data(),
                                   mean.data(), rstd.data());
        run(step);
        return std::pair{get(out, 1LL * n * h), y};
    };
    auto norm_b = [&](const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                      const bf16* gamma, const bf16* res, const bf16* dx, Step step) {
        const Vec dyv = get(dy, 1LL * n * h), xv = get(x, 1LL * n * h), r = get_f32(rstd, n),
                  g = get(gamma, h), rv = get(res, 1LL * n * h);
        Vec want(dyv.size());
        if (rms)
            ref::rmsnorm_backward_input(n, h, dyv.data(), xv.data(), r.data(), g.data(), rv.data(),
                                        want.data());
        else
            ref::layernorm_backward_input(n, h, dyv.data(), xv.data(), get_f32(mean, n).data(),
                                          r.data(), g.data(), rv.data(), want.data());
        run(step);
        return std::pair{get(dx, 1LL * n * h), want};
    };
    // Bias gradients (x null) and norm weight gradients (RMSNorm: no mean, no beta).
    auto reduce = [&](const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                      float* dgamma, float* dbeta, int cols, Step step) {
        const bool has_beta = !(x && rms);
        const Vec dyv = get(dy, 1LL * n * cols);
        Vec xv, m, r, dg, db = has_beta ? get_f32(dbeta, cols) : Vec();
        if (x) {
            xv = get(x, 1LL * n * cols), r = get_f32(rstd, n), dg = get_f32(dgamma, cols);
            if (!rms) m = get_f32(mean, n);
        }
        ref::column_reduce(n, cols, dyv.data(), x ? xv.data() : nullptr,
                           m.empty() ? nullptr : m.data(), r.data(), dg.data(),
                           has_beta ? db.data() : nullptr);
        run(step);
        if (!x) return std::pair{get_f32(dbeta, cols), db};
        if (!has_beta) return std::pair{get_f32(dgamma, cols), dg};
        return std::pair{concat(get_f32(dbeta, cols), get_f32(dgamma, cols)), concat(db, dg)};
    };
    auto rotary = [&](const bf16* x, bool inverse, Step step) {
        Vec want = get(x, 1LL * n * q);
        ref::rotary(n, s.seq, hp + kvw, s.head_dim, detail::rotary_base, inverse, want.data(), q);
        run(step);
        return std::pair{get(x, 1LL * n * q), want};
    };
    const ref::AttentionShape attn{s.microbatch, s.seq, s.heads, s.kv_heads,
                                   s.head_dim,   q,     hp,      scale};
    const long long stat_rows = static_cast<long long>(blocks) * s.seq;

    std::vector<KernelCheck> results;
    for (const KernelStep& k : runner.steps()) {
        std::pair<Vec, Vec> r;
        double error = -1;  // set where one figure combines several outputs
        switch (k.step) {
            case Step::ln1_f:
                r = norm(b.x, b.gamma1, b.beta1, b.ln1_out, k.step);
                break;
            case Step::ln2_f:
                r = norm(b.out1, b.gamma2, b.beta2, b.ln2_out, k.step);
                break;
            case Step::qkv_bias_f: {
                const Vec want = bias_residual(get(b.qkv, 1LL * n * q), b.b_qkv, nullptr, q);
                run(k.step);
                r = {get(b.qkv, 1LL * n * q), want};
                break;
            }
            case Step::rotary_f:
                r = rotary(b.qkv, false, k.step);
                break;
            case Step::rotary_b:
                r = rotary(b.d_qkv, true, k.step);
                break;
            case Step::proj_residual_f:
            case Step::fc2_residual_f: {
                const bool proj = k.step == Step::proj_residual_f;
                const Vec res = get(proj ? b.x : b.out1, 1LL * n * h);
                const Vec want =
                    bias_residual(get(b.y, 1LL * n * h), proj ? b.b_proj : b.b_fc2, &res, h);
                run(k.step);
                r = {get(proj ? b.out1 : b.out, 1LL * n * h), want};
                break;
            }
            case Step::softmax_f: {
                const Vec scores = get(b.probs, sc);
                Vec want(scores.size());
                ref::causal_softmax_forward(blocks, s.seq, scale, scores.data(), want.data());
                run(k.step);
                r = {get(b.probs, sc), want};
                break;
            }
            case Step::flash_f: {
                const Vec qkv = get(b.qkv, 1LL * n * q);
                Vec o(static_cast<std::size_t>(n) * hp), lse(static_cast<std::size_t>(stat_rows));
                ref::attention_forward(attn, qkv.data(), qkv.data() + hp, qkv.data() + hp + kvw,
                                       o.data(), lse.data());
                run(k.step);
                error = std::max(ref::relative_error(get(b.ctx, 1LL * n * hp), o),
                                 ref::relative_error(get_f32(b.lse, stat_rows), lse));
                break;
            }
            case Step::flash_b: {
                const Vec qkv = get(b.qkv, 1LL * n * q), d_o = get(b.d_ctx, 1LL * n * hp);
                Vec want(qkv.size());
                ref::attention_backward(attn, qkv.data(), qkv.data() + hp, qkv.data() + hp + kvw,
                                        d_o.data(), want.data(), want.data() + hp,
                                        want.data() + hp + kvw);
                run(k.step);
                r = {get(b.d_qkv, 1LL * n * q), want};
                break;
            }
            case Step::act_f: {
                Vec pre = get(b.pre, 1LL * n * f1);
                if (s.bias) pre = bias_residual(pre, b.b_fc1, nullptr, f1);
                Vec want(static_cast<std::size_t>(n) * f);
                if (s.mlp == models::Mlp::swiglu)
                    ref::swiglu_forward(n, f, pre.data(), want.data());
                else
                    for (std::size_t i = 0; i < want.size(); ++i)
                        want[i] = ref::gelu(pre[i]);
                run(k.step);
                r = {get(b.act, 1LL * n * f), want};
                break;
            }
            case Step::act_b: {
                const Vec da = get(b.d_act, 1LL * n * f), pre = get(b.pre, 1LL * n * f1);
                Vec want(pre.size());
                if (s.mlp == models::Mlp::swiglu)
                    ref::swiglu_backward(n, f, pre.data(), da.data(), want.data());
                else
                    for (std::size_t i = 0; i < da.size(); ++i)
                        want[i] = da[i] * ref::gelu_grad(pre[i]);
                run(k.step);
                r = {get(b.d_pre, 1LL * n * f1), want};
                break;
            }
            case Step::softmax_b: {
                const Vec p = get(b.probs, sc), dp = get(b.d_probs, sc);
                Vec want(p.size());
                ref::causal_softmax_backward(blocks, s.seq, scale, p.data(), dp.data(),
                                             want.data());
                run(k.step);
                r = {get(b.d_probs, sc), want};
                break;
            }
            case Step::ln2_b:
                r = norm_b(b.d_ln2, b.out1, b.mean2, b.rstd2, b.gamma2, b.d_out, b.d_out1, k.step);
                break;
            case Step::ln1_b:
                r = norm_b(b.d_ln1, b.x, b.mean1, b.rstd1, b.gamma1, b.d_out1, b.d_x, k.step);
                break;
            case Step::fc2_bias_w:
                r = reduce(b.d_out, nullptr, nullptr, nullptr, nullptr, b.gb_fc2, h, k.step);
                break;
            case Step::fc1_bias_w:
                r = reduce(b.d_pre, nullptr, nullptr, nullptr, nullptr, b.gb_fc1, f1, k.step);
                break;
            case Step::proj_bias_w:
                r = reduce(b.d_out1, nullptr, nullptr, nullptr, nullptr, b.gb_proj, h, k.step);
                break;
            case Step::qkv_bias_w:
                r = reduce(b.d_qkv, nullptr, nullptr, nullptr, nullptr, b.gb_qkv, q, k.step);
                break;
            case Step::ln2_w:
                r = reduce(b.d_ln2, b.out1, b.mean2, b.rstd2, b.g_gamma2, b.g_beta2, h, k.step);
                break;
            case Step::ln1_w:
                r = reduce(b.d_ln1, b.x, b.mean1, b.rstd1, b.g_gamma1, b.g_beta1, h, k.step);
                break;
            default:
                r = check_gemm(runner, k.step, blas, stream);
                break;
        }
        if (error < 0) error = ref::relative_error(r.first, r.second);
        results.push_back({fmt::format("{} {} {}", label, pass_name(k.pass), k.name), error});
    }
    return results;
}

// The small layers the check runs: GPT-style and Llama-style, each with both attention
// kernels. s = 80 leaves the fused attention a partial second tile; head dimension 32.
std::vector<std::pair<std::string, models::TransformerConfig>> check_models() {
    models::TransformerConfig gpt;
    gpt.name = "gpt";
    gpt.layers = 1;
    gpt.hidden = 128;
    gpt.heads = 4;
    gpt.ffn_hidden = 256;
    gpt.vocab = 1;
    gpt.seq_len = 80;
    models::TransformerConfig llama = gpt;
    llama.name = "llama";
    llama.kv_heads = 2;
    llama.ffn_hidden = 192;
    llama.mlp = models::Mlp::swiglu;
    llama.norm = models::Norm::rmsnorm;
    llama.linear_bias = false;
    llama.learned_positions = false;
    return {{"gpt", gpt}, {"llama", llama}};
}

}  // namespace

std::vector<KernelCheck> check_kernels(int device) {
    detail::require_devices();
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaStream_t stream{};
    cublasHandle_t blas{};
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");
    std::vector<KernelCheck> results;
    for (const auto& [name, config] : check_models())
        for (auto kind : {models::AttentionKernel::unfused, models::AttentionKernel::fused}) {
            models::Workload w;
            w.microbatch = 2;
            w.attention = kind;
            const std::string label =
                name + (kind == models::AttentionKernel::fused ? "-fused" : "-unfused");
            for (KernelCheck& k : check_layer(label, config, w, blas, stream))
                results.push_back(std::move(k));
        }
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
    return results;
}

}  // namespace pipesim::calibration
