#pragma once
// Internal: the memory-bound kernels of a transformer layer (kernels.cu). Row-major bf16
// matrices, fp32 arithmetic; every launcher is asynchronous on `stream`.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace pipesim::calibration::detail {

using bf16 = __nv_bfloat16;

/// LayerNorm of each row: y = (x − mean)·rstd·gamma + beta; saves mean and rstd per row.
/// With beta null, RMSNorm: y = x·rstd·gamma, rstd = 1/sqrt(mean(x²) + eps); mean may be null.
void layernorm_forward(const bf16* x, const bf16* gamma, const bf16* beta, bf16* y, float* mean,
                       float* rstd, int rows, int cols, float eps, cudaStream_t stream);
/// dx = residual_grad + LayerNorm's input gradient (residual_grad may be null); with mean
/// null, RMSNorm's.
void layernorm_backward_input(const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                              const bf16* gamma, const bf16* residual_grad, bf16* dx, int rows,
                              int cols, cudaStream_t stream);
/// dbeta[j] += Σ_i dy[i][j] (dbeta may be null); with x, also dgamma[j] += Σ_i dy·(x −
/// mean)·rstd (mean null: x·rstd, RMSNorm).
void column_reduce(const bf16* dy, const bf16* x, const float* mean, const float* rstd,
                   float* dgamma, float* dbeta, int rows, int cols, cudaStream_t stream);
/// pre += bias (per column; bias may be null), act = GeLU(pre) (tanh approximation).
void bias_gelu_forward(bf16* pre, const bf16* bias, bf16* act, long long rows, int cols,
                       cudaStream_t stream);
/// SwiGLU: pre is rows×2f (gate, then up), pre += bias (2f values, may be null), act[rows×f]
/// = silu(gate)·up.
void swiglu_forward(bf16* pre, const bf16* bias, bf16* act, long long rows, int f,
                    cudaStream_t stream);
/// dpre (rows×2f) from dact (rows×f): d gate = dact·up·silu'(gate), d up = dact·silu(gate).
void swiglu_backward(const bf16* dact, const bf16* pre, bf16* dpre, long long rows, int f,
                     cudaStream_t stream);
/// Rotary embedding in place on the first `cols` columns of each row (stride ld), heads of
/// head_dim columns, halves paired, position = row mod seq (reference::rotary); `inverse`
/// turns back (the backward pass).
void rotary(bf16* x, long long rows, int seq, int cols, int head_dim, int ld, float base,
            bool inverse, cudaStream_t stream);
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
/// Causal attention over `batch` sequences of `seq` tokens (reference::AttentionShape): Q,
/// K, V and their gradients have row stride ld_qkv, O and dO ld_o; query head i reads
/// key/value head i / (heads/kv_heads). head_dim is 32, 64, 96 or 128 (flash_head_dims); the
/// strides and head_dim are multiples of 8 and the pointers 16-byte aligned.
struct FlashShape {
    int batch = 1;
    int seq = 1;
    int heads = 1;
    int kv_heads = 1;
    int head_dim = 128;
    long long ld_qkv = 0;
    long long ld_o = 0;
    float scale = 1;
};
/// Flash-style forward (flash.cu): O and each row's log-sum-exp lse (fp32, indexed
/// ((b·heads + i)·seq + t)); no s×s matrix.
void flash_attention_forward(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse,
                             const FlashShape& shape, cudaStream_t stream);
/// Flash-style backward: delta = rowsum(dO ⊙ O) (fp32, like lse), P recomputed from lse,
/// dQ summed in dq_sum (fp32, rows of heads·head_dim; zeroed here) then written to dq; dK, dV
/// summed over each key/value head's query heads.
void flash_attention_backward(const bf16* q, const bf16* k, const bf16* v, const bf16* o,
                              const bf16* d_o, const float* lse, float* delta, float* dq_sum,
                              bf16* dq, bf16* dk, bf16* dv, const FlashShape& shape,
                              cudaStream_t stream);
/// Values uniform in [−scale, scale] from (seed, index).
void fill_uniform(bf16* data, long long count, float scale, std::uint64_t seed,
                  cudaStream_t stream);

}  // namespace pipesim::calibration::detail
