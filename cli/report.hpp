#pragma once
// Turns an analysis into the readable table or the JSON object of the CLI contract.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analysis/run.hpp"

namespace pipesim::cli {

/// The `--json` object: schedule, stages, microbatches, chunks, makespan, bubble_rate,
/// peak_activation (per device), peak_activation_max, throughput, and per-device details.
nlohmann::ordered_json analysis_json(const analysis::Analysis& result,
                                     const analysis::PipelineSpec& spec);

/// Prints each of the analysis' warnings on stderr as "pipesim COMMAND: warning: ...".
void print_warnings(const analysis::Analysis& result, std::string_view command);

/// A readable summary with a per-device table.
std::string analysis_table(const analysis::Analysis& result, const analysis::PipelineSpec& spec);

}  // namespace pipesim::cli
