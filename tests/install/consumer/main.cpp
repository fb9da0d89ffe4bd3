// Runs 1F1B with p = 4, m = 8 and unit costs through the installed analysis library and prints
// its makespan and bubble rate, for the install test to check against the closed form.
#include <cstdio>

#include "analysis/run.hpp"

int main() {
    pipesim::analysis::PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.generator.devices = 4;
    spec.generator.microbatches = 8;
    const pipesim::analysis::Analysis result = pipesim::analysis::run(spec);
    std::printf("makespan %.6g bubble %.6g\n", result.metrics.makespan, result.metrics.bubble_rate);
    return 0;
}
