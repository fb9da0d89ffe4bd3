#pragma once
// The subcommands. Each takes its arguments (after the subcommand name) and returns the
// process exit code; errors are thrown (std::invalid_argument → 2, others → 1 in main()).

#include <string>
#include <vector>

namespace pipesim::cli {

int run_list(const std::vector<std::string>& args);
int run_analyze(const std::vector<std::string>& args);
int run_simulate(const std::vector<std::string>& args);
int run_convert(const std::vector<std::string>& args);
int run_block(const std::vector<std::string>& args);
int run_search(const std::vector<std::string>& args);
int run_render(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_gpu_run(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_merge(const std::vector<std::string>& args);
int run_pareto(const std::vector<std::string>& args);

}  // namespace pipesim::cli
