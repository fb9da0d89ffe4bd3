#pragma once
// The Pareto front of a sweep: the configurations no other one beats on both of two results
// columns, e.g. peak memory and throughput (`pipesim pareto` draws it with viz).

#include <string>
#include <vector>

#include "sweep/results.hpp"

namespace pipesim::sweep {

/// A plotted quantity: a results column.
enum class Metric {
    peak_memory,      ///< bytes (model runs)
    peak_activation,  ///< activation units or bytes
    throughput,       ///< microbatches per time unit
    samples_per_gpu,  ///< samples per second per GPU (model runs)
    bubble_rate,
    makespan,
};

/// Parses a column name ("peak_memory", "throughput", ...). Throws std::invalid_argument.
Metric parse_metric(const std::string& name);
const char* metric_name(Metric metric);
/// Whether larger is better (throughput, samples per GPU).
bool higher_is_better(Metric metric);
double metric_value(const Result& result, Metric metric);

struct ParetoOptions {
    /// Each column is ranked its own way (higher_is_better): throughput as x is maximized.
    Metric x = Metric::peak_activation;
    Metric y = Metric::throughput;
    /// Values this close (relative: |a − b| ≤ tolerance · max(|a|, |b|)) count as equal, so
    /// that float noise (78.99999999999996 against 79) ranks no row above another. Precisely:
    /// each column's values, sorted, form runs within `tolerance` of the run's first value,
    /// and every value of a run is compared as that first value.
    double tolerance = 1e-9;
};

/// Indices (into `rows`) of the Pareto-optimal rows among the `ok` ones: those for which no
/// other ok row has an x no worse and a y better, or an x better and a y no worse (values
/// compared with the tolerance). Rows that tie on both are all kept. Sorted from the best x
/// to the worst, ties by index.
std::vector<std::size_t> pareto_front(const std::vector<Result>& rows,
                                      const ParetoOptions& options);

}  // namespace pipesim::sweep
