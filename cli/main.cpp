// pipesim: pipeline-parallel schedule analysis. Dispatches to one subcommand and maps
// errors to exit codes: 2 for bad usage or input, 1 for internal failures (3, no CUDA
// device or not a CUDA build, comes from calibrate and gpu-run themselves).
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"

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
  block BLOCK.json -m M         schedule from a building block: metrics, lifespan bound
          [--costs F,B,W] [--comm C] [--mem-w-ratio R] [--reorder | --fill] [--json]
  search -p P -m M --mem-limit X  lowest-bubble schedule within X activations per device
          [--costs F,B,W] [--comm C] [--mem-w-ratio R] [--json] [--save FILE]
  convert IN -o OUT             schedule files: pipesim JSON <-> PyTorch pipelining CSV
  render FILE -o OUT.svg        picture of a saved timeline or a schedule file (.png .pdf .dot)
  calibrate --model NAME --mb B -o CALIB.json   time a layer's kernels on a GPU [-t T]
  gpu-run -s NAME -p P -m M --model NAME --mb B run a schedule on GPUs, predicted vs measured
  sweep GRID.json -o OUT.csv    run a grid of configurations in worker processes, resumable
          [-j N] [--shard I/N] [--progress auto|bar|lines|none]
  merge A.csv B.csv -o OUT.csv  join sweep shards [--grid GRID.json]
  pareto RESULTS.csv -o OUT.svg peak memory against throughput with the Pareto front

Run 'pipesim COMMAND --help' for a command's options.

exit codes: 0 ok, 1 internal failure, 2 bad usage or input,
            3 no CUDA device or not a CUDA build (calibrate, gpu-run)
)";

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fmt::print(stderr, "pipesim: missing command (see 'pipesim --help')\n");
        return 2;
    }
    const std::string command = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
        if (command == "list") return pipesim::cli::run_list(args);
        if (command == "analyze") return pipesim::cli::run_analyze(args);
        if (command == "simulate") return pipesim::cli::run_simulate(args);
        if (command == "convert") return pipesim::cli::run_convert(args);
        if (command == "block") return pipesim::cli::run_block(args);
        if (command == "search") return pipesim::cli::run_search(args);
        if (command == "render") return pipesim::cli::run_render(args);
        if (command == "calibrate") return pipesim::cli::run_calibrate(args);
        if (command == "gpu-run") return pipesim::cli::run_gpu_run(args);
        if (command == "sweep") return pipesim::cli::run_sweep(args);
        if (command == "merge") return pipesim::cli::run_merge(args);
        if (command == "pareto") return pipesim::cli::run_pareto(args);
        if (command == "--help" || command == "-h" || command == "help") {
            fmt::print("{}", usage);
            return 0;
        }
        fmt::print(stderr, "pipesim: unknown command '{}' (see 'pipesim --help')\n", command);
        return 2;
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "pipesim {}: {}\n", command, e.what());
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "pipesim {}: internal error: {}\n", command, e.what());
        return 1;
    }
}
