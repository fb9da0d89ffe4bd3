#include "gpu_flags.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>

#include <fmt/format.h>

#include "bounds.hpp"
#include "calibration/layer_shape.hpp"
#include "flag_table.hpp"
#include "models/presets.hpp"

namespace pipesim::cli {

namespace {

using GpuFlag = FlagSpec<GpuModelFlags>;

const std::array gpu_model_flags = {
    GpuFlag{"", "--model", "NAME|FILE", "a preset (see 'pipesim list') or model JSON file",
            [](GpuModelFlags& g, const std::string&, const std::string& v) {
                g.model = v;
                g.have_model = true;
            }},
    GpuFlag{"", "--mb", "B", "sequences per microbatch",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.workload.microbatch = parse_int(f, v, 1, bounds::max_gpu_microbatch_size);
                g.have_mb = true;
            }},
    GpuFlag{"", "--seq", "S", "sequence length (default: the model's)",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.workload.seq_len = parse_int(f, v, 1, bounds::max_gpu_seq_len);
            }},
    GpuFlag{"", "--attention", "KIND",
            "fused (flash-style, the default) or unfused (s×s scores in memory)",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.workload.attention = parse_flag_value(f, v, models::parse_attention_kernel);
            }},
    GpuFlag{"", "--device", "N", "CUDA device index (default 0)",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.device = parse_int(f, v, 0, bounds::max_cuda_device);
            }},
    GpuFlag{"", "--warmup", "N", "untimed runs before timing (default 5)",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.timing.warmup = parse_int(f, v, 0, bounds::max_warmup);
            }},
    GpuFlag{"", "--reps", "N", "timed repetitions; the median is kept (default 30)",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.timing.repetitions = parse_int(f, v, 1, bounds::max_repetitions);
            }},
    GpuFlag{"", "--rotations", "N",
            "copies of every buffer, cycled so caches stay cold (default 3)",
            [](GpuModelFlags& g, const std::string& f, const std::string& v) {
                g.timing.rotations = parse_int(f, v, 1, bounds::max_rotations);
            }},
};

}  // namespace

const std::string gpu_model_flags_help = flags_help(gpu_model_flags);

bool GpuModelFlags::read(const std::string& flag, ArgReader& reader) {
    return read_flag(gpu_model_flags, flag, reader, *this);
}

models::TransformerConfig GpuModelFlags::finish() const {
    if (!have_model) throw UsageError("missing --model NAME (see 'pipesim list')");
    if (!have_mb) throw UsageError("missing --mb B (sequences per microbatch)");
    models::TransformerConfig config = models::resolve_model(model);
    calibration::check_kernel_support(config, workload);
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
