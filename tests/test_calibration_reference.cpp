// The CPU references the GPU kernels are checked against, checked themselves: closed forms,
// finite differences, and the relative error that never lets a NaN pass.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/reference.hpp"

using namespace pipesim::calibration::reference;

TEST_CASE("bf16 conversion rounds to nearest even and keeps NaN", "[calibration]") {
    CHECK(to_bf16(1.0f) == 0x3f80);
    CHECK(from_bf16(0x3f80) == 1.0f);
    CHECK(round_bf16(1.0f + 1.0f / 512) == 1.0f);               // tie → even
    CHECK(round_bf16(1.0f + 3.0f / 512) == 1.0f + 1.0f / 128);  // tie → even (up)
    CHECK(std::isnan(from_bf16(to_bf16(std::nanf("")))));
}

TEST_CASE("relative error: a NaN or infinity never passes", "[calibration]") {
    const std::vector<float> ref = {3, 4};
    CHECK(relative_error(std::vector<float>{3, 4}, ref) == 0);
    CHECK(relative_error(std::vector<float>{3, 3}, ref) == Approx(0.2));
    const double nan_err = relative_error(std::vector<float>{std::nanf(""), 4}, ref);
    CHECK_FALSE(nan_err < 1e-2);
    CHECK_FALSE(relative_error(std::vector<float>{INFINITY, 4}, ref) < 1e-2);
    CHECK_FALSE(relative_error(std::vector<float>{1, 0}, std::vector<float>{0, 0}) < 1e-2);
    CHECK(relative_error(std::vector<float>{0, 0}, std::vector<float>{0, 0}) == 0);
}

TEST_CASE("reference GEMM handles both transposes and beta", "[calibration]") {
    // A = [[1,2],[3,4]], B = [[5,6],[7,8]]
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
    float c[4] = {1, 1, 1, 1};
    gemm(false, false, 2, 2, 2, a, 2, b, 2, 0, c, 2);
    CHECK(std::vector<float>(c, c + 4) == std::vector<float>{19, 22, 43, 50});
    gemm(true, false, 2, 2, 2, a, 2, b, 2, 0, c, 2);  // Aᵀ·B
    CHECK(std::vector<float>(c, c + 4) == std::vector<float>{26, 30, 38, 44});
    gemm(false, true, 2, 2, 2, a, 2, b, 2, 1, c, 2);  // C + A·Bᵀ
    CHECK(std::vector<float>(c, c + 4) == std::vector<float>{26 + 17, 30 + 23, 38 + 39, 44 + 53});
}

TEST_CASE("reference layer norm normalizes rows and its gradient matches finite differences",
          "[calibration]") {
    const int rows = 3, cols = 8;
    std::vector<float> x = random_bf16_values(rows * cols, 2.0f, 1);
    std::vector<float> gamma = random_bf16_values(cols, 1.0f, 2), beta(cols, 0.5f);
    std::vector<float> ones(cols, 1.0f), zeros(cols, 0.0f);
    std::vector<float> y(rows * cols), mean(rows), rstd(rows);
    layernorm_forward(rows, cols, x.data(), ones.data(), zeros.data(), 0, y.data(), mean.data(),
                      rstd.data());
    for (int i = 0; i < rows; ++i) {
        double s = 0, s2 = 0;
        for (int j = 0; j < cols; ++j) {
            s += y[i * cols + j];
            s2 += y[i * cols + j] * y[i * cols + j];
        }
        CHECK(s / cols == Approx(0).margin(1e-6));
        CHECK(s2 / cols == Approx(1).epsilon(1e-5));
    }
    // Loss L = Σ w·y with fixed weights w: dL/dx by the reference against central differences.
    const std::vector<float> w = random_bf16_values(rows * cols, 1.0f, 3);
    auto loss = [&](const std::vector<float>& in) {
        std::vector<float> out(rows * cols), m(rows), r(rows);
        layernorm_forward(rows, cols, in.data(), gamma.data(), beta.data(), 1e-5f, out.data(),
                          m.data(), r.data());
        double l = 0;
        for (int i = 0; i < rows * cols; ++i)
            l += static_cast<double>(w[i]) * out[i];
        return l;
    };
    layernorm_forward(rows, cols, x.data(), gamma.data(), beta.data(), 1e-5f, y.data(), mean.data(),
                      rstd.data());
    std::vector<float> dx(rows * cols);
    layernorm_backward_input(rows, cols, w.data(), x.data(), mean.data(), rstd.data(), gamma.data(),
                             nullptr, dx.data());
    std::vector<float> numeric(rows * cols);
    for (int i = 0; i < rows * cols; ++i) {
        std::vector<float> hi = x, lo = x;
        hi[i] += 1e-2f;
        lo[i] -= 1e-2f;
        numeric[i] = static_cast<float>((loss(hi) - loss(lo)) / 2e-2);
    }
    CHECK(relative_error(dx, numeric) < 1e-2);
    // Weight gradients: dβ = Σ dy, dγ = Σ dy·x̂.
    std::vector<float> dgamma(cols, 0), dbeta(cols, 0);
    column_reduce(rows, cols, w.data(), x.data(), mean.data(), rstd.data(), dgamma.data(),
                  dbeta.data());
    for (int j = 0; j < cols; ++j) {
        double sb = 0, sg = 0;
        for (int i = 0; i < rows; ++i) {
            sb += w[i * cols + j];
            sg += w[i * cols + j] * (x[i * cols + j] - mean[i]) * rstd[i];
        }
        CHECK(dbeta[j] == Approx(sb));
        CHECK(dgamma[j] == Approx(sg));
    }
}

TEST_CASE("reference GeLU has the known values and a matching derivative", "[calibration]") {
    CHECK(gelu(0) == 0);
    CHECK(gelu(10) == Approx(10));
    CHECK(gelu(-10) == Approx(0).margin(1e-6));
    CHECK(gelu(1) == Approx(0.841192).epsilon(1e-5));
    for (float x : {-3.0f, -1.0f, -0.2f, 0.0f, 0.5f, 2.0f})
        CHECK(gelu_grad(x) == Approx((gelu(x + 1e-3f) - gelu(x - 1e-3f)) / 2e-3f).epsilon(1e-2));
}

TEST_CASE("reference causal softmax sums rows to one and masks the future", "[calibration]") {
    const int blocks = 2, s = 5;
    const std::vector<float> scores = random_bf16_values(blocks * s * s, 3.0f, 4);
    std::vector<float> p(scores.size());
    causal_softmax_forward(blocks, s, 0.5f, scores.data(), p.data());
    for (int r = 0; r < blocks * s; ++r) {
        const int i = r % s;
        double sum = 0;
        for (int j = 0; j < s; ++j) {
            sum += p[r * s + j];
            if (j > i) CHECK(p[r * s + j] == 0);
        }
        CHECK(sum == Approx(1));
    }
    // Backward against central differences of L = Σ w·softmax(scores).
    const std::vector<float> w = random_bf16_values(scores.size(), 1.0f, 5);
    std::vector<float> ds(scores.size());
    causal_softmax_backward(blocks, s, 0.5f, p.data(), w.data(), ds.data());
    auto loss = [&](const std::vector<float>& in) {
        std::vector<float> out(in.size());
        causal_softmax_forward(blocks, s, 0.5f, in.data(), out.data());
        double l = 0;
        for (std::size_t i = 0; i < out.size(); ++i)
            l += static_cast<double>(w[i]) * out[i];
        return l;
    };
    std::vector<float> numeric(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) {
        std::vector<float> hi = scores, lo = scores;
        hi[i] += 1e-2f;
        lo[i] -= 1e-2f;
        numeric[i] = static_cast<float>((loss(hi) - loss(lo)) / 2e-2);
    }
    CHECK(relative_error(ds, numeric) < 1e-2);
}
