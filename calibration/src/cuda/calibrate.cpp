// calibrate(): one layer's kernels and passes timed with CUDA events.
#include <fmt/format.h>

#include "calibration/comparison.hpp"
#include "calibration/gpu.hpp"
#include "calibration/layer_shape.hpp"
#include "cuda_check.hpp"
#include "layer_runner.hpp"
#include "measure.hpp"
#include "models/gpu.hpp"

namespace pipesim::calibration::detail {

namespace {

// Median seconds of run(i) over timing.repetitions, after timing.warmup untimed calls; i
// counts every call so callers can rotate buffer sets.
template <class Run>
double median_time(Lanes& lanes, std::size_t lane, cudaStream_t stream, const TimingOptions& timing,
                   Run&& run) {
    for (int i = 0; i < timing.warmup; ++i)
        run(i);
    std::vector<cudaEvent_t> events;
    for (int i = 0; i < 2 * timing.repetitions; ++i)
        events.push_back(lanes.make_event(lane));
    for (int i = 0; i < timing.repetitions; ++i) {
        check(cudaEventRecord(events[2 * i], stream), "cudaEventRecord");
        run(timing.warmup + i);
        check(cudaEventRecord(events[2 * i + 1], stream), "cudaEventRecord");
    }
    check(cudaStreamSynchronize(stream), "running the timed kernels");
    std::vector<double> seconds;
    for (int i = 0; i < timing.repetitions; ++i) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]), "cudaEventElapsedTime");
        seconds.push_back(ms / 1e3);
    }
    return median(std::move(seconds));
}

}  // namespace

int measure_steps(const LayerShape& shape) {
    return static_cast<int>(layer_steps(shape).size()) + 3 + 1;
}

LayerMeasurement measure_layer(const models::TransformerConfig& config,
                               const models::Workload& workload, Lanes& lanes, std::size_t lane,
                               const TimingOptions& timing, const Progress& progress, int& done,
                               int total) {
    const LayerShape shape = layer_shape(config, workload);
    lanes.activate(lane);
    std::vector<std::unique_ptr<LayerRunner>> sets;
    for (int r = 0; r < timing.rotations; ++r)
        sets.push_back(std::make_unique<LayerRunner>(shape, 1000 + static_cast<unsigned>(r)));
    const Lane& l = lanes[lane];
    auto set = [&](int i) -> const LayerRunner& {
        return *sets[static_cast<std::size_t>(i) % sets.size()];
    };

    LayerMeasurement m;
    m.entry = {config.hidden,           config.heads, config.kv_heads_or_default(),
               config.ffn_or_default(), config.mlp,   shape.seq,
               shape.microbatch,        shape.tp,     {},
               workload.attention};
    m.flops = steps_flops(sets.front()->steps());
    // Whole passes first (in F, B, W order so each finds its inputs written), then kernels.
    double pass_seconds[3] = {};
    for (Pass pass : {Pass::F, Pass::B, Pass::W}) {
        progress(done++, total, fmt::format("{} pass", pass_name(pass)));
        pass_seconds[static_cast<int>(pass)] =
            median_time(lanes, lane, l.compute, timing,
                        [&](int i) { set(i).run_pass(pass, l.blas, l.compute); });
    }
    m.entry.times = {pass_seconds[0], pass_seconds[1], pass_seconds[2]};
    for (const KernelStep& k : sets.front()->steps()) {
        progress(done++, total, fmt::format("{} {}", pass_name(k.pass), k.name));
        const double s = median_time(lanes, lane, l.compute, timing,
                                     [&](int i) { set(i).run_step(k.step, l.blas, l.compute); });
        m.kernels.push_back({std::string(k.name), k.pass, s, k.flops, k.bytes});
    }
    return m;
}

CopyMeasurement measure_copy(Lanes& lanes, std::size_t lane, int src_gpu, double bytes,
                             const TimingOptions& timing) {
    const Lane& l = lanes[lane];
    const auto size = static_cast<std::size_t>(bytes);
    std::vector<void*> src(static_cast<std::size_t>(timing.rotations)), dst(src.size());
    for (std::size_t r = 0; r < src.size(); ++r) {
        check(cudaSetDevice(src_gpu), "cudaSetDevice");
        check(cudaMalloc(&src[r], size), "cudaMalloc (copy source)");
        lanes.activate(lane);
        check(cudaMalloc(&dst[r], size), "cudaMalloc (copy target)");
    }
    CopyMeasurement c;
    c.kind = src_gpu == l.gpu ? "device" : "peer";
    c.bytes = bytes;
    c.seconds = median_time(lanes, lane, l.copy, timing, [&](int i) {
        const std::size_t r = static_cast<std::size_t>(i) % src.size();
        check(cudaMemcpyPeerAsync(dst[r], l.gpu, src[r], src_gpu, size, l.copy),
              "cudaMemcpyPeerAsync");
    });
    for (std::size_t r = 0; r < src.size(); ++r) {
        cudaFree(src[r]);
        cudaFree(dst[r]);
    }
    lanes.activate(lane);
    return c;
}

}  // namespace pipesim::calibration::detail

namespace pipesim::calibration {

CalibrationRecord calibrate(const CalibrateOptions& options, const Progress& progress) {
    const int gpus = detail::require_devices();
    check_kernel_support(options.config, options.workload);
    if (options.device >= gpus)
        throw std::invalid_argument(
            fmt::format("--device {}: only {} CUDA device(s)", options.device, gpus));
    CalibrationRecord r;
    r.device = detail::device_info(options.device);
    r.gpu = options.gpu.empty() ? gpu_name_for_device(r.device.name) : options.gpu;
    r.model = options.config.name;
    r.method =
        fmt::format("CUDA events; median of {} after {} warm-up runs; {} rotating buffer sets",
                    options.timing.repetitions, options.timing.warmup, options.timing.rotations);
    RunMode mode = RunMode::multi_gpu;
    int sms = 0;
    if (options.partitions > 1) {
        const RunPlacement p = choose_placement(RunMode::partitions, options.partitions,
                                                detail::gpu_inventory(options.device));
        mode = p.mode;
        sms = p.partition_sms;
        r.device.partition_sms = sms;
    }
    detail::Lanes lanes(mode, options.device, 1, sms);
    const int total = detail::measure_steps(layer_shape(options.config, options.workload));
    int done = 0;
    r.layers.push_back(detail::measure_layer(options.config, options.workload, lanes, 0,
                                             options.timing, progress, done, total));
    progress(done++, total, "copy");
    // A peer copy where gpu-run would use one (another GPU), else a copy within the GPU.
    const int src =
        options.partitions == 1 && gpus > 1 ? (options.device + 1) % gpus : options.device;
    r.copy = detail::measure_copy(lanes, 0, src,
                                  models::pipeline_message_bytes(options.config, options.workload),
                                  options.timing);
    progress(done, total, "done");
    return r;
}

}  // namespace pipesim::calibration
