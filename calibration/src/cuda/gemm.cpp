#include "gemm.hpp"

#include "cuda_check.hpp"

namespace pipesim::calibration::detail {

namespace {

const char* offset(const void* p, long long elements, long long size) {
    return static_cast<const char*>(p) + elements * size;
}

}  // namespace

void run_gemm(cublasHandle_t handle, const GemmCall& g) {
    // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands and
    // keep each one's transpose flag.
    const float alpha = 1.0f;
    const long long c_size = g.c_fp32 ? 4 : 2;
    const cudaDataType_t c_type = g.c_fp32 ? CUDA_R_32F : CUDA_R_16BF;
    const cublasOperation_t op_a = g.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = g.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
    for (int r = 0; r < g.repeat; ++r)
        for (int i = 0; i < g.group; ++i) {
            const float beta = member_beta(g, i);
            const void* a = offset(g.a.data, operand_offset(g.a, r, i), 2);
            const void* b = offset(g.b.data, operand_offset(g.b, r, i), 2);
            void* c = const_cast<char*>(offset(g.c.data, operand_offset(g.c, r, i), c_size));
            if (g.batch == 1)
                check(
                    cublasGemmEx(handle, op_b, op_a, n, m, k, &alpha, b, CUDA_R_16BF,
                                 static_cast<int>(g.b.ld), a, CUDA_R_16BF, static_cast<int>(g.a.ld),
                                 &beta, c, c_type, static_cast<int>(g.c.ld), CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT),
                    "cublasGemmEx");
            else
                check(cublasGemmStridedBatchedEx(
                          handle, op_b, op_a, n, m, k, &alpha, b, CUDA_R_16BF,
                          static_cast<int>(g.b.ld), g.b.stride, a, CUDA_R_16BF,
                          static_cast<int>(g.a.ld), g.a.stride, &beta, c, c_type,
                          static_cast<int>(g.c.ld), g.c.stride, static_cast<int>(g.batch),
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      "cublasGemmStridedBatchedEx");
        }
}

}  // namespace pipesim::calibration::detail
