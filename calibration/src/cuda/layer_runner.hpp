#pragma once
// Internal: the buffers of one transformer layer on one GPU and the kernels of each step.

#include <cublas_v2.h>

#include <cstdint>
#include <vector>

#include "calibration/layer_shape.hpp"
#include "gemm.hpp"
#include "kernels.hpp"

namespace pipesim::calibration::detail {

/// Rotary embedding base (Su et al., 2021; Llama 2). Llama 3 uses 500 000: the angles differ,
/// the work does not.
inline constexpr float rotary_base = 10000.0f;

/// Device pointers of one layer's weights, activations and gradients (one allocation). The
/// s×s buffers (probs, d_probs) are empty with the fused attention, its statistics (lse,
/// delta, dq_sum) with the unfused one; pre, d_pre, w_fc1 and their kin are fc1_width() wide.
struct LayerBuffers {
    // weights (bf16) and their fp32 gradients
    bf16 *w_qkv, *b_qkv, *w_proj, *b_proj, *w_fc1, *b_fc1, *w_fc2, *b_fc2;
    bf16 *gamma1, *beta1, *gamma2, *beta2;
    float *g_qkv, *gb_qkv, *g_proj, *gb_proj, *g_fc1, *gb_fc1, *g_fc2, *gb_fc2;
    float *g_gamma1, *g_beta1, *g_gamma2, *g_beta2;
    // forward activations
    bf16 *x, *ln1_out, *qkv, *probs, *ctx, *y, *out1, *ln2_out, *pre, *act, *out;
    float *mean1, *rstd1, *mean2, *rstd2;
    float *lse, *delta, *dq_sum;  // fused attention: row statistics, dQ's fp32 sums
    // backward
    bf16 *d_out, *d_act, *d_pre, *d_ln2, *d_out1, *d_ctx, *d_probs, *d_qkv, *d_ln1, *d_x;
};

/// Allocates and fills (uniform random, seeded) one layer's buffers on the current device;
/// runs its steps on a cuBLAS handle whose stream is set by the caller.
class LayerRunner {
  public:
    LayerRunner(const LayerShape& shape, std::uint64_t seed);
    ~LayerRunner();
    LayerRunner(const LayerRunner&) = delete;
    LayerRunner& operator=(const LayerRunner&) = delete;

    const LayerShape& shape() const { return shape_; }
    const LayerBuffers& buffers() const { return buf_; }
    const std::vector<KernelStep>& steps() const { return steps_; }

    /// One kernel, on `stream` (and `blas`, whose stream must be `stream`).
    void run_step(Step step, cublasHandle_t blas, cudaStream_t stream) const;
    /// Every kernel of F, B, W or BW (B then W).
    void run_pass(Pass pass, cublasHandle_t blas, cudaStream_t stream) const;
    /// The cuBLAS call of a GEMM step (precondition: the step is a GEMM).
    GemmCall gemm_call(Step step) const;
    /// The fused attention's shape (Q, K, V in the qkv buffer, O in ctx).
    FlashShape flash_shape() const;
    /// Where a pipeline message leaves this layer: F's output (n×h) or B's input gradient.
    const bf16* message(Pass pass) const { return pass == Pass::F ? buf_.out : buf_.d_x; }

  private:
    LayerShape shape_;
    std::vector<KernelStep> steps_;
    LayerBuffers buf_{};
    void* memory_ = nullptr;
};

}  // namespace pipesim::calibration::detail
