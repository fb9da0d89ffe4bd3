#pragma once
// Internal helpers of the building-block code: as-soon-as-possible timing of a schedule on a
// slot grid, and a device's peak activation from its order alone.

#include <vector>

#include "schedules/block.hpp"

namespace pipesim::detail {

/// Every op starts when its device is free and its inputs are done (no latency) and lasts
/// `duration[stage·pass_count + pass]`, keeping each device's order. Precondition: the
/// schedule is valid.
Timeline asap_timeline(const Schedule& schedule, const std::vector<double>& duration);

/// The `duration` table of asap_timeline for the same lengths on every stage.
std::vector<double> slot_durations(int stages, const SlotLengths& lengths);

/// Per dense op index (dense_op_index), the end time of that op in `timeline` (−1 if absent).
std::vector<double> end_times(const Timeline& timeline);

/// The peak activation a device holds running `ops` in order: F adds M_B, B releases
/// M_B − M_W, W releases M_W, BW releases M_B.
double order_peak(const std::vector<Op>& ops, const MemoryModel& memory);

}  // namespace pipesim::detail
