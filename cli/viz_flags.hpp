#pragma once
// The picture and trace flags shared by the commands that produce a timeline (analyze,
// render, simulate, gpu-run): parsed here into viz::VizOutputs, written by viz::write_outputs.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/run.hpp"
#include "args.hpp"
#include "viz/outputs.hpp"

namespace pipesim::cli {

/// Help lines for the flags read_viz_flag() accepts.
extern const std::string viz_flags_help;

/// Reads one of --timeline FILE, --dep-graph FILE, --trace FILE, --save-timeline FILE,
/// --format NAME, --gantt, --transfers, --critical-path, --no-memory into `outputs`; false if
/// `flag` is none of them.
bool read_viz_flag(const std::string& flag, ArgReader& reader, viz::VizOutputs& outputs);

/// Checks the outputs once every flag is read: options of the timeline picture (--transfers,
/// --critical-path, --no-memory) need the picture (`picture_flag` names the flag that asks for
/// it: --timeline, or render's -o), and viz::check_outputs(). Throws UsageError or
/// std::invalid_argument with one line.
void check_viz_flags(const viz::VizOutputs& outputs, std::string_view picture_flag = "--timeline");

/// What analyze and simulate check once their flags are read: --gantt not with --json,
/// check_output_formats(), check_viz_flags(), and every file to write (the pictures and
/// `save_file`, --save's) through check_output_files(); at most one of them `-`, and then
/// neither --json nor --gantt. Returns whether the command's report may go to standard
/// output: false when a file is written there. Throws UsageError or std::invalid_argument
/// with one line.
/// `inputs`: the files the run will read (a model, GPU, calibration, schedule or cluster file;
/// names that are no file are passed over), refused as outputs before they are read.
bool check_run_outputs(const viz::VizOutputs& outputs, bool json, const std::string& save_file,
                       const std::vector<std::string>& inputs = {});

/// Throws UsageError when one of `files` is `-` beside --json or --gantt, which print to
/// standard output too. Returns whether none of them is `-`.
bool check_standard_output(const std::vector<std::pair<std::string_view, std::string>>& files,
                           bool json, bool gantt);

/// --format: every picture (--timeline, --dep-graph) or schedule file (`save_file`) written to
/// `-` or to a name without an extension needs it, and it must name a format that output can
/// take; given when no output needs it, it is refused (it would be ignored).
void check_output_formats(const viz::VizOutputs& outputs, const std::string& save_file = {});

/// The files `outputs` asks for, with the flag that names each (for check_output_files).
std::vector<std::pair<std::string_view, std::string>> output_files(const viz::VizOutputs& outputs);

/// Width for --gantt: $COLUMNS if set, else the terminal's width on stdout, else 100; at
/// most 1,000.
int terminal_width();

/// The analytic replay recording what `outputs` (and an HTML report) read: every op for any
/// picture, trace, saved timeline or Gantt chart; transfers for traces, saved timelines and
/// timeline pictures that draw them or the critical path.
analysis::AnalyticEngine analytic_engine_for(const viz::VizOutputs& outputs, bool html = false);

/// What a run's pictures say of it beyond the timeline: memory in bytes (a model's), and its
/// iteration time or post-validation period for the title.
void describe_run(viz::TimelinePictureOptions& picture, const analysis::Analysis& result);

}  // namespace pipesim::cli
