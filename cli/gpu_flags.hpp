#pragma once
// What `calibrate` and `gpu-run` share: the model and timing flags, the progress line and
// the exit code for "no GPU".

#include <string>
#include <string_view>

#include "args.hpp"
#include "calibration/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/transformer.hpp"

namespace pipesim::cli {

/// Exit code when no GPU work is possible (no CUDA build or no device): beside DESIGN's 2 (bad
/// usage or input) and 1 (internal failure), so that scripts can tell "no GPU here" from an
/// error. Listed with the others in `pipesim --help` and README.md.
inline constexpr int exit_no_gpu = 3;

/// Help lines of the flags GpuModelFlags::read() accepts.
extern const std::string gpu_model_flags_help;

/// --model, --mb, --seq, -t, --device, --warmup, --reps, --rotations.
struct GpuModelFlags {
    std::string model;
    models::Workload workload;
    int device = 0;
    calibration::TimingOptions timing;
    bool have_model = false, have_mb = false;

    /// Reads one of these flags; false if `flag` is none of them.
    bool read(const std::string& flag, ArgReader& reader);
    /// Throws UsageError unless --model and --mb were given; returns the resolved model,
    /// checked against what the kernels implement.
    models::TransformerConfig finish() const;
};

/// A progress line on stderr, rewritten in place on a terminal ("\r"), one line per step
/// otherwise; ended with a newline by done().
class ProgressLine {
  public:
    explicit ProgressLine(std::string command);
    calibration::Progress sink();
    void done();

  private:
    std::string command_;
    bool tty_;
    bool open_ = false;
};

}  // namespace pipesim::cli
