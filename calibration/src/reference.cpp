#include "calibration/reference.hpp"

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
            if (x) sum_x += static_cast<double>(dy[o]) * (x[o] - mean[i]) * rstd[i];
        }
        dbeta[j] += static_cast<float>(sum);
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

std::vector<float> random_bf16_values(std::size_t count, float scale, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(count);
    for (float& x : v)
        x = round_bf16(dist(rng));
    return v;
}

}  // namespace pipesim::calibration::reference
