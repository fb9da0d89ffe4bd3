#pragma once
// What `pipesim calibrate` measures and writes: the calibration file models/ reads
// (docs/calibration-format.md), with the optional per-kernel breakdown and device details.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost_model.hpp"
#include "schedules/op.hpp"

namespace pipesim::calibration {

/// One kernel's median time within a pass.
struct KernelTime {
    std::string name;  ///< as in KernelStep::name
    Pass pass = Pass::F;
    double seconds = 0;
    double flops = 0;  ///< 0 for memory-bound kernels
    double bytes = 0;  ///< bytes read and written (memory-bound kernels; 0 for GEMMs)
};

/// One measured layer shape: the entry models/ reads plus the breakdown.
struct LayerMeasurement {
    models::CalibrationEntry entry;  ///< shape and median pass times (seconds)
    models::PassFlops flops;         ///< the passes' GEMM FLOPs on this GPU (after the TP split)
    std::vector<KernelTime> kernels;
};

/// The device the measurements were taken on.
struct DeviceInfo {
    std::string name;       ///< as the driver calls it ("NVIDIA H200")
    int sm_count = 0;       ///< SMs of the whole GPU
    int partition_sms = 0;  ///< SMs the kernels ran on (a green-context partition), or sm_count
    double clock_mhz = 0;   ///< peak SM clock
    double memory_clock_mhz = 0;
    double memory_bytes = 0;
    int cuda_runtime = 0;  ///< e.g. 13000
    int cuda_driver = 0;
};

/// Device-to-device copy bandwidth, measured with a pipeline message's size.
struct CopyMeasurement {
    std::string kind;  ///< "peer" (GPU to GPU) or "device" (within one GPU)
    double bytes = 0;
    double seconds = 0;  ///< median time of one copy
    double bandwidth() const { return seconds > 0 ? bytes / seconds : 0; }
};

/// Everything one calibration run measured.
struct CalibrationRecord {
    std::string gpu;     ///< a name from models::gpu_specs()
    std::string model;   ///< the model whose layer was measured (informational)
    std::string method;  ///< how it was timed, one line
    DeviceInfo device;
    CopyMeasurement copy;
    std::vector<LayerMeasurement> layers;
};

/// The calibration file's JSON: the fields models::parse_calibration reads plus the optional
/// "measured" object and each layer's "tflops" and "kernels" (docs/calibration-format.md).
/// Throws std::invalid_argument for a record models/ could not read back: no layers, an
/// unknown GPU or a pass time that is not > 0.
nlohmann::ordered_json calibration_json(const CalibrationRecord& record);

/// Writes calibration_json(record) to `path`, whole or not at all.
void write_calibration_file(const CalibrationRecord& record, const std::string& path);

/// The models/ GPU name for a device name the driver reports ("NVIDIA H200" → "h200",
/// "NVIDIA H100 80GB HBM3" → "h100-sxm", "NVIDIA A100-SXM4-40GB" → "a100-40gb"). Throws
/// std::invalid_argument naming the device when no known GPU matches (use --gpu then).
std::string gpu_name_for_device(std::string_view device_name);

}  // namespace pipesim::calibration
