#pragma once
// The flags that choose a schedule, its costs and (optionally) a model: shared by the
// commands that run a pipeline (analyze, simulate).

#include <string>

#include "args.hpp"
#include "schedules/schedule.hpp"
#include "sim/analyze.hpp"

namespace pipesim::cli {

/// Help lines for the schedule and cost flags, and for the model flags.
extern const char* const schedule_flags_help;
extern const char* const model_flags_help;

/// Reads one of --costs, --comm, --mem-w-ratio into `options`; false if `flag` is none of them.
bool read_cost_flag(const std::string& flag, ArgReader& reader, AnalyzeOptions& options);

/// Reads -s/-p/-m/-v/--group-size, --costs, --comm, --mem-w-ratio, --schedule-file, --save
/// and the model flags (--model, --gpu, --mb, ...) into an AnalyzeOptions.
class PipelineFlags {
  public:
    /// Reads one of these flags; false if `flag` is none of them.
    bool read(const std::string& flag, ArgReader& reader);
    /// Checks the combination once every flag is read and fills options().model.
    /// Throws UsageError naming what is missing or clashes.
    void finish();

    AnalyzeOptions& options() { return options_; }
    const AnalyzeOptions& options() const { return options_; }
    /// The schedule: generated from -s/-p/-m/-v or read from --schedule-file (validated).
    Schedule schedule() const;
    /// Analyzes it with the analytic replay.
    Analysis analyze() const;
    /// Writes the schedule to --save's file, if given.
    void save(const Schedule& schedule) const;

  private:
    AnalyzeOptions options_;
    std::string schedule_file_, save_file_;
    bool have_schedule_ = false, have_p_ = false, have_m_ = false, have_shape_flag_ = false;
    bool have_unit_costs_ = false;
    bool model_any_ = false, have_model_ = false, have_gpu_ = false, have_mb_ = false;
    ModelRunOptions model_;

    bool read_model_flag(const std::string& flag, ArgReader& reader);
};

}  // namespace pipesim::cli
