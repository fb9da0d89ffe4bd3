// pipesim: pipeline-parallel schedule analysis. Dispatches to one subcommand and maps
// errors to exit codes: 2 for bad usage or input, 1 for internal failures, 3 for a part this
// build lacks (a SimGrid engine plugin that cannot be loaded; no CUDA device or not a CUDA
// build, which calibrate and gpu-run report themselves). calibrate and
// gpu-run are handed to `pipesim-gpu` (cli/gpu_main.cpp), so this program needs no CUDA.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "fileio/files.hpp"
#include "schedules/heap.hpp"

namespace {

constexpr std::string_view usage = R"(usage: pipesim COMMAND [OPTIONS]

commands:
  list                          schedules, models, GPUs and clusters, with descriptions
  analyze -s NAME -p P -m M     replay a schedule with unit or given costs and report
          [-v V] [--group-size G] [--costs F,B,W | F,B,W:F,B,W:...] [--comm C]
          [--mem-w-ratio R] [--json] [--save FILE.json|.csv]
          [--timeline FILE.svg|.png|.pdf|.dot] [--trace FILE.json] [--gantt]
  analyze --schedule-file FILE  the same for a schedule file (.json or PyTorch .csv)
  simulate ... --cluster NAME   the same schedule flags on a SimGrid model of a GPU cluster
          [--dp D] [-t T] [--straggler GPU:K] [--bw-scale X] [--lat-scale X] [--json]
  compare -s A,B,C -p P -m M    several schedules on the same pipeline, one table with the
          speed-up over the first [--costs ... | --model ...] [--cluster NAME]
          [--json | --csv] [--html FILE.html]
  block BLOCK.json -m M         schedule from a building block: metrics, lifespan bound
          [--costs F,B,W] [--comm C] [--mem-w-ratio R] [--reorder | --fill] [--json]
  search -p P -m M --mem-limit X  lowest-bubble schedule within X activations per device
          [--costs F,B,W] [--comm C] [--mem-w-ratio R] [--json] [--save FILE]
  convert IN -o OUT             schedule files: pipesim JSON <-> PyTorch pipelining CSV
  render FILE -o OUT.svg        picture of a saved timeline or a schedule file (.png .pdf .dot)
  calibrate --model NAME --mb B -o CALIB.json   time a layer's kernels on a GPU [-t T]
  gpu-run -s NAME -p P -m M --model NAME --mb B run a schedule on GPUs, predicted vs measured
  sweep GRID.json -o OUT.csv    run a grid of configurations in worker processes, resumable
          [-j N] [--shard I/N|auto] [--progress auto|bar|lines|none]
  merge A.csv B.csv -o OUT.csv  join sweep shards [--grid GRID.json]
  pareto RESULTS.csv -o OUT.svg peak memory against throughput with the Pareto front

Run 'pipesim COMMAND --help' for a command's options, 'pipesim --version' for the version.

exit codes: 0 ok, 1 internal failure, 2 bad usage or input,
            3 no CUDA device or not a CUDA build (calibrate, gpu-run), or the
              SimGrid engine plugin cannot be loaded (simulate, --cluster)
)";

// The program that runs calibrate and gpu-run in CUDA builds: `pipesim-gpu` in the directory
// of this executable. Empty when there is none (a build without CUDA, or a copied binary).
std::string gpu_program() {
    std::array<char, 4096> self{};
    const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
    if (n <= 0) return {};
    std::string path(self.data(), static_cast<std::size_t>(n));
    path.resize(path.rfind('/') + 1);
    path += "pipesim-gpu";
    return ::access(path.c_str(), X_OK) == 0 ? path : std::string();
}

// Replaces this process by `pipesim-gpu COMMAND ARGS...`. Returns only when that is
// impossible; the caller then runs the command itself against the stand-in without CUDA.
void exec_gpu_program(int argc, char** argv) {
    const std::string program = gpu_program();
    if (program.empty()) return;
    std::vector<char*> gpu_argv(argv, argv + argc);
    gpu_argv[0] = const_cast<char*>(program.c_str());
    gpu_argv.push_back(nullptr);
    ::execv(program.c_str(), gpu_argv.data());
}

// The subcommand called `command`, or nullptr.
pipesim::cli::Command find_command(const std::string& command) {
    using namespace pipesim::cli;
    static const std::array<std::pair<std::string_view, Command>, 13> commands{{
        {"list", run_list},
        {"analyze", run_analyze},
        {"simulate", run_simulate},
        {"compare", run_compare},
        {"convert", run_convert},
        {"block", run_block},
        {"search", run_search},
        {"render", run_render},
        {"calibrate", run_calibrate},
        {"gpu-run", run_gpu_run},
        {"sweep", run_sweep},
        {"merge", run_merge},
        {"pareto", run_pareto},
    }};
    for (const auto& [name, run] : commands)
        if (name == command) return run;
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();
    if (argc < 2) {
        fmt::print(stderr, "pipesim: missing command (see 'pipesim --help')\n");
        return 2;
    }
    const std::string command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        fmt::print("{}", usage);
        return 0;
    }
    if (command == "--version") {
        fmt::print("pipesim {}\n", PIPESIM_VERSION);
        return 0;
    }
    const pipesim::cli::Command run = find_command(command);
    if (!run) {
        fmt::print(stderr, "pipesim: unknown command {} (see 'pipesim --help')\n",
                   pipesim::fileio::quote_excerpt(command, 80));
        return 2;
    }
    if (command == "calibrate" || command == "gpu-run") exec_gpu_program(argc, argv);
    pipesim::fileio::guard_inputs();                   // no output replaces a file the command read
    pipesim::fileio::remove_temporaries_on_signals();  // Ctrl-C leaves no half-written file
    return pipesim::cli::run_command(command, run, std::vector<std::string>(argv + 2, argv + argc));
}
