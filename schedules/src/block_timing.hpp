#pragma once
// Internal helpers of the building-block code: as-soon-as-possible timing of a schedule on a
// slot grid, and a device's peak activation from its order alone.

#include <optional>
#include <vector>

#include "schedules/block.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim::detail {

/// As-soon-as-possible timing without a Timeline: per output slot (output_slot: the F and the
/// backward, B or BW, of each microbatch and stage; W feeds nothing) the end time, −1 for ops
/// the schedule does not have, and the last end of any op.
struct AsapTiming {
    std::vector<double> end;
    double makespan = 0;
};

/// Every op starts when its device is free and its inputs are done (no latency) and lasts
/// `duration[stage·pass_count + pass]`, keeping each device's order. Fills `timing` and
/// returns nothing, or returns the problem (an op before its input on its device, a deadlock)
/// with validate()'s message. Precondition: validate_structure(schedule) found nothing.
std::optional<ValidationIssue> asap_timing(const Schedule& schedule,
                                           const std::vector<double>& duration, AsapTiming& timing);

/// The same timing as a Timeline (time unit "slot"). Throws InvalidSchedule for an order
/// that cannot run. Precondition: as asap_timing.
Timeline asap_timeline(const Schedule& schedule, const std::vector<double>& duration);

/// The `duration` table of asap_timeline for the same lengths on every stage.
std::vector<double> slot_durations(int stages, const SlotLengths& lengths);

/// Per output slot (output_slot), the end time of that op in `timeline` (−1 if absent).
std::vector<double> end_times(const Timeline& timeline);

/// The `duration` table of the ops in `timeline` (end − start per stage and pass).
std::vector<double> timeline_durations(const Timeline& timeline);

/// The peak activation a device holds running `ops` in order: F adds M_B, B releases
/// M_B − M_W, W releases M_W, BW releases M_B.
double order_peak(const std::vector<Op>& ops, const MemoryModel& memory);

/// reorder() on a timing already computed: `timing` is asap_timing(schedule, duration).
Schedule reorder_timed(const Schedule& schedule, const std::vector<double>& duration,
                       AsapTiming timing, const MemoryModel& memory);

}  // namespace pipesim::detail
