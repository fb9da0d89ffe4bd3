// The GPU functions of calibration/gpu.hpp in a build without CUDA: each reports that the
// build has none (the CLI turns GpuUnavailable into exit code 3). The `calibration_unavailable`
// target, which `pipesim` links in every build: the CUDA side lives in `pipesim-gpu`.
#include "calibration/gpu.hpp"

namespace pipesim::calibration {

CalibrationRecord calibrate(const CalibrateOptions&, const Progress&) {
    throw GpuUnavailable("pipesim built without CUDA: calibrate needs a CUDA build");
}

GpuRunResult gpu_run(const GpuRunOptions&, const Progress&) {
    throw GpuUnavailable("pipesim built without CUDA: gpu-run needs a CUDA build");
}

std::vector<KernelCheck> check_kernels(int) {
    throw GpuUnavailable("pipesim built without CUDA: kernel checks need a CUDA build");
}

}  // namespace pipesim::calibration
