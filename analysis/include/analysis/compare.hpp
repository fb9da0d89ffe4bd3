#pragma once
// Several schedules on the same pipeline, side by side (`pipesim compare`, pipesim.compare in
// Python): the shape each schedule runs with, one row of figures per schedule, the JSON.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run.hpp"
#include "analysis/time_budget.hpp"
#include "schedules/registry.hpp"

namespace pipesim::analysis {

/// One schedule's figures in a comparison.
struct CompareRow {
    std::string schedule;
    int chunks = 0;
    double makespan = 0;  ///< or the iteration time with a model
    double bubble_rate = 0;
    /// Whole-pipeline efficiency: busy time over all devices / (p × makespan), or × the period
    /// with post-validation (the time the row shows).
    double efficiency = 0;
    double peak = 0;        ///< activation units, or bytes (weights + activations) with a model
    double throughput = 0;  ///< microbatches per time unit, or samples/s with a model
    double tokens_per_second = 0;  ///< with a model (else 0)
    double mfu = 0;                ///< with a model: model FLOPs utilization (else 0)
    double speedup = 1;            ///< the first row's makespan / this row's
    double speedup_1f1b = 0;       ///< over 1F1B with the same inputs (0: not run)
    double lifespan_max = 0;       ///< longest activation lifespan (F start to W end)
    /// With a model: where all devices' step time goes (time_budget.hpp, step_shares()).
    std::vector<StepShare> step_shares;
};

/// The schedules compared, in the order given, with what they share.
struct Comparison {
    int devices = 0;
    int microbatches = 0;
    std::string time_unit;  ///< "unit", or "s" with a model or cluster
    bool model = false;     ///< costs and memory came from a model
    /// Every run with optimizer post-validation: without a model the time column is the
    /// period of repeated iterations ("period") instead of the makespan.
    bool post_validation = false;
    std::string engine = "analytic";  ///< "analytic" or "simgrid"
    std::string cluster;              ///< with SimGrid, the cluster's name
    std::string command;              ///< the command line that made it ("" if none)
    /// What it ran on, as the HTML report's Inputs list them (label, value): the costs or
    /// model, the engine, the latency or cluster, the layout.
    std::vector<std::pair<std::string, std::string>> inputs;
    std::vector<CompareRow> rows;
    /// Every schedule's warnings (analysis::run_warnings), in order, each as "NAME: warning";
    /// one that several schedules give alike once, as "A, B: warning" (add_schedule_warning).
    std::vector<std::string> warnings;
    /// The text of each of `warnings` without its schedules' names.
    std::vector<std::string> warning_texts;
};

/// Adds `schedule`'s `warning` to `warnings` as "NAME: warning", or, where another schedule
/// gave the same text (`texts`, one per entry of `warnings`), its name to that entry
/// ("A, B: warning"): at a large dp every schedule warned alike of the gradient reduction.
void add_schedule_warning(std::vector<std::string>& warnings, std::vector<std::string>& texts,
                          const std::string& schedule, const std::string& warning);

/// The shape schedule `name` runs with in a comparison: `shape`'s chunks and group size where
/// the schedule takes them, else its own defaults (0).
GeneratorOptions comparison_shape(const std::string& name, GeneratorOptions shape);

/// Throws std::invalid_argument when `spec` asks for a chunk count, a group size or the
/// exchange once per step (interleaved-1f1b's) that none of `names` takes: each would run with
/// its own, and the flag would change nothing.
void check_comparison_shape(const PipelineSpec& spec, const std::vector<std::string>& names);

/// The message of `name`'s run failing with `reason`: "NAME: REASON", a name longer than 40
/// bytes quoted and cut short, so that the reason stays within the line.
std::string schedule_failed(const std::string& name, std::string_view reason);

/// `spec` with schedule `name` in it as a comparison runs it: its shape by comparison_shape(),
/// and the exchange once per step (PipelineSpec::step_exchange) only where the schedule takes
/// it (interleaved-1f1b).
PipelineSpec comparison_spec(const std::string& name, const PipelineSpec& spec);

/// The row of `result` shown as `name`, its speed-up 1 (set by a comparison).
CompareRow compare_row(const std::string& name, const Analysis& result);

/// What a comparison takes of one schedule's run: its row, the facts every row shares, and
/// the run's warnings (analysis::run_warnings).
struct ComparedRun {
    CompareRow row;
    int devices = 0;
    int microbatches = 0;
    std::string unit;  ///< of the run's times
    bool model = false;
    bool post_validation = false;
    std::vector<std::string> warnings;
};

/// The run `result` of schedule `name`, as a comparison takes it.
ComparedRun compared_run(const std::string& name, const Analysis& result);

/// A ComparedRun as JSON text, to cross the pipe from a child process, and back (`name` is
/// the row's schedule). Every double goes through exactly.
nlohmann::json compared_run_json(const ComparedRun& run);
ComparedRun parse_compared_run(const std::string& name, const nlohmann::json& j);

/// Appends `run` as a row of `comparison`; the first row added sets the shared fields and is
/// the reference of every speed-up.
void add_to_comparison(Comparison& comparison, ComparedRun run);

/// Runs each schedule of `names` with `run_one` (its name and comparison_spec() → its
/// ComparedRun) into one Comparison (add_to_comparison), after check_comparison_shape(),
/// naming the schedule in the error of the first that cannot run.
Comparison compare_each(
    const PipelineSpec& spec, const std::vector<std::string>& names,
    const std::function<ComparedRun(const std::string&, const PipelineSpec&)>& run_one);

/// Runs each of `names` on `spec`'s pipeline (its schedule replaced, its shape adapted with
/// comparison_shape()) with the analytic replay, in order, with optimizer post-validation if
/// asked (AnalyticEngine::post_validation). Throws std::invalid_argument "NAME: what was
/// wrong" for the first schedule that cannot run.
Comparison compare(const PipelineSpec& spec, const std::vector<std::string>& names,
                   bool post_validation = false);

/// compare() on the SimGrid model of a cluster (`engine`, its post-validation included): each
/// schedule in a child process (SimGrid runs one simulation per process), in order. Throws as
/// compare(), std::runtime_error when a child dies or `interrupted` (asked while waiting, as
/// run_in_child does) says so.
Comparison compare_on_cluster(const PipelineSpec& spec, const std::vector<std::string>& names,
                              const SimGridEngine& engine,
                              const std::function<bool()>& interrupted = {});

/// The `pipesim compare --json` object: devices, microbatches, time_unit, engine (and cluster
/// with SimGrid) and one entry per
/// schedule (makespan or iteration_time, bubble_rate, efficiency, peak_activation_max or
/// peak_memory_bytes, throughput or samples_per_second, speedup, speedup_1f1b (null where
/// 1F1B could not run), lifespan_max,
/// and with a model step_shares: where the step goes, each part's share by its key), then
/// the warnings (Comparison::warnings).
nlohmann::ordered_json comparison_json(const Comparison& comparison);

}  // namespace pipesim::analysis
