#pragma once
// Internal: finding devices, describing them, and SM partitions (green contexts) reached
// through the runtime's driver entry points, so nothing links libcuda directly and the
// binary starts on machines without a driver.

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

#include "calibration/calibration_file.hpp"
#include "calibration/stream_plan.hpp"

namespace pipesim::calibration::detail {

/// Number of CUDA devices; throws GpuUnavailable("no CUDA device found") if there are none
/// or no usable driver.
int require_devices();

/// What the driver says about `device`; partition_sms = sm_count.
DeviceInfo device_info(int device);

/// GPUs, and what SM partitions of `device` the driver allows.
GpuInventory gpu_inventory(int device);

/// The streams a pipeline device runs on: compute and copy streams, a cuBLAS handle bound to
/// the compute stream, and (for a partition) the green context whose events they record.
struct Lane {
    int gpu = 0;
    cudaStream_t compute = nullptr;
    cudaStream_t copy = nullptr;
    cublasHandle_t blas = nullptr;
    CUcontext context = nullptr;  ///< green context (as a CUcontext), or null: the primary one
};

/// `count` lanes: on GPUs first..first+count−1 (multi_gpu), or as green-context partitions
/// of `partition_sms` SMs each on GPU `first`. Destroys them on destruction.
class Lanes {
  public:
    Lanes(RunMode mode, int first, int count, int partition_sms);
    ~Lanes();
    Lanes(const Lanes&) = delete;
    Lanes& operator=(const Lanes&) = delete;

    Lane& operator[](std::size_t i) { return lanes_[i]; }
    std::size_t size() const { return lanes_.size(); }
    /// A timing event usable on lane i's streams (created in its context).
    cudaEvent_t make_event(std::size_t i);
    /// Makes lane i's GPU current (multi_gpu); partitions share one GPU.
    void activate(std::size_t i) const;

  private:
    RunMode mode_;
    std::vector<Lane> lanes_;
    std::vector<CUgreenCtx> green_;
    std::vector<cudaEvent_t> events_;
};

}  // namespace pipesim::calibration::detail
