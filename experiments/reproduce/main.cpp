// reproduce: regenerates the reports of experiments/<name>/ (see docs/experiments.md).
//   reproduce [--root DIR] [-j N] [NAME...]     (no NAME: all of them)
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report.hpp"
#include "schedules/heap.hpp"

namespace {

struct Reproduction {
    const char* name;
    int (*run)(const pipesim::reproduce::Context&);
};

constexpr Reproduction reproductions[] = {
    {"zero-bubble", pipesim::reproduce::zero_bubble},
    {"controllable-memory", pipesim::reproduce::controllable_memory},
    {"megatron-interleaved", pipesim::reproduce::megatron_interleaved},
    {"dualpipe", pipesim::reproduce::dualpipe},
    {"throughput", pipesim::reproduce::throughput},
    {"fidelity", pipesim::reproduce::fidelity_report},
};

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();
    std::string root = PIPESIM_SOURCE_DIR;
    int workers = 2;
    std::vector<std::string> names;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--root" && i + 1 < argc) {
            root = argv[++i];
        } else if (arg == "-j" && i + 1 < argc) {
            workers = std::max(1, std::atoi(argv[++i]));
        } else if (!arg.empty() && arg[0] == '-') {
            fmt::print(stderr, "usage: reproduce [--root DIR] [-j N] [NAME...]\n");
            return 2;
        } else {
            names.push_back(arg);
        }
    }
    int failures = 0;
    for (const Reproduction& r : reproductions) {
        if (!names.empty() && std::find(names.begin(), names.end(), r.name) == names.end())
            continue;
        try {
            failures += r.run({root + "/experiments/" + r.name, workers});
        } catch (const std::exception& e) {
            fmt::print(stderr, "reproduce {}: {}\n", r.name, e.what());
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
