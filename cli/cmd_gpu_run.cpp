// pipesim gpu-run: runs a schedule's ops with the calibration kernels on real GPUs (or SM
// partitions of one GPU), records the measured Timeline and compares it with the prediction.
#include <fmt/format.h>

#include "analysis/predict.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "calibration/comparison.hpp"
#include "calibration/gpu.hpp"
#include "calibration/stream_plan.hpp"
#include "commands.hpp"
#include "gpu_flags.hpp"
#include "models/layer_costs.hpp"
#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* gpu_run_usage =
    R"(usage: pipesim gpu-run -s NAME -p P -m M --model NAME --mb B [options]

Runs the schedule's ops on GPUs with the layer kernels (each op runs its stage's layers),
times every op with CUDA events and compares the measured run with pipesim's prediction
from a calibration on one pipeline device. Needs a CUDA build and a GPU.

  -s, --schedule NAME   schedule (see 'pipesim list')
  -p, --stages P        pipeline devices
  -m, --microbatches M  microbatches
  -v, --chunks V        virtual stages per device (default: the schedule's)
  --mode MODE           auto (default: P GPUs if there are, else SM partitions of one GPU),
                        gpus, or partitions
)";

calibration::RunMode parse_mode(const std::string& flag, const std::string& text) {
    if (text == "auto") return calibration::RunMode::automatic;
    if (text == "gpus") return calibration::RunMode::multi_gpu;
    if (text == "partitions") return calibration::RunMode::partitions;
    throw UsageError(fmt::format("{}: expected auto, gpus or partitions, got '{}'", flag, text));
}

}  // namespace

int run_gpu_run(const std::vector<std::string>& args) {
    GpuModelFlags model;
    std::string schedule_name;
    GeneratorOptions generator;
    calibration::GpuRunOptions options;
    viz::VizOutputs viz_outputs;
    bool have_p = false, have_m = false;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (model.read(flag, reader)) {
        } else if (flag == "-s" || flag == "--schedule") {
            schedule_name = reader.value(flag);
        } else if (flag == "-p" || flag == "--stages") {
            generator.devices = parse_int(flag, reader.value(flag), 1, bounds::max_gpu_devices);
            have_p = true;
        } else if (flag == "-m" || flag == "--microbatches") {
            generator.microbatches =
                parse_int(flag, reader.value(flag), 1, bounds::max_gpu_microbatches);
            have_m = true;
        } else if (flag == "-v" || flag == "--chunks") {
            generator.chunks = parse_int(flag, reader.value(flag), 1, bounds::max_chunks);
        } else if (flag == "--mode") {
            options.mode = parse_mode(flag, reader.value(flag));
        } else if (read_viz_flag(flag, reader, viz_outputs)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}\n{}", gpu_run_usage, gpu_model_flags_help, viz_flags_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim gpu-run --help')", quote_arg(flag)));
        }
    }
    if (schedule_name.empty()) throw UsageError("missing -s NAME (see 'pipesim list')");
    if (!have_p) throw UsageError("missing -p P (number of pipeline devices)");
    if (!have_m) throw UsageError("missing -m M (number of microbatches)");
    options.config = model.finish();
    options.workload = model.workload;
    options.first_device = model.device;
    options.timing = model.timing;
    options.schedule = generate_schedule(schedule_name, generator);
    options.stage_layers =
        calibration::even_stage_layers(options.config.layers, options.schedule.stages());
    viz::check_outputs(viz_outputs);

    ProgressLine progress("gpu-run");
    calibration::GpuRunResult result;
    try {
        result = calibration::gpu_run(options, progress.sink());
        progress.done();
    } catch (const calibration::GpuUnavailable& e) {
        progress.done();
        fmt::print(stderr, "pipesim gpu-run: {}\n", e.what());
        return exit_no_gpu;
    }

    const calibration::LayerMeasurement& layer = result.calibration.layers.front();
    const double bytes = models::pipeline_message_bytes(options.config, options.workload);
    const Timeline predicted =
        analysis::predict_timeline(options.schedule, options.stage_layers, layer.entry.times,
                                   result.calibration.copy.seconds, bytes);
    const calibration::RunComparison c = calibration::compare_timelines(predicted, result.measured);

    fmt::print("{} p={} m={} v={}, {} b={} s={}, on {}\n", options.schedule.name,
               options.schedule.devices, options.schedule.microbatches, options.schedule.chunks,
               options.config.name, layer.entry.microbatch, layer.entry.seq_len, result.where);
    fmt::print(
        "layer (calibrated on one pipeline device): F {:.3f} ms, B {:.3f} ms, W {:.3f} ms; "
        "transfer {:.3f} ms\n\n",
        layer.entry.times.forward * 1e3, layer.entry.times.backward_input * 1e3,
        layer.entry.times.backward_weight * 1e3, result.calibration.copy.seconds * 1e3);
    fmt::print("{}", calibration::comparison_table(c));
    std::string passes;
    for (const calibration::PassError& e : c.passes)
        passes += fmt::format(" {}_err_pct={:.1f}", pass_name(e.pass), e.median_error * 100);
    fmt::print(
        "summary: schedule={} predicted_ms={:.3f} measured_ms={:.3f} error_pct={:.1f} "
        "bubble_pred_pct={:.1f} bubble_meas_pct={:.1f}{}\n",
        options.schedule.name, c.predicted_makespan * 1e3, c.measured_makespan * 1e3,
        c.makespan_error * 100, c.predicted_bubble * 100, c.measured_bubble * 100, passes);
    const std::string gantt = viz::write_outputs(
        result.measured, unit_memory_model(options.schedule.devices, options.schedule.chunks),
        viz_outputs);
    if (!gantt.empty()) fmt::print("\n{}", gantt);
    return 0;
}

}  // namespace pipesim::cli
