#pragma once
// Internal helpers of the building-block code: as-soon-as-possible timing of a schedule on a
// slot grid, and a device's peak activation from its order alone.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "schedules/block.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim::detail {

/// asap_walk()'s timing (the same arithmetic, so the same times) in a leaner walk for a
/// schedule whose microbatches pass through every stage: `on_op(device, position, op, start,
/// finish)` sees every op, `end` is filled per output slot. Returns false, with `end` and what
/// on_op saw meaningless, if the schedule is routed or its order cannot run; asap_walk then
/// names the problem. Precondition: validate_structure(schedule) found nothing.
template <class OnOp>
bool quick_asap_walk(const Schedule& schedule, const std::vector<double>& duration, double latency,
                     std::vector<double>& end, OnOp&& on_op) {
    if (!schedule.microbatch_stages.empty()) return false;
    const int stages = schedule.stages();
    const std::size_t devices = schedule.device_ops.size();
    end.assign(output_slot_count(schedule.microbatches, stages), -1.0);
    // Per output slot, the device waiting for it (−1: none). Only another device's op can wait
    // for a slot in an order that runs, so one waiter per slot suffices; an order that does not
    // run ends with a device short of its end.
    std::vector<std::int32_t> waiter(end.size(), -1);
    std::vector<std::size_t> cursor(devices, 0);
    std::vector<double> free(devices, 0.0);
    std::vector<int> advance;
    advance.reserve(devices);
    for (std::size_t d = devices; d-- > 0;)
        advance.push_back(static_cast<int>(d));
    // Per stage, the latency of an input from the stage before and from the stage after (0
    // on the same device; an op runs on its stage's device, validate_structure() checked).
    const std::vector<int>& device_of = schedule.stage_device;
    std::vector<double> from_previous(static_cast<std::size_t>(stages), 0.0);
    std::vector<double> from_next(from_previous.size(), 0.0);
    for (std::size_t s = 0; s + 1 < from_previous.size(); ++s)
        if (device_of[s] != device_of[s + 1]) {
            from_next[s] = latency;
            from_previous[s + 1] = latency;
        }
    while (!advance.empty()) {
        const int d = advance.back();
        advance.pop_back();
        const std::vector<Op>& ops = schedule.device_ops[static_cast<std::size_t>(d)];
        std::size_t pos = cursor[static_cast<std::size_t>(d)];
        double t = free[static_cast<std::size_t>(d)];
        for (; pos < ops.size(); ++pos) {
            const Op& op = ops[pos];
            // Slots of (microbatch, stage): F at 2·index, the backward at 2·index + 1.
            const std::size_t f_slot = output_slot(Op{Pass::F, op.microbatch, op.stage}, stages);
            double start = t;
            std::size_t missing = end.size();
            // asap_walk's start: each input's end, plus the latency from another device.
            auto input = [&](std::size_t slot, double delay) {
                const double e = end[slot];
                if (e < 0) missing = slot;
                start = std::max(start, e + delay);
            };
            const auto stage = static_cast<std::size_t>(op.stage);
            switch (op.pass) {
                case Pass::F:
                    if (op.stage > 0) input(f_slot - 2, from_previous[stage]);
                    break;
                case Pass::B:
                case Pass::BW:
                    input(f_slot, 0.0);
                    if (op.stage < stages - 1) input(f_slot + 3, from_next[stage]);
                    break;
                case Pass::W:
                    input(f_slot + 1, 0.0);
                    break;
            }
            if (missing < end.size()) {
                waiter[missing] = d;
                break;
            }
            const double finish = start + duration[static_cast<std::size_t>(op.stage) * pass_count +
                                                   static_cast<std::size_t>(op.pass)];
            if (op.pass != Pass::W) {
                const std::size_t slot = f_slot + (op.pass == Pass::F ? 0 : 1);
                end[slot] = finish;
                if (waiter[slot] >= 0) {
                    advance.push_back(waiter[slot]);
                    waiter[slot] = -1;
                }
            }
            t = finish;
            on_op(d, static_cast<int>(pos), op, start, finish);
        }
        cursor[static_cast<std::size_t>(d)] = pos;
        free[static_cast<std::size_t>(d)] = t;
    }
    for (std::size_t d = 0; d < devices; ++d)
        if (cursor[d] < schedule.device_ops[d].size()) return false;
    return true;
}

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
