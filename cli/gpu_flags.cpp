#include "gpu_flags.hpp"

#include "bounds.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "calibration/layer_shape.hpp"
#include "models/presets.hpp"

namespace pipesim::cli {

const char* const gpu_model_flags_help =
    R"(  --model NAME|FILE     a GPT-style preset (see 'pipesim list') or model JSON file
  --mb B                sequences per microbatch
  --seq S               sequence length (default: the model's)
  --device N            CUDA device index (default 0)
  --warmup N            untimed runs before timing (default 5)
  --reps N              timed repetitions; the median is kept (default 30)
  --rotations N         copies of every buffer, cycled so caches stay cold (default 3)
)";

bool GpuModelFlags::read(const std::string& flag, ArgReader& reader) {
    if (flag == "--model") {
        model = reader.value(flag);
        have_model = true;
    } else if (flag == "--mb") {
        workload.microbatch =
            parse_int(flag, reader.value(flag), 1, bounds::max_gpu_microbatch_size);
        have_mb = true;
    } else if (flag == "--seq") {
        workload.seq_len = parse_int(flag, reader.value(flag), 1, bounds::max_gpu_seq_len);
    } else if (flag == "--device") {
        device = parse_int(flag, reader.value(flag), 0, bounds::max_cuda_device);
    } else if (flag == "--warmup") {
        timing.warmup = parse_int(flag, reader.value(flag), 0, bounds::max_warmup);
    } else if (flag == "--reps") {
        timing.repetitions = parse_int(flag, reader.value(flag), 1, bounds::max_repetitions);
    } else if (flag == "--rotations") {
        timing.rotations = parse_int(flag, reader.value(flag), 1, bounds::max_rotations);
    } else {
        return false;
    }
    return true;
}

models::TransformerConfig GpuModelFlags::finish() const {
    if (!have_model) throw UsageError("missing --model NAME (see 'pipesim list')");
    if (!have_mb) throw UsageError("missing --mb B (sequences per microbatch)");
    models::TransformerConfig config = models::resolve_model(model);
    calibration::check_kernel_support(config);
    models::check_workload(config, workload);
    return config;
}

ProgressLine::ProgressLine(std::string command)
    : command_(std::move(command)), tty_(::isatty(STDERR_FILENO) == 1) {}

calibration::Progress ProgressLine::sink() {
    return [this](int done, int total, std::string_view what) {
        const std::string line = fmt::format("{}: [{}/{}] {}", command_, done, total, what);
        if (tty_)
            fmt::print(stderr, "\r\033[K{}", line);
        else
            fmt::print(stderr, "{}\n", line);
        std::fflush(stderr);
        open_ = tty_;
    };
}

void ProgressLine::done() {
    if (open_) fmt::print(stderr, "\n");
    open_ = false;
}

}  // namespace pipesim::cli
