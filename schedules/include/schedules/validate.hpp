#pragma once
// Schedule validation: shape, every op exactly once, dependency order, no deadlock.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedules/op_dependencies.hpp"
#include "schedules/schedule.hpp"
#include "schedules/zeroed_array.hpp"

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

/// An op's input in asap_dataflow(): the output slot it waits for (output_slot() of
/// dependency_order.hpp: 2·(microbatch·stages + stage), +1 for a backward), the device that
/// produces it, and that output's end time (set once the input is done).
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

namespace detail {

/// Asks the cache for the line at `address` ahead of its use (a hint; no effect elsewhere).
inline void prefetch(const void* address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address);
#else
    (void)address;
#endif
}

}  // namespace detail

/// Runs the devices' op lists as a dataflow with as-soon-as-possible times: the hot loop of
/// validation and of the analytic replay. Every op starts when its device has finished its
/// previous op and its inputs are done (plus `latency` for an input from another device) and
/// lasts duration[stage·pass_count + pass] (pass_durations). An F&B pair (Schedule::fb_pairs)
/// starts when the inputs of both its ops are done and lasts pair_length(F, backward, F's
/// duration, backward's duration); its F is reported on the first share of that time in
/// proportion to its duration, its backward on the rest, and both outputs are done at its
/// end. Without pairs, ops are visited in DependencyWalker's order with asap_walk's
/// arithmetic, so times and visiting order are identical to asap_walk's; on_op(device, op,
/// inputs, count, start, finish) sees each. Runs in linear time over contiguous arrays: one end
/// time per output slot and one parked slot per device. Returns false if the schedule cannot
/// run to completion (an input later on the same device, or a deadlock): validate() names the
/// problem. Precondition: validate_structure(s) found nothing; durations ≥ 0.
template <class OnOp, class PairLength = PairBackToBack>
bool asap_dataflow(const Schedule& s, const std::vector<double>& duration, double latency,
                   OnOp&& on_op, PairLength pair_length = {}) {
    static_assert(std::numeric_limits<double>::is_iec559, "an all-zero double is +0");
    constexpr std::size_t none = ~std::size_t{0};
    const int stages = s.stages();
    const int devices = s.devices;
    const StageRange* ranges = s.microbatch_stages.empty() ? nullptr : s.microbatch_stages.data();
    // Per stage: its pass durations, and the device of each neighbouring stage with the latency
    // of an input from it (0 on the same device).
    struct StageLinks {
        double length[pass_count];
        double from_previous, from_next;
        int previous_device, next_device;
    };
    std::vector<StageLinks> link_list(static_cast<std::size_t>(stages));
    for (int stage = 0; stage < stages; ++stage) {
        StageLinks& l = link_list[static_cast<std::size_t>(stage)];
        for (int pass = 0; pass < pass_count; ++pass)
            l.length[pass] = duration[static_cast<std::size_t>(stage * pass_count + pass)];
        const int here = s.stage_device[stage];
        l.previous_device = stage > 0 ? s.stage_device[stage - 1] : here;
        l.next_device = stage + 1 < stages ? s.stage_device[stage + 1] : here;
        l.from_previous = l.previous_device == here ? 0.0 : latency;
        l.from_next = l.next_device == here ? 0.0 : latency;
    }
    const StageLinks* const links = link_list.data();
    // Per output slot (output_slot()), the output's end negated: −end ≤ −0 once done, and the
    // +0 the array starts with. Ends are ≥ 0, so the sign bit alone says "done". The slots of an
    // op's inputs are its own slot's neighbours (output_slot() puts a microbatch's stages side by
    // side), which keeps the walk's working set to the microbatches in flight.
    const ZeroedArray<double> end_store(output_slot_count(s.microbatches, stages));
    double* const end = end_store.data();
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
    // Fills in[] with the inputs of `op` (on device d) by the dependency rule of
    // op_dependencies.hpp, here in slot form: F(s) waits for F(s−1), its slot − 2; a backward for
    // F(s), slot − 1, and the backward of s+1, slot + 2; W for B(s), slot + 0 (B and BW share a
    // slot). Returns how many are done and the start they allow from `start` on, and if one is
    // not done, which.
    struct Gathered {
        double start;
        int count;
        bool done;
        std::size_t waiting_slot;
        int waiting_device;
    };
    auto gather = [end, links, ranges, stages](int d, const Op& op, DataflowInput* in,
                                               double start) {
        const StageLinks& l = links[op.stage];
        const std::size_t slot = output_slot(op, stages);
        const int first = ranges ? ranges[op.microbatch].first : 0;
        const int last = ranges ? ranges[op.microbatch].last : stages - 1;
        Gathered g{start, 0, true, 0, 0};
        auto input = [&](std::size_t from, int device, double delay) {
            const double negated = end[from];
            if (!std::signbit(negated)) {
                g.done = false;
                g.waiting_slot = from;
                g.waiting_device = device;
                return false;
            }
            in[g.count++] = DataflowInput{from, device, -negated};
            g.start = std::max(g.start, -negated + delay);
            return true;
        };
        switch (op.pass) {
            case Pass::F:
                if (op.stage > first) input(slot - 2, l.previous_device, l.from_previous);
                break;
            case Pass::B:
            case Pass::BW:
                if (input(slot - 1, d, 0.0) && op.stage < last)
                    input(slot + 2, l.next_device, l.from_next);
                break;
            case Pass::W:
                input(slot, d, 0.0);
                break;
        }
        return g;
    };
    // Marks `op`'s output (on device d) done at `finish` and wakes the device that waits for it:
    // the consumer on another device of F(s) is F(s+1), of a backward the backward of s−1.
    auto complete = [&](int d, const Op& op, double finish) {
        if (op.pass == Pass::W) return;
        const StageLinks& l = links[op.stage];
        const std::size_t slot = output_slot(op, stages);
        end[slot] = -finish;
        const bool forward = op.pass == Pass::F;
        const int edge = forward ? (ranges ? ranges[op.microbatch].last : stages - 1)
                                 : (ranges ? ranges[op.microbatch].first : 0);
        const int to = forward ? l.next_device : l.previous_device;
        if (op.stage != edge && to != d && parked[to] == slot) {
            parked[to] = none;
            ready[ready_count++] = to;
        }
    };
    while (ready_count > 0) {
        const int d = ready[--ready_count];
        const Op* const ops = s.device_ops[d].data();
        const std::size_t op_count = s.device_ops[d].size();
        const std::vector<int>* pairs = s.fb_pairs.empty() ? nullptr : &s.fb_pairs[d];
        std::size_t pos = cursor[d];
        double free = device_free[d];
        // The backward of an F&B pair, timed with its F and reported right after it.
        bool pair_back = false;
        DataflowInput back_in[2];
        int back_count = 0;
        double back_start = 0;
        for (; pos < op_count; ++pos) {
            // Devices take turns every few ops, each reading its own list: fetch this one's
            // next ops while it runs, so they are cached when its turn comes again.
            detail::prefetch(ops + std::min(pos + 16, op_count - 1));
            const Op op = ops[pos];
            DataflowInput in[2];
            int count = 0;
            double start = free;
            double finish = 0;
            if (pair_back) {
                pair_back = false;
                std::copy(back_in, back_in + back_count, in);
                count = back_count;
                start = back_start;
                finish = free;
            } else if (!pairs || pair_cursor[d] >= pairs->size() ||
                       static_cast<std::size_t>((*pairs)[pair_cursor[d]]) != pos) {
                const Gathered g = gather(d, op, in, start);
                if (!g.done) {
                    if (g.waiting_device == d) return false;
                    parked[d] = g.waiting_slot;
                    break;
                }
                count = g.count;
                start = g.start;
                finish = start + links[op.stage].length[static_cast<int>(op.pass)];
                complete(d, op, finish);
                free = finish;
            } else {
                // An F&B pair: both ops' inputs first, then one block of time for the two.
                const Op back = ops[pos + 1];
                const Gathered front = gather(d, op, in, start);
                const Gathered rear = front.done ? gather(d, back, back_in, front.start) : front;
                if (!rear.done) {
                    if (rear.waiting_device == d) return false;
                    parked[d] = rear.waiting_slot;
                    break;
                }
                count = front.count;
                back_count = rear.count;
                start = rear.start;
                const double f = links[op.stage].length[static_cast<int>(op.pass)];
                const double b = links[back.stage].length[static_cast<int>(back.pass)];
                free = start + pair_length(op, back, f, b);
                finish = f + b > 0 ? start + (free - start) * f / (f + b) : start;
                complete(d, op, free);
                complete(d, back, free);
                ++pair_cursor[d];
                pair_back = true;
                back_start = finish;
            }
            on_op(d, op, in, count, start, finish);
        }
        cursor[d] = pos;
        device_free[d] = free;
    }
    for (int d = 0; d < devices; ++d)
        if (cursor[d] < s.device_ops[d].size()) return false;
    return true;
}

}  // namespace pipesim
