#pragma once
// An Analysis as the JSON object of the command-line contract (`pipesim analyze --json`,
// `pipesim simulate --json`), shared by every front end that reports one (CLI, Python).

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run.hpp"

namespace pipesim::analysis {

/// `j` as JSON text (`indent` as nlohmann's dump), each byte that is not UTF-8 as U+FFFD
/// rather than an exception: names and paths taken from the file system may hold any byte.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

/// The `--json` object: schedule, stages, microbatches, chunks, makespan, bubble_rate,
/// peak_activation (per device), peak_activation_max, throughput, per-device details, the
/// model's figures when a model gave the costs, and the cluster's (engine, cluster, dp, tp,
/// gpus, layout_order, iteration_time, grad_reduce_time, ...) after a SimGrid run.
nlohmann::ordered_json analysis_json(const Analysis& result, const PipelineSpec& spec);

/// The gradient all-reduce's algorithm after a SimGrid run: "ring" or "tree" when every
/// device used it, else each with its devices ("tree on devices 0, 1; ring on 2, 3"); "" when
/// there was no gradient reduction.
std::string grad_reduce_algorithm(const simgrid::SimResult& result);

/// One line per device whose weights, optimizer state and peak activations exceed its GPU.
std::vector<std::string> memory_warnings(const ModelAnalysis& model);

/// `need` and `limit` (bytes, need > limit) as "NEED UNIT" and "LIMIT UNIT" texts, each in
/// GiB, or in MiB, KiB or bytes where it is under 1 GiB, with the same number of
/// decimals: one, or up to three where one would print them equal ("needs 79.6 GiB, more than
/// 79.6 GiB" for 79.648 against an H100's 79.647).
std::pair<std::string, std::string> memory_over(double need, double limit);

/// Every warning of a run: the analysis' own (Analysis::warnings), then with a model its
/// memory_warnings(). What --json lists and compare prints.
std::vector<std::string> run_warnings(const Analysis& result);

}  // namespace pipesim::analysis
