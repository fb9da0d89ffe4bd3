#pragma once
// The `--html FILE` flag of analyze, simulate and compare: its help line, reading it, and
// checking it against the command's other outputs before any work.

#include <string>

#include "args.hpp"
#include "viz/outputs.hpp"

namespace pipesim::cli {

/// Help line of --html.
extern const std::string html_flag_help;

/// Reads --html FILE into `path`; false if `flag` is another flag.
bool read_html_flag(const std::string& flag, ArgReader& reader, std::string& path);

/// analyze's and simulate's checks of --html before any work: the report can be written
/// (viz::check_html_report) and names no file another output (`outputs`, --save's
/// `save_file`) names, nor one of the run's `inputs`. Does nothing when `path` is empty.
void check_html_flag(const std::string& path, const viz::VizOutputs& outputs,
                     const std::string& save_file, const std::vector<std::string>& inputs = {});

}  // namespace pipesim::cli
