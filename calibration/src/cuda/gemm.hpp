#pragma once
// Internal: one row-major bf16 GEMM with fp32 accumulation through cuBLAS.

#include <cublas_v2.h>

#include "kernels.hpp"

namespace pipesim::calibration::detail {

/// One operand: `data` holds a row-major matrix (transposed when `trans`) with row stride
/// `ld`; consecutive batch entries are `stride` elements apart, outer repetitions `outer`,
/// group members `member`.
struct Operand {
    const void* data = nullptr;
    long long ld = 0;
    long long stride = 0;
    long long outer = 0;
    bool trans = false;
    long long member = 0;
};

/// C[m×n] = beta·C + op(A)[m×k]·op(B)[k×n], `batch` products per cuBLAS call, `group` calls
/// per repetition and `repeat` repetitions (the attention GEMMs: one call per sequence and
/// query head of a key/value group, a batch over the key/value heads). C is bf16, or fp32
/// (weight gradients, accumulated with beta = 1).
struct GemmCall {
    long long m = 0, n = 0, k = 0;
    long long batch = 1;
    int repeat = 1;
    int group = 1;
    Operand a, b, c;
    bool c_fp32 = false;
    float beta = 0;
};

/// The offset of repetition r, group member i of an operand.
inline long long operand_offset(const Operand& o, int r, int i) {
    return r * o.outer + i * o.member;
}

/// beta of group member i: members after the first add into a C they share (member 0: dK
/// and dV of grouped-query attention sum over the query heads of their group).
inline float member_beta(const GemmCall& g, int i) {
    return i > 0 && g.c.member == 0 ? 1.0f : g.beta;
}

/// Issues the call on `handle`'s stream. Throws std::runtime_error naming the cuBLAS error.
void run_gemm(cublasHandle_t handle, const GemmCall& call);

}  // namespace pipesim::calibration::detail
