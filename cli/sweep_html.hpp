#pragma once
// `pipesim sweep --html FILE`: the results as a report.

#include <string>
#include <vector>

namespace pipesim::cli {

/// How many of the best rows the sweep report shows with their timelines.
inline constexpr std::size_t sweep_html_timelines = 3;

/// Writes the report of the results file `results` (every row in a table, at most 2000 of
/// them) with the timelines of the best sweep_html_timelines ok rows (highest samples/s when
/// every ok row has a model, else highest microbatches per time unit), each run again with
/// its engine (SimGrid in a child process). `args` is the sweep's command line. Throws
/// std::invalid_argument like write_html_report and for rows that no longer run.
void write_sweep_html(const std::string& path, const std::vector<std::string>& args,
                      const std::string& grid_file, const std::string& results);

}  // namespace pipesim::cli
