// pipesim-gpu: the CUDA side of pipesim, calibrate and gpu-run. `pipesim calibrate ...` and
// `pipesim gpu-run ...` run this program (it lies next to `pipesim` in CUDA builds), so only
// this executable loads the CUDA libraries. Same flags, outputs and exit codes as through
// `pipesim`; run directly, it takes the same command line after the program name.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"

int main(int argc, char** argv) {
    const std::string command = argc >= 2 ? argv[1] : "";
    const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
    if (command == "calibrate")
        return pipesim::cli::run_command(command, pipesim::cli::run_calibrate, args);
    if (command == "gpu-run")
        return pipesim::cli::run_command(command, pipesim::cli::run_gpu_run, args);
    fmt::print(stderr,
               "usage: pipesim-gpu calibrate|gpu-run [OPTIONS] (the CUDA side of 'pipesim "
               "calibrate' and 'pipesim gpu-run'; see 'pipesim --help')\n");
    return 2;
}
