#pragma once
// Internal: CUDA, cuBLAS and driver results turned into exceptions naming the call.

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace pipesim::calibration::detail {

inline void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

inline void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS)
        throw std::runtime_error(std::string(what) + ": CUDA driver error " + std::to_string(r));
}

}  // namespace pipesim::calibration::detail
