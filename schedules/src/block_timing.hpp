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
/// finish)` sees every op; `end`, unless null, is filled per output slot; `slots` is the walk's
/// own table (passed in to be reused: a large new table costs its pages). Returns false, with
/// `end` and what on_op saw meaningless, if the schedule is routed or its order cannot run;
/// asap_walk then names the problem. Precondition: validate_structure(schedule) found nothing.
///
/// The walk keeps its end times stage by stage (then microbatch: a device reads and writes
/// them in sequence) with one pad stage on each side: the pad before stage 0 holds forwards
/// done at 0 and the one after the last stage backwards done at 0, so every pass reads the
/// same two input slots at fixed offsets from its own (F: the stage before's F, twice; B and
/// BW: its F and the stage after's backward; W: its backward, twice) with no test for the
/// first or last stage. An input with no latency on the pad adds nothing: start = max(free,
/// 0 + 0) is the device's free time, as without it. A slot not done holds −1, or −2 − d while
/// device d waits for it.
/// `first_start` and `last_end`, unless null, get per device when its first op starts and its
/// last ends (0 for a device without ops).
template <class OnOp>
bool quick_asap_walk(const Schedule& schedule, const std::vector<double>& duration, double latency,
                     std::vector<double>* end, std::vector<double>& slots, OnOp&& on_op,
                     std::vector<double>* first_start = nullptr,
                     std::vector<double>* last_end = nullptr) {
    if (!schedule.microbatch_stages.empty()) return false;
    const int stages = schedule.stages();
    const std::size_t devices = schedule.device_ops.size();
    const auto microbatches = static_cast<std::size_t>(schedule.microbatches);
    const std::size_t row = 2 * microbatches;  // a stage's slots: F and backward per microbatch
    const auto rows = static_cast<std::size_t>(stages) + 2;  // the stages and the two pads
    std::vector<double>& slot_end = slots;
    slot_end.assign(row * rows, -1.0);
    for (std::size_t mb = 0; mb < microbatches; ++mb) {
        slot_end[2 * mb] = 0.0;                         // the pad forward before stage 0
        slot_end[row * (rows - 1) + 2 * mb + 1] = 0.0;  // the pad backward after the last stage
    }
    // Per (stage, pass): the latency of each of the two inputs and the duration. An input
    // from the stage before or after pays the latency when that stage is on another device.
    struct Rule {
        double first_delay;
        double second_delay;
        double duration;
    };
    const std::vector<int>& device_of = schedule.stage_device;
    std::vector<Rule> rule(static_cast<std::size_t>(stages) * pass_count);
    for (int s = 0; s < stages; ++s) {
        const double from_previous = s > 0 && device_of[s - 1] != device_of[s] ? latency : 0.0;
        const double from_next = s + 1 < stages && device_of[s + 1] != device_of[s] ? latency : 0.0;
        for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW}) {
            const std::size_t k =
                static_cast<std::size_t>(s) * pass_count + static_cast<std::size_t>(pass);
            const bool backward = pass == Pass::B || pass == Pass::BW;
            // F reads the stage before's F twice, W its backward twice.
            const double first_delay = pass == Pass::F ? from_previous : 0.0;
            rule[k] = Rule{first_delay, backward ? from_next : first_delay, duration[k]};
        }
    }
    // Per pass, where its two input slots lie from its forward slot.
    const auto step = static_cast<std::ptrdiff_t>(row);
    const std::ptrdiff_t first_input[pass_count] = {-step, 0, 1, 0};
    const std::ptrdiff_t second_input[pass_count] = {-step, step + 1, 1, step + 1};
    // Per device: its next op, the end of its order, the first op and when it is free.
    struct Cursor {
        const Op* next;
        const Op* stop;
        const Op* first;
        double free;
        double first_start;
    };
    std::vector<Cursor> cursor(devices);
    for (std::size_t d = 0; d < devices; ++d) {
        const std::vector<Op>& ops = schedule.device_ops[d];
        cursor[d] = Cursor{ops.data(), ops.data() + ops.size(), ops.data(), 0.0, 0.0};
    }
    // Devices that may run on: each at most once (waiting for a slot, it is in no list).
    std::vector<int> advance(devices);
    std::size_t advancing = 0;
    for (std::size_t d = devices; d-- > 0;)
        advance[advancing++] = static_cast<int>(d);
    double* const slot = slot_end.data();
    const Rule* const rules = rule.data();
    while (advancing > 0) {
        const int d = advance[--advancing];
        Cursor& c = cursor[static_cast<std::size_t>(d)];
        const Op* it = c.next;
        const Op* const stop = c.stop;
        double t = c.free;
        for (; it != stop; ++it) {
            const Op op = *it;
            const auto pass = static_cast<std::size_t>(op.pass);
            const std::size_t f_slot = (static_cast<std::size_t>(op.stage) + 1) * row +
                                       2 * static_cast<std::size_t>(op.microbatch);
            const std::size_t a = f_slot + first_input[pass];
            const std::size_t b = f_slot + second_input[pass];
            const double ea = slot[a];
            const double eb = slot[b];
            if (ea < 0 || eb < 0) {
                // Waits for the second input if neither is done (asap_walk's order).
                slot[eb < 0 ? b : a] = -2.0 - d;
                break;
            }
            const Rule& r = rules[static_cast<std::size_t>(op.stage) * pass_count + pass];
            double start = std::max(t, ea + r.first_delay);
            start = std::max(start, eb + r.second_delay);
            const double finish = start + r.duration;
            if (it == c.first) c.first_start = start;
            if (op.pass != Pass::W) {
                double& out = slot[f_slot + (op.pass == Pass::F ? 0 : 1)];
                const double before = out;
                out = finish;
                if (before < -1.5) advance[advancing++] = static_cast<int>(-2.0 - before);
            }
            t = finish;
            on_op(d, static_cast<int>(it - c.first), op, start, finish);
        }
        c.next = it;
        c.free = t;
    }
    for (const Cursor& c : cursor)
        if (c.next != c.stop) return false;
    if (first_start != nullptr) {
        first_start->resize(devices);
        for (std::size_t d = 0; d < devices; ++d)
            (*first_start)[d] = cursor[d].first_start;
    }
    if (last_end != nullptr) {
        last_end->resize(devices);
        for (std::size_t d = 0; d < devices; ++d)
            (*last_end)[d] = cursor[d].free;
    }
    if (end == nullptr) return true;
    // Microbatch by microbatch, a few at a time: each stage's row is read in runs.
    end->resize(output_slot_count(schedule.microbatches, stages));
    const auto width = 2 * static_cast<std::size_t>(stages);  // a microbatch's output slots
    constexpr std::size_t batch = 16;
    for (std::size_t first = 0; first < microbatches; first += batch) {
        const std::size_t last = std::min(microbatches, first + batch);
        for (std::size_t s = 0; s < static_cast<std::size_t>(stages); ++s) {
            const double* in = slot + (s + 1) * row;
            for (std::size_t mb = first; mb < last; ++mb) {
                (*end)[mb * width + 2 * s] = in[2 * mb];
                (*end)[mb * width + 2 * s + 1] = in[2 * mb + 1];
            }
        }
    }
    return true;
}

/// As-soon-as-possible timing without a Timeline: per output slot (output_slot: the F and the
/// backward, B or BW, of each microbatch and stage; W feeds nothing) the end time, −1 for ops
/// the schedule does not have, and the last end of any op.
struct AsapTiming {
    std::vector<double> end;
    double makespan = 0;
    std::vector<double> walk;  ///< the timing walk's table, kept for the next timing
    /// Per device: when its first op starts and its last ends (0 for a device without ops).
    std::vector<double> first_start;
    std::vector<double> last_end;
};

/// An order's figures as the step that made it saw them, per device: when its first op starts
/// and its last ends (for a device with ops) and its peak activation (order_peak's sums).
struct OrderFigures {
    std::vector<double> first_start;
    std::vector<double> last_end;
    std::vector<double> peak;
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
/// With `figures`, also the result's figures: each op's start in the fill (the time the device
/// was free or an input done) and its peak. The starts are those of asap_timing(result) when
/// every time is exact (durations_are_exact), since a device then runs an op as soon as it is
/// free and the op's inputs are done.
std::optional<Schedule> fill_idle(const Schedule& schedule, const std::vector<double>& duration,
                                  const std::vector<double>& cap, const MemoryModel& memory,
                                  double give_up_above = std::numeric_limits<double>::infinity(),
                                  OrderFigures* figures = nullptr);

/// reorder() on a timing already computed: `timing` is asap_timing(schedule, duration). With
/// `figures`, also the result's: its asap_timing and its peak under `memory`.
Schedule reorder_timed(Schedule schedule, const std::vector<double>& duration, AsapTiming timing,
                       const MemoryModel& memory, OrderFigures* figures = nullptr);

/// An order with the figures of the step that made it (a fill or a reorder, with `durations`
/// and the unit memory model); no `seen` when the step's times are not known exact.
struct UnitOrder {
    Schedule order;
    std::optional<OrderFigures> seen;
    std::vector<double> durations;
};

/// schedule_from_block() and, when it filled or reordered the repeated order, the figures of
/// that step (for a fill only when durations_are_exact) in the slot durations it ran with,
/// under the unit memory model.
UnitOrder schedule_from_block_seen(const BuildingBlock& block, int microbatches,
                                   const BlockScheduleOptions& options);

/// Whether every time a list schedule or timing walk of `microbatches` microbatches with these
/// durations (no latency) computes is exact: each duration a multiple of 2⁻²⁰ and all of them
/// together below 2³² (so every sum of them is a double without rounding, and two different
/// times lie at least 2⁻²⁰ apart, far beyond the 10⁻⁹ the list schedules compare within).
bool durations_are_exact(const std::vector<double>& duration, int microbatches);

}  // namespace pipesim::detail
