#include "calibration/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace pipesim::calibration::reference {

std::uint16_t to_bf16(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if (std::isnan(x)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);
    const std::uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float from_bf16(std::uint16_t bits) {
    const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
    float x;
    std::memcpy(&x, &wide, sizeof x);
    return x;
}

double relative_error(std::span<const float> out, std::span<const float> ref) {
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) return std::nan("");
        const double d = static_cast<double>(out[i]) - ref[i];
        diff += d * d;
        norm += static_cast<double>(ref[i]) * ref[i];
    }
    if (norm == 0) return diff == 0 ? 0 : INFINITY;
    return std::sqrt(diff / norm);
}

void gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
          int ldb, float beta, float* c, int ldc) {
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0;
            for (int p = 0; p < k; ++p) {
                const float av = trans_a ? a[p * lda + i] : a[i * lda + p];
                const float bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
                sum += static_cast<double>(av) * bv;
            }
            float& out = c[i * ldc + j];
            out = static_cast<float>((beta == 0 ? 0.0 : beta * out) + sum);
        }
}

void layernorm_forward(int rows, int cols, const float* x, const float* gamma, const float* beta,
                       float eps, float* y, float* mean, float* rstd) {
    for (int i = 0; i < rows; ++i) {
        const float* row = x + static_cast<std::ptrdiff_t>(i) * cols;
        double sum = 0;
        for (int j = 0; j < cols; ++j)
            sum += row[j];
        const double mu = sum / cols;
        double var = 0;
        for (int j = 0; j < cols; ++j)
            var += (row[j] - mu) * (row[j] - mu);
        const double r = 1.0 / std::sqrt(var / cols + eps);
        mean[i] = static_cast<float>(mu);
        rstd[i] = static_cast<float>(r);
        for (int j = 0; j < cols; ++j)
            y[static_cast<std::ptrdiff_t>(i) * cols + j] =
                static_cast<float>((row[j] - mu) * r * gamma[j] + beta[j]);
    }
}

void layernorm_backward_input(int rows, int cols, const float* dy, const float* x,
                              const float* mean, const float* rstd, const float* gamma,
                              const float* residual_grad, float* dx) {
    for (int i = 0; i < rows; ++i) {
        const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(i) * cols;
        double sum_g = 0, sum_gx = 0;
        for (int j = 0; j < cols; ++j) {
            const double g = static_cast<double>(dy[o + j]) * gamma[j];
            const double xh = (x[o + j] - mean[i]) * static_cast<double>(rstd[i]);
            sum_g += g;
            sum_gx += g * xh;
        }
        for (int j = 0; j < cols; ++j) {
            const double g = static_cast<double>(dy[o + j]) * gamma[j];
            const double xh = (x[o + j] - mean[i]) * static_cast<double>(rstd[i]);
            const double d = rstd[i] * (g - sum_g / cols - xh * sum_gx / cols);
            dx[o + j] = static_cast<float>(d + (residual_grad ? residual_grad[o + j] : 0.0f));
        }
    }
}

void column_reduce(int rows, int cols, const float* dy, const float* x, const float* mean,
                   const float* rstd, float* dgamma, float* dbeta) {
    for (int j = 0; j < cols; ++j) {
        double sum = 0, sum_x = 0;
        for (int i = 0; i < rows; ++i) {
            const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(i) * cols + j;
            sum += dy[o];
            if (x) sum_x += static_cast<double>(dy[o]) * (x[o] - (mean ? mean[i] : 0)) * rstd[i];
        }
        if (dbeta) dbeta[j] += static_cast<float>(sum);
        if (x) dgamma[j] += static_cast<float>(sum_x);
    }
}

namespace {
constexpr float gelu_c = 0.7978845608f;  // sqrt(2/π)
constexpr float gelu_a = 0.044715f;
}  // namespace

float gelu(float x) {
    return 0.5f * x * (1.0f + std::tanh(gelu_c * (x + gelu_a * x * x * x)));
}

float gelu_grad(float x) {
    const float t = std::tanh(gelu_c * (x + gelu_a * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * gelu_c * (1.0f + 3.0f * gelu_a * x * x);
}

void causal_softmax_forward(int blocks, int s, float scale, const float* scores, float* probs) {
    for (std::ptrdiff_t r = 0; r < static_cast<std::ptrdiff_t>(blocks) * s; ++r) {
        const int i = static_cast<int>(r % s);
        const float* in = scores + r * s;
        float* out = probs + r * s;
        float max = -INFINITY;
        for (int j = 0; j <= i; ++j)
            max = std::max(max, in[j] * scale);
        double sum = 0;
        for (int j = 0; j <= i; ++j)
            sum += std::exp(in[j] * scale - max);
        for (int j = 0; j < s; ++j)
            out[j] = j <= i ? static_cast<float>(std::exp(in[j] * scale - max) / sum) : 0.0f;
    }
}

void causal_softmax_backward(int blocks, int s, float scale, const float* probs,
                             const float* dprobs, float* dscores) {
    for (std::ptrdiff_t r = 0; r < static_cast<std::ptrdiff_t>(blocks) * s; ++r) {
        const float* p = probs + r * s;
        const float* dp = dprobs + r * s;
        double dot = 0;
        for (int j = 0; j < s; ++j)
            dot += static_cast<double>(p[j]) * dp[j];
        for (int j = 0; j < s; ++j)
            dscores[r * s + j] = static_cast<float>(scale * p[j] * (dp[j] - dot));
    }
}

void rmsnorm_forward(int rows, int cols, const float* x, const float* gamma, float eps, float* y,
                     float* rstd) {
    for (int i = 0; i < rows; ++i) {
        const float* row = x + static_cast<std::ptrdiff_t>(i) * cols;
        double squares = 0;
        for (int j = 0; j < cols; ++j)
            squares += static_cast<double>(row[j]) * row[j];
        const double r = 1.0 / std::sqrt(squares / cols + eps);
        rstd[i] = static_cast<float>(r);
        for (int j = 0; j < cols; ++j)
            y[static_cast<std::ptrdiff_t>(i) * cols + j] =
                static_cast<float>(row[j] * r * gamma[j]);
    }
}

void rmsnorm_backward_input(int rows, int cols, const float* dy, const float* x, const float* rstd,
                            const float* gamma, const float* residual_grad, float* dx) {
    for (int i = 0; i < rows; ++i) {
        const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(i) * cols;
        double sum_gx = 0;
        for (int j = 0; j < cols; ++j)
            sum_gx += static_cast<double>(dy[o + j]) * gamma[j] * x[o + j] * rstd[i];
        for (int j = 0; j < cols; ++j) {
            const double g = static_cast<double>(dy[o + j]) * gamma[j];
            const double xh = static_cast<double>(x[o + j]) * rstd[i];
            const double d = rstd[i] * (g - xh * sum_gx / cols);
            dx[o + j] = static_cast<float>(d + (residual_grad ? residual_grad[o + j] : 0.0f));
        }
    }
}

void rotary(int rows, int seq, int cols, int head_dim, float base, bool inverse, float* x, int ld) {
    const int half = head_dim / 2;
    for (int r = 0; r < rows; ++r) {
        const double position = r % seq;
        float* row = x + static_cast<std::ptrdiff_t>(r) * ld;
        for (int head = 0; head < cols; head += head_dim)
            for (int i = 0; i < half; ++i) {
                const double angle =
                    position * std::pow(static_cast<double>(base), -2.0 * i / head_dim);
                const double c = std::cos(angle), sn = inverse ? -std::sin(angle) : std::sin(angle);
                const double a = row[head + i], b = row[head + i + half];
                row[head + i] = static_cast<float>(a * c - b * sn);
                row[head + i + half] = static_cast<float>(b * c + a * sn);
            }
    }
}

float silu(float x) {
    return x / (1.0f + std::exp(-x));
}

float silu_grad(float x) {
    const float sigma = 1.0f / (1.0f + std::exp(-x));
    return sigma * (1.0f + x * (1.0f - sigma));
}

void swiglu_forward(int rows, int f, const float* pre, float* act) {
    for (std::ptrdiff_t i = 0; i < rows; ++i)
        for (int j = 0; j < f; ++j)
            act[i * f + j] = silu(pre[i * 2 * f + j]) * pre[i * 2 * f + f + j];
}

void swiglu_backward(int rows, int f, const float* pre, const float* dact, float* dpre) {
    for (std::ptrdiff_t i = 0; i < rows; ++i)
        for (int j = 0; j < f; ++j) {
            const float gate = pre[i * 2 * f + j], up = pre[i * 2 * f + f + j];
            const float d = dact[i * f + j];
            dpre[i * 2 * f + j] = d * up * silu_grad(gate);
            dpre[i * 2 * f + f + j] = d * silu(gate);
        }
}

namespace {

// Row t of sequence b, head `head` of a matrix with row stride ld and heads of d columns.
const float* head_row(const float* m, const AttentionShape& a, int ld, int b, int t, int head) {
    return m + (static_cast<std::ptrdiff_t>(b) * a.seq + t) * ld +
           static_cast<std::ptrdiff_t>(head) * a.head_dim;
}
float* head_row(float* m, const AttentionShape& a, int ld, int b, int t, int head) {
    return const_cast<float*>(head_row(static_cast<const float*>(m), a, ld, b, t, head));
}

double dot(const float* x, const float* y, int d) {
    double sum = 0;
    for (int c = 0; c < d; ++c)
        sum += static_cast<double>(x[c]) * y[c];
    return sum;
}

std::size_t lse_index(const AttentionShape& a, int b, int head, int t) {
    return (static_cast<std::size_t>(b) * a.heads + head) * a.seq + t;
}

// S = Q·Kᵀ (all s×s, unscaled) and P = its causal softmax, for one sequence and head.
void scores_and_probs(const AttentionShape& a, const float* q, const float* k, int b, int head,
                      std::vector<float>& scores, std::vector<float>& probs) {
    const int s = a.seq, kv = head / (a.heads / a.kv_heads);
    scores.assign(static_cast<std::size_t>(s) * s, 0);
    probs.assign(scores.size(), 0);
    for (int t = 0; t < s; ++t)
        for (int u = 0; u < s; ++u)
            scores[static_cast<std::size_t>(t) * s + u] =
                static_cast<float>(dot(head_row(q, a, a.ld_qkv, b, t, head),
                                       head_row(k, a, a.ld_qkv, b, u, kv), a.head_dim));
    causal_softmax_forward(1, s, a.scale, scores.data(), probs.data());
}

}  // namespace

void attention_forward(const AttentionShape& a, const float* q, const float* k, const float* v,
                       float* o, float* lse) {
    const int s = a.seq, d = a.head_dim;
    std::vector<float> scores, probs;
    for (int b = 0; b < a.batch; ++b)
        for (int head = 0; head < a.heads; ++head) {
            const int kv = head / (a.heads / a.kv_heads);
            scores_and_probs(a, q, k, b, head, scores, probs);
            for (int t = 0; t < s; ++t) {
                float* out = head_row(o, a, a.ld_o, b, t, head);
                for (int c = 0; c < d; ++c) {
                    double sum = 0;
                    for (int u = 0; u < s; ++u)
                        sum += static_cast<double>(probs[static_cast<std::size_t>(t) * s + u]) *
                               head_row(v, a, a.ld_qkv, b, u, kv)[c];
                    out[c] = static_cast<float>(sum);
                }
                if (!lse) continue;
                double max = -INFINITY, sum = 0;
                for (int u = 0; u <= t; ++u)
                    max = std::max(max, a.scale * static_cast<double>(scores[t * s + u]));
                for (int u = 0; u <= t; ++u)
                    sum += std::exp(a.scale * static_cast<double>(scores[t * s + u]) - max);
                lse[lse_index(a, b, head, t)] = static_cast<float>(max + std::log(sum));
            }
        }
}

void attention_backward(const AttentionShape& a, const float* q, const float* k, const float* v,
                        const float* d_o, float* dq, float* dk, float* dv) {
    const int s = a.seq, d = a.head_dim;
    const std::size_t ss = static_cast<std::size_t>(s) * s;
    for (int b = 0; b < a.batch; ++b)
        for (int t = 0; t < s; ++t) {
            std::fill_n(head_row(dq, a, a.ld_qkv, b, t, 0), a.heads * d, 0.0f);
            std::fill_n(head_row(dk, a, a.ld_qkv, b, t, 0), a.kv_heads * d, 0.0f);
            std::fill_n(head_row(dv, a, a.ld_qkv, b, t, 0), a.kv_heads * d, 0.0f);
        }
    std::vector<float> scores, probs, dprobs(ss), dscores(ss);
    for (int b = 0; b < a.batch; ++b)
        for (int head = 0; head < a.heads; ++head) {
            const int kv = head / (a.heads / a.kv_heads);
            scores_and_probs(a, q, k, b, head, scores, probs);
            for (int t = 0; t < s; ++t)
                for (int u = 0; u < s; ++u)
                    dprobs[static_cast<std::size_t>(t) * s + u] =
                        static_cast<float>(dot(head_row(d_o, a, a.ld_o, b, t, head),
                                               head_row(v, a, a.ld_qkv, b, u, kv), d));
            causal_softmax_backward(1, s, a.scale, probs.data(), dprobs.data(), dscores.data());
            for (int t = 0; t < s; ++t)
                for (int u = 0; u < s; ++u) {
                    const double p = probs[static_cast<std::size_t>(t) * s + u];
                    const double ds = dscores[static_cast<std::size_t>(t) * s + u];
                    for (int c = 0; c < d; ++c) {
                        head_row(dv, a, a.ld_qkv, b, u, kv)[c] +=
                            static_cast<float>(p * head_row(d_o, a, a.ld_o, b, t, head)[c]);
                        head_row(dq, a, a.ld_qkv, b, t, head)[c] +=
                            static_cast<float>(ds * head_row(k, a, a.ld_qkv, b, u, kv)[c]);
                        head_row(dk, a, a.ld_qkv, b, u, kv)[c] +=
                            static_cast<float>(ds * head_row(q, a, a.ld_qkv, b, t, head)[c]);
                    }
                }
        }
}

void flash_attention_forward(const AttentionShape& a, int block_q, int block_k, const float* q,
                             const float* k, const float* v, float* o, float* lse) {
    const int s = a.seq, d = a.head_dim;
    std::vector<double> max(static_cast<std::size_t>(block_q)), sum(max.size());
    std::vector<double> acc(max.size() * static_cast<std::size_t>(d));
    for (int b = 0; b < a.batch; ++b)
        for (int head = 0; head < a.heads; ++head) {
            const int kv = head / (a.heads / a.kv_heads);
            for (int q0 = 0; q0 < s; q0 += block_q) {
                const int q1 = std::min(s, q0 + block_q);
                std::fill(max.begin(), max.end(), -INFINITY);
                std::fill(sum.begin(), sum.end(), 0.0);
                std::fill(acc.begin(), acc.end(), 0.0);
                for (int k0 = 0; k0 < q1; k0 += block_k) {  // tiles above the diagonal skipped
                    const int k1 = std::min(s, k0 + block_k);
                    for (int t = q0; t < q1; ++t) {
                        const int last = std::min(k1, t + 1);  // causal: keys ≤ t
                        if (last <= k0) continue;
                        const std::size_t r = static_cast<std::size_t>(t - q0);
                        std::vector<double> tile(static_cast<std::size_t>(last - k0));
                        double tile_max = -INFINITY;
                        for (int u = k0; u < last; ++u) {
                            tile[static_cast<std::size_t>(u - k0)] =
                                a.scale * dot(head_row(q, a, a.ld_qkv, b, t, head),
                                              head_row(k, a, a.ld_qkv, b, u, kv), d);
                            tile_max = std::max(tile_max, tile[static_cast<std::size_t>(u - k0)]);
                        }
                        const double new_max = std::max(max[r], tile_max);
                        const double rescale = std::exp(max[r] - new_max);
                        sum[r] *= rescale;
                        for (int c = 0; c < d; ++c)
                            acc[r * d + c] *= rescale;
                        for (int u = k0; u < last; ++u) {
                            const double p =
                                std::exp(tile[static_cast<std::size_t>(u - k0)] - new_max);
                            sum[r] += p;
                            const float* vr = head_row(v, a, a.ld_qkv, b, u, kv);
                            for (int c = 0; c < d; ++c)
                                acc[r * d + c] += p * vr[c];
                        }
                        max[r] = new_max;
                    }
                }
                for (int t = q0; t < q1; ++t) {
                    const std::size_t r = static_cast<std::size_t>(t - q0);
                    float* out = head_row(o, a, a.ld_o, b, t, head);
                    for (int c = 0; c < d; ++c)
                        out[c] = static_cast<float>(acc[r * d + c] / sum[r]);
                    lse[lse_index(a, b, head, t)] = static_cast<float>(max[r] + std::log(sum[r]));
                }
            }
        }
}

void flash_attention_backward(const AttentionShape& a, int block_q, int block_k, const float* q,
                              const float* k, const float* v, const float* o, const float* d_o,
                              const float* lse, float* dq, float* dk, float* dv) {
    const int s = a.seq, d = a.head_dim, group = a.heads / a.kv_heads;
    std::vector<double> delta(static_cast<std::size_t>(a.batch) * a.heads * s);
    for (int b = 0; b < a.batch; ++b)
        for (int head = 0; head < a.heads; ++head)
            for (int t = 0; t < s; ++t)
                delta[lse_index(a, b, head, t)] = dot(head_row(d_o, a, a.ld_o, b, t, head),
                                                      head_row(o, a, a.ld_o, b, t, head), d);
    std::vector<double> gq(static_cast<std::size_t>(a.batch) * s * a.heads * d, 0.0);
    std::vector<double> gk(static_cast<std::size_t>(block_k) * d), gv(gk.size());
    for (int b = 0; b < a.batch; ++b)
        for (int kv = 0; kv < a.kv_heads; ++kv)
            for (int k0 = 0; k0 < s; k0 += block_k) {
                const int k1 = std::min(s, k0 + block_k);
                std::fill(gk.begin(), gk.end(), 0.0);
                std::fill(gv.begin(), gv.end(), 0.0);
                // Every query head of the group, every query tile on or below the diagonal.
                for (int head = kv * group; head < (kv + 1) * group; ++head)
                    for (int q0 = k0 / block_q * block_q; q0 < s; q0 += block_q)
                        for (int t = std::max(q0, k0); t < std::min(s, q0 + block_q); ++t) {
                            const float* qt = head_row(q, a, a.ld_qkv, b, t, head);
                            const float* dot_ = head_row(d_o, a, a.ld_o, b, t, head);
                            const double l = lse[lse_index(a, b, head, t)];
                            const double dl = delta[lse_index(a, b, head, t)];
                            for (int u = k0; u < std::min(k1, t + 1); ++u) {
                                const float* ku = head_row(k, a, a.ld_qkv, b, u, kv);
                                const double p = std::exp(a.scale * dot(qt, ku, d) - l);
                                const double dp = dot(dot_, head_row(v, a, a.ld_qkv, b, u, kv), d);
                                const double ds = a.scale * p * (dp - dl);
                                const std::size_t r = static_cast<std::size_t>(u - k0) * d;
                                double* gqt =
                                    &gq[((static_cast<std::size_t>(b) * s + t) * a.heads + head) *
                                        d];
                                for (int c = 0; c < d; ++c) {
                                    gv[r + c] += p * dot_[c];
                                    gk[r + c] += ds * qt[c];
                                    gqt[c] += ds * ku[c];
                                }
                            }
                        }
                for (int u = k0; u < k1; ++u)
                    for (int c = 0; c < d; ++c) {
                        const std::size_t r = static_cast<std::size_t>(u - k0) * d + c;
                        head_row(dk, a, a.ld_qkv, b, u, kv)[c] = static_cast<float>(gk[r]);
                        head_row(dv, a, a.ld_qkv, b, u, kv)[c] = static_cast<float>(gv[r]);
                    }
            }
    for (int b = 0; b < a.batch; ++b)
        for (int t = 0; t < s; ++t)
            for (int head = 0; head < a.heads; ++head)
                for (int c = 0; c < d; ++c)
                    head_row(dq, a, a.ld_qkv, b, t, head)[c] = static_cast<float>(
                        gq[((static_cast<std::size_t>(b) * s + t) * a.heads + head) * d + c]);
}

std::vector<float> random_bf16_values(std::size_t count, float scale, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(count);
    for (float& x : v)
        x = round_bf16(dist(rng));
    return v;
}

}  // namespace pipesim::calibration::reference
