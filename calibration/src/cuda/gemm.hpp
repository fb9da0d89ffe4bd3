#pragma once
// Internal: one row-major bf16 GEMM with fp32 accumulation through cuBLAS.

#include <cublas_v2.h>

#include "kernels.hpp"

namespace pipesim::calibration::detail {

/// One operand: `data` holds a row-major matrix (transposed when `trans`) with row stride
/// `ld`; consecutive batch entries are `stride` elements apart, outer repetitions `outer`.
struct Operand {
    const void* data = nullptr;
    long long ld = 0;
    long long stride = 0;
    long long outer = 0;
    bool trans = false;
};

/// C[m×n] = beta·C + op(A)[m×k]·op(B)[k×n], `batch` products per cuBLAS call and `repeat`
/// calls (the attention GEMMs: heads per call, one call per sequence). C is bf16, or fp32
/// (weight gradients, accumulated with beta = 1).
struct GemmCall {
    long long m = 0, n = 0, k = 0;
    long long batch = 1;
    int repeat = 1;
    Operand a, b, c;
    bool c_fp32 = false;
    float beta = 0;
};

/// Issues the call on `handle`'s stream. Throws std::runtime_error naming the cuBLAS error.
void run_gemm(cublasHandle_t handle, const GemmCall& call);

}  // namespace pipesim::calibration::detail
