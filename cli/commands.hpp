#pragma once
// The subcommands. Each takes its arguments (after the subcommand name) and returns the
// process exit code; errors are thrown (std::invalid_argument → 2, a SimGrid engine that
// cannot be loaded → 3, others → 1, by run_command()).

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/memory_budget.hpp"
#include "fileio/parse_error.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::cli {

int run_list(const std::vector<std::string>& args);
int run_analyze(const std::vector<std::string>& args);
int run_simulate(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);
int run_convert(const std::vector<std::string>& args);
int run_block(const std::vector<std::string>& args);
int run_search(const std::vector<std::string>& args);
int run_render(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
int run_gpu_run(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_merge(const std::vector<std::string>& args);
int run_pareto(const std::vector<std::string>& args);

/// A subcommand's entry point.
using Command = int (*)(const std::vector<std::string>& args);

/// Runs `run(args)` for the subcommand called `name` and returns its exit code; what it
/// throws becomes one line "pipesim NAME: ..." on stderr (fileio::printable_message) and exit
/// code 2
/// (std::invalid_argument: bad usage or input; std::bad_alloc: a run too large for the
/// memory; std::system_error and a failed flush of standard output: what the system refused), 3
/// (simgrid::EngineUnavailable: a part this installation lacks) or 1 (anything else: an internal
/// failure).
inline int run_command(const std::string& name, Command run, const std::vector<std::string>& args) {
    try {
        // A command's output files are replaced together once it has succeeded, or not at all
        // (a later output that fails leaves the earlier ones as they were). Not a sweep's: its
        // results file grows row by row, so that a stopped sweep keeps what it has run.
        std::optional<fileio::OutputGroup> outputs;
        if (name != "sweep") outputs.emplace();
        const int code = run(args);
        if (outputs && code == 0) outputs->commit();
        // What is still buffered for standard output (a full disk, a closed pipe) fails here,
        // not at exit where no one would hear of it.
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            fmt::print(stderr, "pipesim {}: cannot write standard output: {}\n", name,
                       std::strerror(errno));
            return 2;
        }
        return code;
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "pipesim {}: {}\n", name, fileio::printable_message(e.what()));
        return 2;
    } catch (const std::bad_alloc&) {
        // Runs are refused up front when their estimate does not fit; this is the fallback.
        fmt::print(stderr, "pipesim {}: {}\n", name, fileio::out_of_memory_message);
        return 2;
    } catch (const simgrid::EngineUnavailable& e) {
        fmt::print(stderr, "pipesim {}: {}\n", name, fileio::printable_message(e.what()));
        return 3;
    } catch (const std::system_error& e) {
        // The system refused something (writing standard output to a full disk): not a fault
        // of pipesim's, and nothing the input can change but where it goes. fmt's print says
        // "cannot write to file" without the file: standard output is the one its error flag
        // is on.
        if (std::ferror(stdout))
            fmt::print(stderr, "pipesim {}: cannot write standard output: {}\n", name,
                       std::strerror(e.code().value()));
        else
            fmt::print(stderr, "pipesim {}: {}\n", name, fileio::printable_message(e.what()));
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipesim {}: internal error: {}\n", name,
                   fileio::printable_message(e.what()));
        return 1;
    }
}

}  // namespace pipesim::cli
