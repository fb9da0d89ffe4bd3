#include "sim/memory_budget.hpp"

#include "schedules/op.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::sim {

double replay_peak_bytes(double ops, double stage_passes, const ReplayOptions& options) {
    constexpr double schedule_per_op = 2 * sizeof(Op);  // lists grow by doubling
    // end times, the metrics' forward starts, masks and flags
    constexpr double state_per_pair = 3 * sizeof(double) + 2;
    double bytes = ops * schedule_per_op + stage_passes * state_per_pair;
    if (options.record_ops) bytes += ops * static_cast<double>(sizeof(TimedOp));
    if (options.record_transfers) bytes += ops * static_cast<double>(sizeof(Transfer));
    return bytes;
}

}  // namespace pipesim::sim
