#pragma once
// Internal: the memory-bound kernels of a transformer layer (kernels.cu). Row-major bf16
// matrices, fp32 arithmetic; every launcher is asynchronous on `stream`.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace pipesim::calibration::detail {

using bf16 = __nv_bfloat16;

/// LayerNorm of each row: y = (x − mean)·rstd·gamma + beta; saves mean and rstd per row.
void layernorm_forward(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, float* mean,
                       float* rstd, int rows, int cols, float eps, cudaStream_t stream);
/// dx = residual_grad + LayerNorm's input gradient (residual_grad may be null).
void layernorm_backward_input(const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                              const bf16* gamma, const bf16* residual_grad, bf16* dx, int rows,
                              int cols, cudaStream_t stream);
/// dbeta[j] += Σ_i dy[i][j]; with x, also dgamma[j] += Σ_i dy·(x − mean)·rstd.
void column_reduce(const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                   float* dgamma, float* dbeta, int rows, int cols, cudaStream_t stream);
/// pre += bias (per column), act = GeLU(pre) (tanh approximation).
void bias_gelu_forward(bf16* pre, const bf16* bias, bf16* act, long long rows, int cols,
                       cudaStream_t stream);
/// dpre = dact · GeLU'(pre).
void gelu_backward(const bf16* dact, const bf16* pre, bf16* dpre, long long count,
                   cudaStream_t stream);
/// out = y + bias (per column, may be null) + residual (may be null); out may be y.
void add_bias_residual(const bf16* y, const bf16* bias, const bf16* residual, bf16* out,
                       long long rows, int cols, cudaStream_t stream);
/// Causal softmax of each row of s×s blocks (rows = blocks·s), scaled by `scale`; in place ok.
void causal_softmax_forward(const bf16* scores, bf16* probs, long long rows, int s, float scale,
                            cudaStream_t stream);
/// In place: dprobs becomes dscores = scale·P ⊙ (dP − rowsum(P ⊙ dP)).
void causal_softmax_backward(const bf16* probs, bf16* dprobs, long long rows, int s, float scale,
                             cudaStream_t stream);
/// Values uniform in [−scale, scale] from (seed, index).
void fill_uniform(bf16* data, long long count, float scale, std::uint64_t seed,
                  cudaStream_t stream);

}  // namespace pipesim::calibration::detail
