#pragma once
// Schedule validation: shape, every op exactly once, dependency order, no deadlock.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedules/op_dependencies.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

/// What is wrong with a schedule. `device` and `position` locate the offending op in the
/// per-device order (−1 when the problem is not tied to one op, e.g. a missing op).
struct ValidationIssue {
    int device = -1;
    int position = -1;
    std::string message;
};

/// Thrown by functions that require a valid schedule. Derives from std::invalid_argument:
/// the schedule is bad input, not an internal failure.
class InvalidSchedule : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// Checks that `schedule` can run:
///  - shape: p, m, v ≥ 1; one op list per device; placement in range;
///  - each op's microbatch and stage are in range and the op sits on its stage's device;
///  - every (microbatch, stage) of the microbatch's stage range (all stages unless
///    Schedule::microbatch_stages says otherwise) has exactly one F and either one BW or one B
///    and one W, and there are no ops outside the range;
///  - dependencies F(mb,s) ← F(mb,s−1); B/BW(mb,s) ← F(mb,s), B/BW(mb,s+1); W(mb,s) ← B(mb,s)
///    (within the microbatch's range: its first stage's F and last stage's B have no
///    predecessor on another stage) are met in each device's order, and the devices' orders
///    together cannot deadlock.
/// Returns the first problem found, or nothing if the schedule is valid. A deadlock message
/// names the wait cycle: each device, its position, the op it is at and the op it waits for.
std::optional<ValidationIssue> validate(const Schedule& schedule);

/// The checks of validate() that need no dependency walk: shape, ranges, placement, every op
/// exactly once. A schedule that passes them can be given to DependencyWalker, whose run()
/// reports the rest (order and deadlock) with the same messages; engines use this pair so
/// that validation and timing share one walk.
std::optional<ValidationIssue> validate_structure(const Schedule& schedule);

/// validate(), throwing InvalidSchedule with the issue's message if there is one.
void require_valid(const Schedule& schedule);

/// An op's input in asap_dataflow(): the output slot it waits for, the device that produces
/// it, and that output's end time (set once the input is done).
struct DataflowInput {
    std::size_t slot;  // no initializers: the walk fills what it reads, once per op
    int device;
    double end;
};

/// The length of an F&B pair whose F lasts `f` and whose backward lasts `b`: by default
/// f + b (run back to back, nothing overlapped).
struct PairBackToBack {
    double operator()(const Op&, const Op&, double f, double b) const { return f + b; }
};

/// Runs the devices' op lists as a dataflow with as-soon-as-possible times: the hot loop of
/// validation and of the analytic replay. Every op starts when its device has finished its
/// previous op and its inputs are done (plus `latency` for an input from another device) and
/// lasts duration[stage·pass_count + pass] (pass_durations). An F&B pair (Schedule::fb_pairs)
/// starts when the inputs of both its ops are done and lasts pair_length(F, backward, F's
/// duration, backward's duration); its F is reported on the first share of that time in
/// proportion to its duration, its backward on the rest, and both outputs are done at its
/// end. Without pairs, ops are visited in DependencyWalker's order with asap_walk's
/// arithmetic, so times and visiting order are identical to asap_walk's; on_op(device, op, inputs,
/// count, start, finish) sees each. Runs in linear time over contiguous arrays: one end time per
/// output (stage-major, −1 until done) and one parked slot per device. Returns false if the
/// schedule cannot run to completion (an input later on the same device, or a deadlock): validate()
/// names the problem. Precondition: validate_structure(s) found nothing; durations ≥ 0.
template <class OnOp, class PairLength = PairBackToBack>
bool asap_dataflow(const Schedule& s, const std::vector<double>& duration, double latency,
                   OnOp&& on_op, PairLength pair_length = {}) {
    constexpr std::size_t none = ~std::size_t{0};
    const int stages = s.stages();
    const int devices = s.devices;
    const auto microbatches = static_cast<std::size_t>(s.microbatches);
    const int* stage_device = s.stage_device.data();
    const StageRange* ranges = s.microbatch_stages.empty() ? nullptr : s.microbatch_stages.data();
    // Slot of (stage, microbatch): 2·(stage·m + microbatch), +1 for the backward (B or BW).
    const std::size_t stage_stride = 2 * microbatches;
    std::vector<double> end_times(stage_stride * static_cast<std::size_t>(stages), -1.0);
    double* const end = end_times.data();
    std::vector<std::size_t> parked(static_cast<std::size_t>(devices), none);
    std::vector<std::size_t> cursor(static_cast<std::size_t>(devices), 0);
    std::vector<double> device_free(static_cast<std::size_t>(devices), 0.0);
    std::vector<std::size_t> pair_cursor(s.fb_pairs.empty() ? 0 : static_cast<std::size_t>(devices),
                                         0);
    // A device is running, parked or ready, and ready at most once: a stack of p entries.
    std::vector<int> ready_stack(static_cast<std::size_t>(devices));
    int* const ready = ready_stack.data();
    std::size_t ready_count = 0;
    for (int d = devices - 1; d >= 0; --d)
        ready[ready_count++] = d;
    auto wake = [&](int device, std::size_t slot) {
        if (parked[device] == slot) {
            parked[device] = none;
            ready[ready_count++] = device;
        }
    };
    while (ready_count > 0) {
        const int d = ready[--ready_count];
        const Op* const ops = s.device_ops[d].data();
        const std::size_t op_count = s.device_ops[d].size();
        const std::vector<int>* pairs = s.fb_pairs.empty() ? nullptr : &s.fb_pairs[d];
        std::size_t pos = cursor[d];
        double free = device_free[d];
        // Fills `op`'s inputs and raises `start` to their arrival; false: `waiting` is not done.
        auto gather = [&](const Op& op, DataflowInput* in, int& count, double& start,
                          DataflowInput*& waiting) {
            const int first = ranges ? ranges[op.microbatch].first : 0;
            const int last = ranges ? ranges[op.microbatch].last : stages - 1;
            // The inputs, by schedules' dependency rule; a backward's slot is the same
            // whether it is B or BW, so the split does not matter here.
            count = 0;
            for_each_predecessor(
                op, StageRange{first, last}, [](int) { return true; },
                [&](const Op& input) {
                    in[count++] = {static_cast<std::size_t>(input.stage) * stage_stride +
                                       2 * static_cast<std::size_t>(input.microbatch) +
                                       (input.pass == Pass::F ? 0 : 1),
                                   stage_device[input.stage], 0};
                });
            for (int k = 0; k < count; ++k) {
                in[k].end = end[in[k].slot];
                if (in[k].end < 0) {
                    waiting = &in[k];
                    return false;
                }
                start = std::max(start, in[k].end + (in[k].device == d ? 0.0 : latency));
            }
            return true;
        };
        // Marks `op`'s output done at `finish` and wakes the devices that wait for it.
        auto complete = [&](const Op& op, double finish) {
            if (op.pass == Pass::W) return;
            const int first = ranges ? ranges[op.microbatch].first : 0;
            const int last = ranges ? ranges[op.microbatch].last : stages - 1;
            const std::size_t slot = static_cast<std::size_t>(op.stage) * stage_stride +
                                     2 * static_cast<std::size_t>(op.microbatch) +
                                     (op.pass == Pass::F ? 0 : 1);
            end[slot] = finish;
            for_each_successor(
                op, StageRange{first, last}, [](int) { return true; },
                [&](const Op& consumer) {
                    const int to = stage_device[consumer.stage];
                    if (to != d) wake(to, slot);
                });
        };
        auto length = [&](const Op& op) {
            return duration[static_cast<std::size_t>(op.stage) * pass_count +
                            static_cast<std::size_t>(op.pass)];
        };
        for (; pos < op_count; ++pos) {
            const Op op = ops[pos];
            DataflowInput in[2];
            int count = 0;
            double start = free;
            DataflowInput* waiting = nullptr;
            const bool paired = pairs && pair_cursor[d] < pairs->size() &&
                                static_cast<std::size_t>((*pairs)[pair_cursor[d]]) == pos;
            if (!paired) {
                if (!gather(op, in, count, start, waiting)) {
                    if (waiting->device == d) return false;
                    parked[d] = waiting->slot;
                    break;
                }
                const double finish = start + length(op);
                complete(op, finish);
                free = finish;
                on_op(d, op, in, count, start, finish);
                continue;
            }
            // An F&B pair: both ops' inputs first, then one block of time for the two.
            const Op back = ops[pos + 1];
            DataflowInput back_in[2];
            int back_count = 0;
            if (!gather(op, in, count, start, waiting) ||
                !gather(back, back_in, back_count, start, waiting)) {
                if (waiting->device == d) return false;
                parked[d] = waiting->slot;
                break;
            }
            const double f = length(op), b = length(back);
            const double finish = start + pair_length(op, back, f, b);
            const double split = f + b > 0 ? start + (finish - start) * f / (f + b) : start;
            complete(op, finish);
            complete(back, finish);
            free = finish;
            ++pair_cursor[d];
            on_op(d, op, in, count, start, split);
            on_op(d, back, back_in, back_count, split, finish);
            ++pos;
        }
        cursor[d] = pos;
        device_free[d] = free;
    }
    for (int d = 0; d < devices; ++d)
        if (cursor[d] < s.device_ops[d].size()) return false;
    return true;
}

}  // namespace pipesim
