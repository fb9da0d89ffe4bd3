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

/// Column sums over rows: dbeta[j] += Σ dy[i][j] and, if x is given, dgamma[j] +=
/// Σ dy[i][j]·x̂[i][j] with x̂ = (x − mean)·rstd (LayerNorm's weight gradients; without x,
/// a bias gradient).
void column_reduce(int rows, int cols, const float* dy, const float* x, const float* mean,
                   const float* rstd, float* dgamma, float* dbeta);

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
