#pragma once
// Round tick marks for a picture's axes (the timeline's time axis, scatter plots).

#include <vector>

namespace pipesim::viz {

/// A round tick spacing (1, 2 or 5 × 10^k) giving about `ticks` ticks over `span`. For any
/// positive finite `span` the step is positive, finite and at least span / ticks (rounded), so
/// an axis never gets more than about `ticks` + 1 marks; when no round number fits (spans
/// near the smallest or largest doubles) it is span / ticks itself. Returns 1 for a span that
/// is not positive or `ticks` < 1.
double tick_step(double span, int ticks);

/// The multiples of tick_step(hi − lo, ticks) within [lo, hi] (a hair beyond `hi` is kept, so
/// an end that is itself round gets its mark), ascending and distinct: at most 2·ticks + 2
/// values. Empty unless lo and hi are finite and lo ≤ hi; lo = hi gives that one value.
std::vector<double> axis_ticks(double lo, double hi, int ticks);

}  // namespace pipesim::viz
