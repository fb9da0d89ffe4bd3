#pragma once
// Predicted (e.g. sim/predict.hpp's replay) versus measured (real GPUs) timelines of the same
// schedule.

#include <string>
#include <vector>

#include "schedules/op.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::calibration {

/// Op-time error of one pass kind: over its ops, the median of (measured − predicted) /
/// predicted duration (signed: > 0 means the GPU was slower) and of its absolute value.
struct PassError {
    Pass pass = Pass::F;
    int ops = 0;
    double median_error = 0;
    double median_abs_error = 0;
};

struct RunComparison {
    double predicted_makespan = 0;
    double measured_makespan = 0;
    double makespan_error = 0;  ///< (measured − predicted) / predicted
    double predicted_bubble = 0;
    double measured_bubble = 0;
    std::vector<PassError> passes;  ///< F, B, W, BW: those that occur, in that order
};

/// Compares two timelines of the same schedule (same devices, microbatches and ops, matched
/// by op; order and times may differ). Bubble rates are the metrics' (max over devices).
/// Throws std::invalid_argument naming the first op one timeline has and the other lacks, or
/// a predicted op of zero duration.
RunComparison compare_timelines(const Timeline& predicted, const Timeline& measured);

/// Median of `values` (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> values);

/// A few lines for the terminal: makespan and bubble side by side, then one line per pass.
std::string comparison_table(const RunComparison& comparison);

}  // namespace pipesim::calibration
