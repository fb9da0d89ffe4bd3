#pragma once
// `--html FILE` of analyze, simulate, compare and sweep: the flag, the summary row every
// command's table shares, and the report's inputs, turned into a viz::HtmlReport.

#include <string>
#include <string_view>
#include <vector>

#include "analysis/run.hpp"
#include "args.hpp"
#include "viz/html_report.hpp"

namespace pipesim::cli {

/// Help line of --html.
extern const std::string html_flag_help;

/// Reads --html FILE into `path`; false if `flag` is another flag.
bool read_html_flag(const std::string& flag, ArgReader& reader, std::string& path);

/// One schedule's headline figures.
struct SummaryRow {
    std::string schedule;
    int chunks = 0;
    double makespan = 0;  ///< the iteration time (with SimGrid: until the gradient all-reduce)
    double bubble_rate = 0;
    double efficiency = 0;  ///< busy time of all devices / (devices × makespan of the ops)
    double peak = 0;        ///< activation units, or bytes (weights + activations) with a model
    double throughput = 0;  ///< microbatches per time unit, or samples/s with a model
    double speedup = 1;     ///< over the first of several rows
};

/// The row of an analysis shown as `name`.
SummaryRow summary_row(const std::string& name, const analysis::Analysis& a);

/// The rows as the report's table: schedule, v, makespan (iteration time with a model),
/// bubble, efficiency, peak, throughput and, with `speedup`, the speed-up column.
viz::HtmlTable summary_table(const std::vector<SummaryRow>& rows, bool model,
                             const std::string& unit, bool speedup);

/// A report titled "pipesim COMMAND" with the command line and the spec's inputs (shape,
/// costs or model, latency or cluster, layout); `cluster` is empty for the analytic replay.
viz::HtmlReport html_report_for(std::string_view command, const std::vector<std::string>& args,
                                const analysis::PipelineSpec& spec, const std::string& cluster);

/// The report's picture of an analysis whose timeline recorded every op: memory in GiB with a
/// model, in M_B without.
viz::HtmlSchedule html_schedule(std::string name, const analysis::Analysis& a);

}  // namespace pipesim::cli
