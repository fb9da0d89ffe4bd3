#pragma once
// The flags that describe a pipeline — the schedule, its shape, its costs or a model, the
// parallel layout — read into an analysis::PipelineSpec: shared by the commands that run a
// pipeline (analyze, simulate) and, for the cost group, by block, search and render.

#include <optional>
#include <string>

#include "analysis/spec.hpp"
#include "args.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::cli {

/// Help lines of the schedule (with the cost and file flags), cost and model flag groups.
/// `with_replay_options`: whether the analytic replay's own --comm, --a2a and --overlap-fb are
/// listed (the SimGrid engine takes latencies from the cluster and runs F&B pairs back to back).
std::string schedule_flags_help(bool with_replay_options = true);
/// compare's: the schedule and cost flags without -s (compare's own takes a list) and
/// without the file flags (compare runs registered schedules only).
std::string compare_schedule_flags_help();
/// `one_triple`: --costs as a command that plans its own chunks takes it (search), one F,B,W.
std::string cost_flags_help(bool with_replay_options = true, bool one_triple = false);
/// Whether `flag` is one of the analytic replay's own cost flags (--comm, --a2a, --overlap-fb),
/// which the SimGrid engine refuses.
bool replay_only_flag(std::string_view flag);
/// `with_dp`: whether --dp is listed (search reads -t but not --dp).
std::string model_flags_help(bool with_dp = true);

/// --overlap-grad-reduce / --no-overlap-grad-reduce, --overlap-param-gather and
/// --post-validation (how an iteration ends), read the same way by analyze and simulate.
struct GradReduceFlags {
    bool overlap = true;                ///< reduce during the last backward (the default)
    std::string given;                  ///< the flag given last, "" if none
    bool overlap_param_gather = false;  ///< --overlap-param-gather
    bool post_validation = false;       ///< --post-validation
};
/// Reads one of the two flags into `into`; false if `flag` is neither.
bool read_grad_reduce_flag(const std::string& flag, ArgReader& reader, GradReduceFlags& into);
/// Their help lines.
std::string grad_reduce_flags_help();
/// Throws UsageError when a flag was given but there is no gradient reduction (dp·C < 2), or
/// --overlap-param-gather without a sharded optimizer that gathers parameters (--dist-opt,
/// --zero 1 or 2).
void check_grad_reduce_flag(const GradReduceFlags& flags, const analysis::PipelineSpec& spec);

/// Refuses sharding (--zero, --dist-opt) with one data- and context-parallel rank, --dist-opt
/// beside --zero 2 or 3, and --tp-comm-overlap without -t > 1. `with_dp`: the command has --dp.
void check_sharding_flags(const analysis::ModelSpec& model, const analysis::PipelineSpec& spec,
                          bool with_dp);

/// Reads one of --costs, --comm, --mem-w-ratio into `spec`; false if `flag` is none of them.
bool read_cost_flag(const std::string& flag, ArgReader& reader, analysis::PipelineSpec& spec);

/// write_schedule_file(), and what the format leaves out (schedule_file_loss: DualPipe's F&B
/// pairs in PyTorch's CSV) as a warning of `command` on stderr.
void save_schedule(std::string_view command, const Schedule& schedule, const std::string& path,
                   const std::string& format = {});

/// Reads -s/-p/-m/-v/--group-size, the cost flags, --schedule-file, --save, the model flags
/// (--model, --gpu, --mb, ...) and --dp/-t into an analysis::PipelineSpec.
class PipelineFlags {
  public:
    /// `layout_without_model`: whether --dp and -t mean something without a model (SimGrid's
    /// layout) or only with one (the model's memory and throughput).
    explicit PipelineFlags(bool layout_without_model)
        : layout_without_model_(layout_without_model) {}

    /// Reads one of these flags; false if `flag` is none of them.
    bool read(const std::string& flag, ArgReader& reader);
    /// Sets the schedule as -s does (for commands that read their own schedule list).
    void set_schedule(const std::string& name);
    /// Checks the combination once every flag is read and loads --schedule-file.
    /// Throws UsageError naming what is missing or clashes.
    void finish();

    const analysis::PipelineSpec& spec() const { return spec_; }
    /// The files the flags name for the run to read: --schedule-file, and --model, --gpu and
    /// --calibration (a preset's name among them is no file, which check_output_files passes
    /// over).
    std::vector<std::string> input_files() const;
    /// --save's file; empty if not given.
    const std::string& save_file() const { return state_.save_file; }
    /// --save's file as it will be written: made (prepare_save) before any other output is
    /// written, so that a schedule its format cannot hold (DualPipe as CSV) leaves no file
    /// behind; written by write_save.
    struct PendingSave {
        std::string path, text;
        std::string loss;  ///< what the format leaves out (schedule_file_loss), or empty
    };
    /// Checks --save's file name as it will be written, before any work: an unknown
    /// extension, or none without `format_without_extension` (--format, which names the
    /// format of a file without an extension and of `-`, standard output).
    void check_save(const std::string& format_without_extension = {}) const;
    /// The memory --save's text takes per op (schedule_file_bytes_per_op), for the run's check
    /// before it starts; 0 without --save.
    double save_bytes_per_op() const;
    /// The schedule as --save will write it; nullopt without --save.
    std::optional<PendingSave> prepare_save(const Schedule& schedule,
                                            const std::string& format_without_extension = {}) const;
    /// Writes `pending` (if any) and warns, as `command`, of what its format leaves out.
    static void write_save(const std::optional<PendingSave>& pending, std::string_view command);

    /// The state the flag tables write into.
    struct State {
        analysis::PipelineSpec spec;
        analysis::ModelSpec model;
        std::string schedule_file, save_file;
        bool have_schedule = false, have_p = false, have_m = false, have_shape_flag = false;
        bool have_unit_costs = false, have_layout = false;
        bool model_any = false, have_model = false, have_gpu = false, have_mb = false;
        std::string first_model_flag;  ///< the first model option given, for the message
    };

    /// Reads one of the model flags (--model, --gpu, --mb, ...) or -t/--tp into `state`;
    /// false if `flag` is none of them (for commands that read no schedule flags).
    static bool read_model_flag(const std::string& flag, ArgReader& reader, State& state);
    /// The model the flags in `state` name, or nothing when no model flag was given. Throws
    /// UsageError when one of --model, --gpu and --mb is missing.
    static std::optional<analysis::ModelSpec> model_of(const State& state);

  private:
    bool layout_without_model_;
    State state_;
    analysis::PipelineSpec spec_;
};

/// save_schedule() in two steps: the file's text and what its format leaves out (reported as
/// a phase, schedules/phases.hpp: it takes seconds for millions of ops), then
/// PipelineFlags::write_save().
PipelineFlags::PendingSave prepare_schedule_save(const Schedule& schedule, const std::string& path,
                                                 const std::string& format = {});

}  // namespace pipesim::cli
