#pragma once
// The HTML report of analyze, simulate, compare and sweep: the summary row every
// command's table shares, and the report's inputs, turned into a viz::HtmlReport.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/compare.hpp"
#include "analysis/run.hpp"
#include "analysis/time_budget.hpp"
#include "report.hpp"
#include "viz/html_report.hpp"

namespace pipesim::cli {

/// One schedule's headline figures.
using SummaryRow = analysis::CompareRow;

/// The row of an analysis shown as `name`.
SummaryRow summary_row(const std::string& name, const analysis::Analysis& a);

/// The name of a summary's time column: "period" with post-validation, else "iteration" with
/// a model, else "makespan" (analysis::time_field() is the JSON and CSV key).
const char* time_column_name(bool model, bool period);

/// The rows as the report's table: schedule, v, makespan (iteration time with a model; with
/// `period`, post-validation's period), bubble, efficiency, peak, throughput and, with
/// `speedup`, the speed-up column.
viz::HtmlTable summary_table(const std::vector<SummaryRow>& rows, bool model,
                             const std::string& unit, bool speedup, bool period = false);

/// A "vs 1F1B" cell: "1.294x", or "—" where 1F1B could not run with the inputs (0).
std::string speedup_1f1b_cell(double speedup_1f1b);

/// "pipesim COMMAND ARGS..." with each argument quoted as a POSIX shell reads it back.
std::string command_line(std::string_view command, const std::vector<std::string>& args);

/// What a run ran on, as (label, value) lines: the shape, costs or model, latency or cluster,
/// layout; `cluster` is empty for the analytic replay. `chunks_run`: the v of the one schedule
/// run, given where the spec leaves v to it (0: none, or several schedules). The HTML report's
/// Inputs and compare's JSON "inputs".
std::vector<std::pair<std::string, std::string>> run_inputs(const analysis::PipelineSpec& spec,
                                                            const std::string& cluster,
                                                            int chunks_run = 0);

/// A report titled "pipesim COMMAND" with `call` (what ran it: command_line(), or Python's
/// call) and run_inputs().
viz::HtmlReport html_report_for(std::string_view command, std::string call,
                                const analysis::PipelineSpec& spec, const std::string& cluster,
                                int chunks_run = 0);

/// The report's picture of an analysis whose timeline recorded every op: memory in GiB with a
/// model, in M_B without.
viz::HtmlSchedule html_schedule(std::string name, const analysis::Analysis& a);

/// What a report shows of one run: its summary row, warnings and, when asked, its picture.
struct ReportRun : analysis::ComparedRun {
    std::optional<viz::HtmlSchedule> picture;
};

/// The "Where the step goes" section: `cells` as its caption (their title), table and notes,
/// with `bars` above the table.
viz::HtmlSection time_budget_section(const TableCells& cells, viz::HtmlBars bars);

/// Where the step goes as bars: one per device ("device D") and, with several, one for all
/// of them; each part's share of the step (analysis::time_budget()).
viz::HtmlBars time_budget_bars(const analysis::TimeBudget& budget);

/// Where each compared schedule's step goes (SummaryRow::step_shares) as one bar per
/// schedule; no bars without a model.
viz::HtmlBars step_shares_bars(const std::vector<SummaryRow>& rows);

/// The SimGrid engine on `cluster` as compare and sweep run it (no transfers recorded).
analysis::SimGridEngine simgrid_engine(const simgrid::ClusterSpec& cluster);

/// Runs `spec` on `engine` as `name`; with `picture`, every op is recorded for the picture.
/// The analytic replay runs in this process, SimGrid in a child (it runs once per process).
/// Throws like analysis::run.
ReportRun run_for_report(const std::string& name, const analysis::PipelineSpec& spec,
                         const analysis::Engine& engine, bool picture,
                         const std::function<bool()>& interrupted = {});

/// compare's report of `rows` (each schedule's speed-up over the first filled in) with each
/// schedule's picture in `pictures`, in the same order: the summary table (times in `unit`,
/// post-validation's period with `period`), the timelines and, with a `model`, where each
/// schedule's step goes. `call`, `spec` and `cluster` as html_report_for's.
viz::HtmlReport compare_html_report(std::string call, const analysis::PipelineSpec& spec,
                                    const std::string& cluster, const std::vector<SummaryRow>& rows,
                                    bool model, const std::string& unit, bool period,
                                    std::vector<viz::HtmlSchedule> pictures);

/// A comparison run for its report: what analysis::compare() gives, and each schedule's
/// picture.
struct ComparisonReport {
    analysis::Comparison comparison;
    std::vector<viz::HtmlSchedule> pictures;
};

/// Runs each of `names` on `spec` as compare does (analysis::comparison_spec(); on SimGrid
/// each in a child, where `interrupted` is polled as in analysis::run_in_child) and records
/// every op for the pictures. Throws like analysis::compare(), the error of a schedule that
/// cannot run prefixed with its name.
ComparisonReport compare_for_report(const analysis::PipelineSpec& spec,
                                    const std::vector<std::string>& names,
                                    const analysis::Engine& engine,
                                    const std::function<bool()>& interrupted = {});

/// Refuses, before anything runs, a timeline picture or HTML report (`picture`) of more ops
/// than `max_ops` for certain: the schedule file's ops, or an F and a backward for every
/// microbatch on every device (p·m·2 at least, whatever the schedule). A run of 13 schedules
/// at p = 128, m = 512 was refused only after 8 s and 450 MB of work.
void check_picture_ops(const analysis::PipelineSpec& spec, bool picture, std::size_t max_ops);

/// analyze's and simulate's report of one analysis, as the HTML text to write: its summary
/// row, its timeline and memory, the inputs (with the cluster `a` ran on, if any, as its name
/// and description).
std::string single_html(std::string_view command, std::string call,
                        const analysis::PipelineSpec& spec, const analysis::Analysis& a);

}  // namespace pipesim::cli
