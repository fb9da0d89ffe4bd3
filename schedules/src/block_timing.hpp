#pragma once
// Internal helpers of the building-block code: as-soon-as-possible timing of a schedule on a
// slot grid, and a device's peak activation from its order alone.

#include <algorithm>
#include <limits>
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

/// The activation memory running `op` adds (F: M_B) or releases (negative; B: M_B − M_W,
/// W: M_W, BW: M_B).
inline double memory_change(const Op& op, const MemoryModel& memory) {
    const double mb = memory.activation[op.stage];
    const double mw = memory.held_for_w[op.stage];
    switch (op.pass) {
        case Pass::F:
            return mb;
        case Pass::B:
            return -(mb - mw);
        case Pass::W:
            return -mw;
        case Pass::BW:
            return -mb;
    }
    return 0;
}

/// The peak activation a device holds running `ops` in order (memory_change of each in turn).
double order_peak(const std::vector<Op>& ops, const MemoryModel& memory);

/// When the inputs `op` needs (predecessors()) are done, by `end` (per output slot, −1 for an
/// op not run yet): the latest of their ends, −1 if one has not run, 0 if the op needs nothing.
/// Precondition: no routed microbatches.
inline double inputs_end(const Op& op, int stages, const std::vector<double>& end) {
    double latest = 0;
    bool done = true;
    // B and BW share an output slot: which one the next stage runs does not matter here.
    for_each_predecessor(
        op, StageRange{0, stages - 1}, [](int) { return true; },
        [&](const Op& input) {
            const double e = end[output_slot(input, stages)];
            done = done && e >= 0;
            latest = std::max(latest, e);
        });
    return done ? latest : -1;
}

/// The warm-up and cool-down fill, a list schedule of the devices' orders: a device that is
/// free runs its next op if that op's inputs are done; otherwise the first later op of its
/// order whose inputs are done, if pulling that op ahead keeps the device's activation
/// memory, from now until the op's old place, within `cap[device]` (raised to the order's own
/// peak if that is higher); otherwise it waits for the next op to end anywhere. After a
/// device's last forward a backward whose inputs are done also overtakes the W's before it
/// (W's feed no other device: the Zero Bubble papers' deferred W's fill the cool-down). A
/// forward pulled ahead fills a warm-up wait with a later microbatch. Ops are looked for at
/// most as many microbatches ahead as the cap holds. The result runs (each op starts after its
/// inputs) and no device's peak exceeds its cap; a filler can delay the op it overtook when
/// passes differ in length (tests check that it does not lengthen the catalog blocks'
/// pipelines with unit slots). Returns nothing if the devices stall (cannot happen for
/// an order that runs). Durations as asap_timing's. Also returns nothing as soon as a device
/// holds more than `give_up_above` (the result's peak, order_peak, would exceed it: a caller
/// that rejects such a peak need not fill further).
std::optional<Schedule> fill_idle(const Schedule& schedule, const std::vector<double>& duration,
                                  const std::vector<double>& cap, const MemoryModel& memory,
                                  double give_up_above = std::numeric_limits<double>::infinity());

/// reorder() on a timing already computed: `timing` is asap_timing(schedule, duration).
Schedule reorder_timed(const Schedule& schedule, const std::vector<double>& duration,
                       AsapTiming timing, const MemoryModel& memory);

}  // namespace pipesim::detail
