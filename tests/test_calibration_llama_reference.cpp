// CPU references of the Llama-style kernels (RMSNorm, rotary embeddings, SwiGLU, grouped-query
// attention) and of the flash-style fused attention, each against an independent computation:
// values by hand, explicit rotations, repeated K/V heads, finite differences, the unfused path.
#include <cmath>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/reference.hpp"

using namespace pipesim::calibration::reference;
using Vec = std::vector<float>;

namespace {

// Central differences of a scalar loss over every element of x.
Vec numeric_gradient(Vec x, const std::function<double(const Vec&)>& loss, float step = 1e-2f) {
    Vec g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float keep = x[i];
        x[i] = keep + step;
        const double hi = loss(x);
        x[i] = keep - step;
        const double lo = loss(x);
        x[i] = keep;
        g[i] = static_cast<float>((hi - lo) / (2.0 * step));
    }
    return g;
}

double weighted_sum(const Vec& w, const Vec& y) {
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i)
        l += static_cast<double>(w[i]) * y[i];
    return l;
}

// Q, K, V of `a` in separate arrays (row strides ld_qkv), O with ld_o = heads·d.
struct Inputs {
    AttentionShape a;
    Vec q, k, v;
};

Inputs attention_inputs(int batch, int seq, int heads, int kv_heads, int d, std::uint64_t seed) {
    Inputs in;
    in.a = {batch, seq, heads, kv_heads, d, heads * d, heads * d, 1.0f / std::sqrt(float(d))};
    const std::size_t rows = static_cast<std::size_t>(batch) * seq;
    in.q = random_bf16_values(rows * heads * d, 2.0f, seed);
    in.k = random_bf16_values(rows * heads * d, 2.0f, seed + 1);
    in.v = random_bf16_values(rows * heads * d, 1.0f, seed + 2);
    return in;
}

std::size_t rows_of(const AttentionShape& a) {
    return static_cast<std::size_t>(a.batch) * a.seq;
}

}  // namespace

TEST_CASE("reference RMSNorm has the value computed by hand", "[calibration]") {
    // x = (3, 4): mean of squares 12.5, rstd = 1/√12.5; γ = (1, 2).
    const float x[] = {3, 4}, gamma[] = {1, 2};
    float y[2], rstd[1];
    rmsnorm_forward(1, 2, x, gamma, 0, y, rstd);
    CHECK(rstd[0] == Approx(1 / std::sqrt(12.5)));
    CHECK(y[0] == Approx(3 / std::sqrt(12.5)));
    CHECK(y[1] == Approx(8 / std::sqrt(12.5)));
}

TEST_CASE("reference RMSNorm gradients match finite differences and y/γ", "[calibration]") {
    const int rows = 3, cols = 8;
    const Vec x = random_bf16_values(rows * cols, 2.0f, 11);
    const Vec gamma = random_bf16_values(cols, 1.0f, 12);
    const Vec w = random_bf16_values(rows * cols, 1.0f, 13);  // dL/dy for L = Σ w·y
    Vec y(rows * cols), rstd(rows), dx(rows * cols);
    rmsnorm_forward(rows, cols, x.data(), gamma.data(), 1e-5f, y.data(), rstd.data());
    rmsnorm_backward_input(rows, cols, w.data(), x.data(), rstd.data(), gamma.data(), nullptr,
                           dx.data());
    const Vec numeric = numeric_gradient(x, [&](const Vec& in) {
        Vec out(in.size()), r(rows);
        rmsnorm_forward(rows, cols, in.data(), gamma.data(), 1e-5f, out.data(), r.data());
        return weighted_sum(w, out);
    });
    CHECK(relative_error(dx, numeric) < 1e-2);
    // The residual gradient is added as is.
    const Vec res(rows * cols, 0.25f);
    Vec dx_res(rows * cols);
    rmsnorm_backward_input(rows, cols, w.data(), x.data(), rstd.data(), gamma.data(), res.data(),
                           dx_res.data());
    CHECK(dx_res[5] == Approx(dx[5] + 0.25f));
    // y is linear in γ: dL/dγ_j = Σ_i w_ij·y_ij/γ_j. RMSNorm has no β (dbeta null, mean null).
    Vec dgamma(cols, 0);
    column_reduce(rows, cols, w.data(), x.data(), nullptr, rstd.data(), dgamma.data(), nullptr);
    for (int j = 0; j < cols; ++j) {
        double want = 0;
        for (int i = 0; i < rows; ++i)
            want += static_cast<double>(w[i * cols + j]) * y[i * cols + j] / gamma[j];
        CHECK(dgamma[j] == Approx(want).epsilon(1e-4));
    }
}

TEST_CASE("reference rotary embedding is the explicit rotation of each pair", "[calibration]") {
    // Two heads of d = 4 at positions 0..2: pairs (0, 2) and (1, 3) of each head turn by
    // p·θ_i with θ_0 = 1 and θ_1 = base^(−1/2).
    const int seq = 3, d = 4, cols = 2 * d, ld = cols + 2, base = 10000;
    const Vec x = random_bf16_values(seq * ld, 1.0f, 21);
    Vec y = x;
    rotary(seq, seq, cols, d, base, false, y.data(), ld);
    for (int p = 0; p < seq; ++p)
        for (int head = 0; head < 2; ++head)
            for (int i = 0; i < 2; ++i) {
                const double angle = p * (i == 0 ? 1.0 : 1.0 / std::sqrt(double(base)));
                const int a = p * ld + head * d + i, b = a + 2;
                INFO("position " << p << " head " << head << " pair " << i);
                CHECK(y[a] == Approx(x[a] * std::cos(angle) - x[b] * std::sin(angle)).margin(1e-6));
                CHECK(y[b] == Approx(x[a] * std::sin(angle) + x[b] * std::cos(angle)).margin(1e-6));
            }
    // Columns beyond `cols` are left alone; the inverse undoes the rotation.
    CHECK(y[cols] == x[cols]);
    CHECK(y[ld + cols + 1] == x[ld + cols + 1]);
    rotary(seq, seq, cols, d, base, true, y.data(), ld);
    CHECK(relative_error(y, x) < 1e-6);
}

TEST_CASE("rotary scores depend only on the distance between positions", "[calibration]") {
    // q at position m and k at position n: (R_m q)·(R_n k) = (R_{m+δ} q)·(R_{n+δ} k).
    const int d = 8, seq = 16;
    const Vec q0 = random_bf16_values(d, 1.0f, 22), k0 = random_bf16_values(d, 1.0f, 23);
    auto score = [&](int m, int n) {
        Vec q(seq * d, 0), k(seq * d, 0);
        std::copy(q0.begin(), q0.end(), q.begin() + m * d);
        std::copy(k0.begin(), k0.end(), k.begin() + n * d);
        rotary(seq, seq, d, d, 10000, false, q.data(), d);
        rotary(seq, seq, d, d, 10000, false, k.data(), d);
        double s = 0;
        for (int c = 0; c < d; ++c)
            s += static_cast<double>(q[m * d + c]) * k[n * d + c];
        return s;
    };
    CHECK(score(5, 2) == Approx(score(12, 9)).epsilon(1e-5));
    CHECK(score(3, 3) == Approx(score(0, 0)).epsilon(1e-5));
    CHECK(score(3, 3) != Approx(score(3, 0)).epsilon(1e-3));
}

TEST_CASE("reference SwiGLU has the values by hand and a matching gradient", "[calibration]") {
    // One row, f = 2: gate (0, 1), up (3, −2): silu(0) = 0, silu(1) = 1/(1 + e⁻¹).
    const float pre[] = {0, 1, 3, -2};
    float act[2];
    swiglu_forward(1, 2, pre, act);
    CHECK(act[0] == 0);
    CHECK(act[1] == Approx(-2 / (1 + std::exp(-1.0))));
    const int rows = 3, f = 5;
    const Vec x = random_bf16_values(rows * 2 * f, 3.0f, 31),
              w = random_bf16_values(rows * f, 1.0f, 32);
    Vec dx(x.size());
    swiglu_backward(rows, f, x.data(), w.data(), dx.data());
    const Vec numeric = numeric_gradient(
        x,
        [&](const Vec& in) {
            Vec out(rows * f);
            swiglu_forward(rows, f, in.data(), out.data());
            return weighted_sum(w, out);
        },
        1e-3f);
    CHECK(relative_error(dx, numeric) < 1e-2);
}

TEST_CASE("grouped-query attention equals multi-head attention with K and V heads repeated",
          "[calibration]") {
    const int heads = 4, kv = 2, d = 8, seq = 6, batch = 2;
    const Inputs g = attention_inputs(batch, seq, heads, kv, d, 41);
    // Grouped: K and V have kv heads (row stride still heads·d, the rest unused). Repeated:
    // query head i gets a copy of key/value head i / 2.
    Inputs m = g;
    m.a.kv_heads = heads;
    for (std::size_t r = 0; r < rows_of(g.a); ++r)
        for (int i = 0; i < heads; ++i)
            for (int c = 0; c < d; ++c) {
                m.k[r * heads * d + i * d + c] = g.k[r * heads * d + (i / 2) * d + c];
                m.v[r * heads * d + i * d + c] = g.v[r * heads * d + (i / 2) * d + c];
            }
    const std::size_t size = rows_of(g.a) * heads * d;
    Vec og(size), om(size);
    attention_forward(g.a, g.q.data(), g.k.data(), g.v.data(), og.data(), nullptr);
    attention_forward(m.a, m.q.data(), m.k.data(), m.v.data(), om.data(), nullptr);
    CHECK(relative_error(og, om) < 1e-6);
    // Backward: the grouped dK, dV are the sums of the repeated heads' gradients.
    const Vec d_o = random_bf16_values(size, 1.0f, 44);
    Vec dqg(size), dkg(size, 0), dvg(size, 0), dqm(size), dkm(size), dvm(size);
    attention_backward(g.a, g.q.data(), g.k.data(), g.v.data(), d_o.data(), dqg.data(), dkg.data(),
                       dvg.data());
    attention_backward(m.a, m.q.data(), m.k.data(), m.v.data(), d_o.data(), dqm.data(), dkm.data(),
                       dvm.data());
    CHECK(relative_error(dqg, dqm) < 1e-6);
    Vec dk_sum(size, 0), dv_sum(size, 0), dk_g(size, 0), dv_g(size, 0);
    for (std::size_t r = 0; r < rows_of(g.a); ++r)
        for (int i = 0; i < heads; ++i)
            for (int c = 0; c < d; ++c) {
                const std::size_t grouped = r * heads * d + (i / 2) * d + c;
                dk_sum[grouped] += dkm[r * heads * d + i * d + c];
                dv_sum[grouped] += dvm[r * heads * d + i * d + c];
                if (i < kv) {  // the grouped result's own columns
                    const std::size_t own = r * heads * d + i * d + c;
                    dk_g[own] = dkg[own];
                    dv_g[own] = dvg[own];
                }
            }
    CHECK(relative_error(dk_g, dk_sum) < 1e-6);
    CHECK(relative_error(dv_g, dv_sum) < 1e-6);
}

TEST_CASE("reference attention gradients match finite differences", "[calibration]") {
    const Inputs in = attention_inputs(1, 4, 2, 1, 4, 51);
    const std::size_t size = rows_of(in.a) * 2 * 4;
    const Vec w = random_bf16_values(size, 1.0f, 52);  // dL/dO for L = Σ w·O
    Vec dq(size), dk(size, 0), dv(size, 0);
    attention_backward(in.a, in.q.data(), in.k.data(), in.v.data(), w.data(), dq.data(), dk.data(),
                       dv.data());
    auto loss = [&](const Vec& q, const Vec& k, const Vec& v) {
        Vec o(size);
        attention_forward(in.a, q.data(), k.data(), v.data(), o.data(), nullptr);
        return weighted_sum(w, o);
    };
    CHECK(relative_error(dq, numeric_gradient(
                                 in.q, [&](const Vec& q) { return loss(q, in.k, in.v); })) < 1e-2);
    // K and V have one head: only their first d columns are used.
    Vec dk_used(size, 0), dv_used(size, 0),
        nk = numeric_gradient(in.k, [&](const Vec&k) { return loss(in.q, k, in.v); });
    const Vec nv = numeric_gradient(in.v, [&](const Vec& v) { return loss(in.q, in.k, v); });
    for (std::size_t r = 0; r < rows_of(in.a); ++r)
        for (int c = 0; c < 4; ++c) {
            dk_used[r * 8 + c] = dk[r * 8 + c];
            dv_used[r * 8 + c] = dv[r * 8 + c];
        }
    CHECK(relative_error(dk_used, nk) < 1e-2);
    CHECK(relative_error(dv_used, nv) < 1e-2);
}

TEST_CASE("causal attention ignores later tokens", "[calibration]") {
    Inputs in = attention_inputs(1, 8, 2, 2, 4, 61);
    const std::size_t size = rows_of(in.a) * 2 * 4;
    Vec o(size), o2(size), lse(2 * 8), lse2(2 * 8);
    flash_attention_forward(in.a, 4, 4, in.q.data(), in.k.data(), in.v.data(), o.data(),
                            lse.data());
    // Token 0 attends only to itself: its output is its own V.
    for (int c = 0; c < 8; ++c)
        CHECK(o[c] == Approx(in.v[c]).margin(1e-6));
    // Changing K and V of tokens 5..7 leaves the outputs of tokens 0..4 unchanged.
    for (std::size_t i = 5 * 8; i < size; ++i)
        in.k[i] += 1.0f, in.v[i] -= 1.0f;
    flash_attention_forward(in.a, 4, 4, in.q.data(), in.k.data(), in.v.data(), o2.data(),
                            lse2.data());
    for (std::size_t i = 0; i < 5 * 8; ++i)
        CHECK(o2[i] == o[i]);
    CHECK(o2[6 * 8] != o[6 * 8]);
}

TEST_CASE("flash-style attention equals the unfused reference for any tiling", "[calibration]") {
    const auto [seq, heads, kv, block_q, block_k] = GENERATE(table<int, int, int, int, int>({
        {16, 2, 2, 4, 4},
        {13, 4, 2, 3, 5},  // tiles not dividing the sequence, grouped-query attention
        {13, 4, 1, 8, 2},
        {9, 2, 2, 16, 16},   // one tile
        {80, 4, 2, 64, 64},  // the GPU kernel's tiles and the GPU check's sequence
    }));
    INFO("s=" << seq << " heads=" << heads << "/" << kv << " tiles " << block_q << "×" << block_k);
    const int d = 8, batch = 2;
    const Inputs in = attention_inputs(batch, seq, heads, kv, d, 71);
    const std::size_t size = rows_of(in.a) * heads * d, rows = rows_of(in.a) * heads;
    Vec o(size), lse(rows), fo(size), flse(rows);
    attention_forward(in.a, in.q.data(), in.k.data(), in.v.data(), o.data(), lse.data());
    flash_attention_forward(in.a, block_q, block_k, in.q.data(), in.k.data(), in.v.data(),
                            fo.data(), flse.data());
    CHECK(relative_error(fo, o) < 1e-5);
    CHECK(relative_error(flse, lse) < 1e-5);
    const Vec d_o = random_bf16_values(size, 1.0f, 72);
    Vec dq(size), dk(size, 0), dv(size, 0), fdq(size), fdk(size, 0), fdv(size, 0);
    attention_backward(in.a, in.q.data(), in.k.data(), in.v.data(), d_o.data(), dq.data(),
                       dk.data(), dv.data());
    flash_attention_backward(in.a, block_q, block_k, in.q.data(), in.k.data(), in.v.data(),
                             fo.data(), d_o.data(), flse.data(), fdq.data(), fdk.data(),
                             fdv.data());
    CHECK(relative_error(fdq, dq) < 1e-5);
    CHECK(relative_error(fdk, dk) < 1e-5);
    CHECK(relative_error(fdv, dv) < 1e-5);
}
