// pipesim calibrate: measures one transformer layer's passes on a GPU and writes a
// calibration file (docs/calibration-format.md) that analyze/simulate --calibration read.
#include <fmt/format.h>

#include "args.hpp"
#include "bounds.hpp"
#include "calibration/calibration_file.hpp"
#include "calibration/gpu.hpp"
#include "commands.hpp"
#include "gpu_flags.hpp"
#include "models/gpu.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* calibrate_usage =
    R"(usage: pipesim calibrate --model NAME --mb B [-t T] -o CALIB.json [options]

Times one layer's F, B and W (and each kernel) on a GPU with bf16 GEMMs and writes the
per-layer times models/ reads (docs/calibration.md): GPT-style layers (LayerNorm, GeLU) and
Llama-style ones (RMSNorm, rotary, SwiGLU, grouped-query attention), the attention fused
(flash-style) or unfused. Needs a CUDA build and a GPU.

  -o, --output FILE     calibration file to write
  -t, --tp T            tensor-parallel degree: time one GPU's share (default 1)
  --gpu NAME            models/ GPU name for the file (default: from the device name)
  --partitions P        time one SM partition of 1/P of the GPU, as gpu-run uses (default 1)
)";

void print_summary(const calibration::CalibrationRecord& r, const std::string& path) {
    const calibration::LayerMeasurement& m = r.layers.front();
    const models::PassTimes& t = m.entry.times;
    const char* attention =
        m.entry.attention == models::AttentionKernel::unfused ? "unfused" : "fused";
    fmt::print("{} on {} ({} of {} SMs), b={} s={} t={}, {} attention\n", r.model, r.device.name,
               r.device.partition_sms, r.device.sm_count, m.entry.microbatch, m.entry.seq_len,
               m.entry.tp, attention);
    auto line = [](const char* pass, double seconds, double flops) {
        fmt::print("  {:<16}{:>10.3f} ms {:>8.1f} TFLOP/s\n", pass, seconds * 1e3,
                   flops / seconds / 1e12);
    };
    line("F (forward)", t.forward, m.flops.forward);
    line("B (input grad)", t.backward_input, m.flops.backward_input);
    line("W (weight grad)", t.backward_weight, m.flops.backward_weight);
    double best = 0;
    std::string best_name;
    for (const calibration::KernelTime& k : m.kernels)
        if (k.flops > 0 && k.name != "flash" && k.flops / k.seconds > best) {
            best = k.flops / k.seconds;
            best_name = fmt::format("{} {}", pass_name(k.pass), k.name);
        }
    fmt::print("  fastest GEMM: {} at {:.1f} TFLOP/s\n", best_name, best / 1e12);
    // The fused attention's own rate (0 with the unfused attention).
    double flash[2] = {0, 0};
    for (const calibration::KernelTime& k : m.kernels)
        if (k.name == "flash" && k.seconds > 0)
            flash[k.pass == Pass::F ? 0 : 1] = k.flops / k.seconds / 1e12;
    if (flash[0] > 0)
        fmt::print("  flash attention: F {:.1f} TFLOP/s, B {:.1f} TFLOP/s\n", flash[0], flash[1]);
    if (r.copy.seconds > 0)
        fmt::print("  {} copy of {:.1f} MB: {:.1f} GB/s\n", r.copy.kind, r.copy.bytes / 1e6,
                   r.copy.bandwidth() / 1e9);
    fmt::print("wrote {}\n", path);
    // One machine-readable line for scripts (calibration/device_check.sh).
    fmt::print(
        "summary: model={} mb={} tp={} attention={} F_ms={:.4f} B_ms={:.4f} W_ms={:.4f} "
        "F_tflops={:.1f} B_tflops={:.1f} W_tflops={:.1f} best_gemm_tflops={:.1f} "
        "copy_gbps={:.1f} flash_F_tflops={:.1f} flash_B_tflops={:.1f}\n",
        r.model, m.entry.microbatch, m.entry.tp, attention, t.forward * 1e3, t.backward_input * 1e3,
        t.backward_weight * 1e3, m.flops.forward / t.forward / 1e12,
        m.flops.backward_input / t.backward_input / 1e12,
        m.flops.backward_weight / t.backward_weight / 1e12, best / 1e12, r.copy.bandwidth() / 1e9,
        flash[0], flash[1]);
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
    GpuModelFlags model;
    calibration::CalibrateOptions options;
    std::string output;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (model.read(flag, reader)) {
        } else if (flag == "-o" || flag == "--output") {
            output = reader.value(flag);
        } else if (flag == "-t" || flag == "--tp") {
            options.workload.tp = parse_int(flag, reader.value(flag), 1, bounds::max_tp);
        } else if (flag == "--gpu") {
            options.gpu = reader.value(flag);
        } else if (flag == "--partitions") {
            options.partitions = parse_int(flag, reader.value(flag), 1, bounds::max_gpu_devices);
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}", calibrate_usage, gpu_model_flags_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim calibrate --help')", quote_arg(flag)));
        }
    }
    if (output.empty()) throw UsageError("missing -o FILE (the calibration file to write)");
    model.workload.tp = options.workload.tp;
    options.config = model.finish();
    options.workload = model.workload;
    options.device = model.device;
    options.timing = model.timing;
    if (!options.gpu.empty()) models::find_gpu(options.gpu);

    ProgressLine progress("calibrate");
    try {
        const calibration::CalibrationRecord record =
            calibration::calibrate(options, progress.sink());
        progress.done();
        calibration::write_calibration_file(record, output);
        print_summary(record, output);
    } catch (const calibration::GpuUnavailable& e) {
        progress.done();
        fmt::print(stderr, "pipesim calibrate: {}\n", e.what());
        return exit_no_gpu;
    }
    return 0;
}

}  // namespace pipesim::cli
