// check_kernels(): every kernel of a small layer against the CPU reference, on the buffers
// and calls calibrate and gpu-run use.
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

// Elements an operand spans from its pointer (all repeats and batch entries).
long long extent(const detail::Operand& o, long long rows, long long cols, long long batch,
                 int repeat) {
    return (repeat - 1) * o.outer + (batch - 1) * o.stride + (rows - 1) * o.ld + cols;
}

// Runs a GEMM step and returns {GPU result, reference} over C's extent.
std::pair<Vec, Vec> check_gemm(const detail::LayerRunner& runner, Step step, cublasHandle_t blas,
                               cudaStream_t stream) {
    const detail::GemmCall g = runner.gemm_call(step);
    const long long ea =
        extent(g.a, g.a.trans ? g.k : g.m, g.a.trans ? g.m : g.k, g.batch, g.repeat);
    const long long eb =
        extent(g.b, g.b.trans ? g.n : g.k, g.b.trans ? g.k : g.n, g.batch, g.repeat);
    const long long ec = extent(g.c, g.m, g.n, g.batch, g.repeat);
    const Vec a = get(g.a.data, ea), b = get(g.b.data, eb);
    Vec want = g.c_fp32 ? get_f32(static_cast<const float*>(g.c.data), ec) : get(g.c.data, ec);
    runner.run_step(step, blas, stream);
    check(cudaStreamSynchronize(stream), "GEMM");
    for (int r = 0; r < g.repeat; ++r)
        for (long long i = 0; i < g.batch; ++i)
            ref::gemm(g.a.trans, g.b.trans, static_cast<int>(g.m), static_cast<int>(g.n),
                      static_cast<int>(g.k), a.data() + r * g.a.outer + i * g.a.stride,
                      static_cast<int>(g.a.ld), b.data() + r * g.b.outer + i * g.b.stride,
                      static_cast<int>(g.b.ld), g.beta,
                      want.data() + r * g.c.outer + i * g.c.stride, static_cast<int>(g.c.ld));
    Vec got = g.c_fp32 ? get_f32(static_cast<const float*>(g.c.data), ec) : get(g.c.data, ec);
    return {std::move(got), std::move(want)};
}

}  // namespace

std::vector<KernelCheck> check_kernels(int device) {
    detail::require_devices();
    check(cudaSetDevice(device), "cudaSetDevice");
    models::TransformerConfig c;
    c.name = "kernel check";
    c.layers = 1;
    c.hidden = 64;
    c.heads = 4;
    c.ffn_hidden = 256;
    c.vocab = 1;
    c.seq_len = 32;
    models::Workload w;
    w.microbatch = 2;
    const LayerShape s = layer_shape(c, w);
    const detail::LayerRunner runner(s, 42);
    const detail::LayerBuffers& b = runner.buffers();
    cudaStream_t stream{};
    cublasHandle_t blas{};
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    check(cublasCreate(&blas), "cublasCreate");
    check(cublasSetStream(blas, stream), "cublasSetStream");

    const int n = s.tokens, h = s.hidden, q = s.qkv_width, f = s.ffn;
    const int blocks = s.microbatch * s.heads;
    const long long sc = static_cast<long long>(blocks) * s.seq * s.seq;
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
    auto run = [&](Step step) {
        runner.run_step(step, blas, stream);
        check(cudaStreamSynchronize(stream), "kernel");
    };
    // out = y + bias + residual, row-major rows×cols.
    auto bias_residual = [](Vec y, const Vec& bias, const Vec* res, int cols) {
        for (std::size_t i = 0; i < y.size(); ++i)
            y[i] += bias[i % static_cast<std::size_t>(cols)] + (res ? (*res)[i] : 0.0f);
        return y;
    };
    auto layernorm = [&](const bf16* x, const bf16* gamma, const bf16* beta, const bf16* out,
                         Step step) {
        const Vec xv = get(x, 1LL * n * h), gv = get(gamma, h), bv = get(beta, h);
        Vec y(xv.size()), mean(n), rstd(n);
        ref::layernorm_forward(n, h, xv.data(), gv.data(), bv.data(), 1e-5f, y.data(), mean.data(),
                               rstd.data());
        run(step);
        return std::pair{get(out, 1LL * n * h), y};
    };
    auto layernorm_b = [&](const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                           const bf16* gamma, const bf16* res, const bf16* dx, Step step) {
        const Vec dyv = get(dy, 1LL * n * h), xv = get(x, 1LL * n * h), m = get_f32(mean, n),
                  r = get_f32(rstd, n), g = get(gamma, h), rv = get(res, 1LL * n * h);
        Vec want(dyv.size());
        ref::layernorm_backward_input(n, h, dyv.data(), xv.data(), m.data(), r.data(), g.data(),
                                      rv.data(), want.data());
        run(step);
        return std::pair{get(dx, 1LL * n * h), want};
    };
    auto reduce = [&](const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                      float* dgamma, float* dbeta, int cols, Step step) {
        const Vec dyv = get(dy, 1LL * n * cols);
        Vec xv, m, r, dg, db = get_f32(dbeta, cols);
        if (x)
            xv = get(x, 1LL * n * cols), m = get_f32(mean, n), r = get_f32(rstd, n),
            dg = get_f32(dgamma, cols);
        ref::column_reduce(n, cols, dyv.data(), x ? xv.data() : nullptr, m.data(), r.data(),
                           dg.data(), db.data());
        run(step);
        Vec got = get_f32(dbeta, cols);
        if (x) return std::pair{concat(got, get_f32(dgamma, cols)), concat(db, dg)};
        return std::pair{got, db};
    };

    std::vector<KernelCheck> results;
    for (const KernelStep& k : runner.steps()) {
        std::pair<Vec, Vec> r;
        switch (k.step) {
            case Step::ln1_f:
                r = layernorm(b.x, b.gamma1, b.beta1, b.ln1_out, k.step);
                break;
            case Step::ln2_f:
                r = layernorm(b.out1, b.gamma2, b.beta2, b.ln2_out, k.step);
                break;
            case Step::qkv_bias_f: {
                const Vec want =
                    bias_residual(get(b.qkv, 1LL * n * q), get(b.b_qkv, q), nullptr, q);
                run(k.step);
                r = {get(b.qkv, 1LL * n * q), want};
                break;
            }
            case Step::proj_residual_f:
            case Step::fc2_residual_f: {
                const bool proj = k.step == Step::proj_residual_f;
                const Vec res = get(proj ? b.x : b.out1, 1LL * n * h);
                const Vec want = bias_residual(get(b.y, 1LL * n * h),
                                               get(proj ? b.b_proj : b.b_fc2, h), &res, h);
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
            case Step::bias_gelu_f: {
                Vec want = bias_residual(get(b.pre, 1LL * n * f), get(b.b_fc1, f), nullptr, f);
                for (float& v : want)
                    v = ref::gelu(v);
                run(k.step);
                r = {get(b.act, 1LL * n * f), want};
                break;
            }
            case Step::gelu_b: {
                const Vec da = get(b.d_act, 1LL * n * f), pre = get(b.pre, 1LL * n * f);
                Vec want(da.size());
                for (std::size_t i = 0; i < da.size(); ++i)
                    want[i] = da[i] * ref::gelu_grad(pre[i]);
                run(k.step);
                r = {get(b.d_pre, 1LL * n * f), want};
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
                r = layernorm_b(b.d_ln2, b.out1, b.mean2, b.rstd2, b.gamma2, b.d_out, b.d_out1,
                                k.step);
                break;
            case Step::ln1_b:
                r = layernorm_b(b.d_ln1, b.x, b.mean1, b.rstd1, b.gamma1, b.d_out1, b.d_x, k.step);
                break;
            case Step::fc2_bias_w:
                r = reduce(b.d_out, nullptr, nullptr, nullptr, nullptr, b.gb_fc2, h, k.step);
                break;
            case Step::fc1_bias_w:
                r = reduce(b.d_pre, nullptr, nullptr, nullptr, nullptr, b.gb_fc1, f, k.step);
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
        results.push_back({fmt::format("{} {}", pass_name(k.pass), k.name),
                           ref::relative_error(r.first, r.second)});
    }
    cublasDestroy(blas);
    cudaStreamDestroy(stream);
    return results;
}

}  // namespace pipesim::calibration
