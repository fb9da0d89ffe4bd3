#pragma once
// CPU references for the calibration kernels, in fp32 on row-major matrices, and the
// relative error the GPU results are judged by. The GPU tests feed both sides the same
// bf16-rounded inputs.

#include <cstdint>
#include <span>
#include <vector>

namespace pipesim::calibration::reference {

/// bf16 bits of `x`, rounded to nearest even (NaN stays NaN).
std::uint16_t to_bf16(float x);
float from_bf16(std::uint16_t bits);
/// `x` rounded to bf16 precision.
inline float round_bf16(float x) {
    return from_bf16(to_bf16(x));
}

/// ‖out − ref‖₂ / ‖ref‖₂. NaN if either holds a NaN or infinity (so it never passes a
/// "< tolerance" check); infinity if ref is all zeros and out is not; 0 if both are zeros.
/// Precondition: equal sizes.
double relative_error(std::span<const float> out, std::span<const float> ref);

/// Row-major C[m×n] = beta·C + op(A)·op(B): op(A) is m×k (A stored k×m, row stride lda, when
/// trans_a), op(B) is k×n (B stored n×k when trans_b).
void gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda, const float* b,
          int ldb, float beta, float* c, int ldc);

/// LayerNorm over each row of x[rows×cols]: y = (x − mean)·rstd·gamma + beta, with
/// rstd = 1/sqrt(var + eps) (biased variance); also returns mean and rstd per row.
void layernorm_forward(int rows, int cols, const float* x, const float* gamma, const float* beta,
                       float eps, float* y, float* mean, float* rstd);

/// dx = residual_grad + LayerNorm's input gradient for dy (residual_grad may be null).
void layernorm_backward_input(int rows, int cols, const float* dy, const float* x,
                              const float* mean, const float* rstd, const float* gamma,
                              const float* residual_grad, float* dx);

/// Column sums over rows: dbeta[j] += Σ dy[i][j] (if dbeta is given) and, if x is given,
/// dgamma[j] += Σ dy[i][j]·x̂[i][j] with x̂ = (x − mean)·rstd, or x·rstd without mean (the
/// norms' weight gradients: LayerNorm with mean, RMSNorm without mean and dbeta; without x, a
/// bias gradient).
void column_reduce(int rows, int cols, const float* dy, const float* x, const float* mean,
                   const float* rstd, float* dgamma, float* dbeta);

/// RMSNorm over each row of x[rows×cols]: y = x·rstd·gamma with rstd = 1/sqrt(mean(x²) + eps)
/// (Zhang and Sennrich, 2019); also returns rstd per row.
void rmsnorm_forward(int rows, int cols, const float* x, const float* gamma, float eps, float* y,
                     float* rstd);

/// dx = residual_grad + RMSNorm's input gradient rstd·(g − x̂·mean(g·x̂)), where g = dy·gamma
/// and x̂ = x·rstd (residual_grad may be null).
void rmsnorm_backward_input(int rows, int cols, const float* dy, const float* x, const float* rstd,
                            const float* gamma, const float* residual_grad, float* dx);

/// Rotary position embedding (Su et al., 2021) in place, in the half-split layout of GPT-NeoX
/// and Llama: row r is the token at position r mod `seq`; its first `cols` columns (of a row of
/// stride `ld`) are heads of `head_dim` columns, and in each head columns i and i + d/2
/// (i < d/2) turn by the angle position·base^(−2i/d). `inverse` turns by minus the angle: the
/// backward pass (a rotation's transpose is its inverse). Precondition: head_dim even and
/// dividing cols.
void rotary(int rows, int seq, int cols, int head_dim, float base, bool inverse, float* x, int ld);

/// SiLU, x·σ(x), and its derivative σ(x)·(1 + x·(1 − σ(x))).
float silu(float x);
float silu_grad(float x);

/// SwiGLU (Shazeer, 2020): act[i][j] = silu(pre[i][j])·pre[i][f + j] for pre[rows×2f] (the gate,
/// then the up projection) and act[rows×f].
void swiglu_forward(int rows, int f, const float* pre, float* act);
/// Its gradient: dpre[i][j] = dact·up·silu'(gate), dpre[i][f + j] = dact·silu(gate).
void swiglu_backward(int rows, int f, const float* pre, const float* dact, float* dpre);

/// Causal self-attention over `batch` sequences of `seq` tokens. Q holds `heads` heads of
/// `head_dim` columns side by side, K and V `kv_heads` heads (grouped-query attention: query
/// head i reads key/value head i / (heads/kv_heads)); row b·seq + t is token t of sequence b.
/// Q, K, V and their gradients have row stride `ld_qkv`, O and dO `ld_o`. Per-row statistics
/// (lse) are indexed ((b·heads + i)·seq + t).
struct AttentionShape {
    int batch = 1;
    int seq = 1;
    int heads = 1;
    int kv_heads = 1;
    int head_dim = 1;
    int ld_qkv = 0;
    int ld_o = 0;
    float scale = 1;  ///< applied to Q·Kᵀ before the softmax: 1/√head_dim
};

/// Unfused: for each sequence and head the full s×s scores S = Q·Kᵀ, the causal softmax of
/// scale·S (causal_softmax_forward), O = P·V. If lse is given, also log Σ_j exp(scale·S[t][j])
/// over each row's unmasked columns.
void attention_forward(const AttentionShape& a, const float* q, const float* k, const float* v,
                       float* o, float* lse);
/// The unfused gradients: dV = Pᵀ·dO, dP = dO·Vᵀ, dS (causal_softmax_backward), dQ = dS·K,
/// dK = dSᵀ·Q; dK and dV sum over the query heads of their group. dq, dk, dv are overwritten.
void attention_backward(const AttentionShape& a, const float* q, const float* k, const float* v,
                        const float* d_o, float* dq, float* dk, float* dv);

/// Flash-style (Dao et al., 2022; Dao, 2023): the same results tile by tile, `block_q` query
/// rows against `block_k` key rows, skipping tiles above the diagonal, with an online softmax
/// (running row maximum and sum, the output rescaled as the maximum grows); no s×s matrix.
/// Writes O and each row's lse.
void flash_attention_forward(const AttentionShape& a, int block_q, int block_k, const float* q,
                             const float* k, const float* v, float* o, float* lse);
/// Flash-style backward: D = rowsum(dO ⊙ O), then for each key tile and each query tile on or
/// below the diagonal P is recomputed from lse (P = exp(scale·Q·Kᵀ − lse)), dV += Pᵀ·dO,
/// dP = dO·Vᵀ, dS = scale·P ⊙ (dP − D), dK += dSᵀ·Q, dQ += dS·K. dq, dk, dv are overwritten.
void flash_attention_backward(const AttentionShape& a, int block_q, int block_k, const float* q,
                              const float* k, const float* v, const float* o, const float* d_o,
                              const float* lse, float* dq, float* dk, float* dv);

/// GeLU, tanh approximation (as Megatron-LM's bias_gelu), and its derivative.
float gelu(float x);
float gelu_grad(float x);

/// Causal softmax of each s×s block of scores (`blocks` of them): row i keeps columns ≤ i,
/// scaled by `scale` before the exponential; masked entries become 0.
void causal_softmax_forward(int blocks, int s, float scale, const float* scores, float* probs);

/// dS = scale · P ⊙ (dP − rowsum(P ⊙ dP)).
void causal_softmax_backward(int blocks, int s, float scale, const float* probs,
                             const float* dprobs, float* dscores);

/// Random values uniform in [−scale, scale], rounded to bf16, from a fixed seed.
std::vector<float> random_bf16_values(std::size_t count, float scale, std::uint64_t seed);

}  // namespace pipesim::calibration::reference
