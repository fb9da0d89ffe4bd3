// Building blocks: warm-up and cool-down reordering that never raises peak memory.
#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include "block_timing.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

bool is_backward(Pass pass) {
    return pass == Pass::B || pass == Pass::BW;
}

class Reorderer {
  public:
    Reorderer(int stages, const std::vector<double>& end, const std::vector<double>& duration)
        : stages_(stages), end_(end), duration_(duration) {}

    // Forwards before the first backward, in the order their inputs arrive. Returns the end of
    // the part it may have changed.
    std::size_t warm_up(std::vector<Op>& ops) const {
        const auto first_back =
            std::find_if(ops.begin(), ops.end(), [](const Op& op) { return is_backward(op.pass); });
        std::stable_sort(ops.begin(), first_back,
                         [&](const Op& a, const Op& b) { return input_ready(a) < input_ready(b); });
        return static_cast<std::size_t>(first_back - ops.begin());
    }

    // After the last forward: a backward whose input has arrived runs first (it unblocks
    // other devices); otherwise a pending W fills the wait. Returns the start of the part it
    // may have changed.
    std::size_t cool_down(std::vector<Op>& ops) const {
        std::size_t last_f = ops.size();
        for (std::size_t k = ops.size(); k-- > 0;)
            if (ops[k].pass == Pass::F) {
                last_f = k;
                break;
            }
        if (last_f == ops.size()) return ops.size();
        std::deque<Op> backwards;
        std::vector<Op> weights;
        for (std::size_t k = last_f + 1; k < ops.size(); ++k)
            if (ops[k].pass == Pass::W)
                weights.push_back(ops[k]);
            else
                backwards.push_back(ops[k]);
        // A W's B runs on its device either before the last forward or among `backwards`.
        // The W's whose B has run, by their place among the weights (the first runs first);
        // `waiting_b`: the dense index of each other W's B, sorted, with the W's place.
        std::vector<std::size_t> later_b;
        for (const Op& op : backwards)
            if (op.pass == Pass::B) later_b.push_back(dense_op_index(op, stages_));
        std::sort(later_b.begin(), later_b.end());
        std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready_w;
        std::vector<std::pair<std::size_t, std::size_t>> waiting_b;
        for (std::size_t i = 0; i < weights.size(); ++i) {
            const std::size_t b =
                dense_op_index(Op{Pass::B, weights[i].microbatch, weights[i].stage}, stages_);
            if (std::binary_search(later_b.begin(), later_b.end(), b))
                waiting_b.emplace_back(b, i);
            else
                ready_w.push(i);
        }
        std::sort(waiting_b.begin(), waiting_b.end());
        double t = end_of(ops[last_f]);
        std::size_t out = last_f + 1;
        auto place = [&](const Op& op, double start) {
            ops[out++] = op;
            const std::size_t index = dense_op_index(op, stages_);
            t = start + duration(op);
            const auto w = std::lower_bound(waiting_b.begin(), waiting_b.end(),
                                            std::pair<std::size_t, std::size_t>{index, 0});
            if (w != waiting_b.end() && w->first == index) ready_w.push(w->second);
        };
        std::size_t weights_left = weights.size();
        while (!backwards.empty() || weights_left > 0) {
            const bool back_ready = !backwards.empty() && input_ready(backwards.front()) <= t;
            if (back_ready || (ready_w.empty() && !backwards.empty())) {
                const Op op = backwards.front();
                backwards.pop_front();
                place(op, std::max(t, input_ready(op)));
            } else {
                const Op op = weights[ready_w.top()];
                ready_w.pop();
                --weights_left;
                place(op, t);
            }
        }
        return last_f + 1;
    }

  private:
    double duration(const Op& op) const {
        return duration_[static_cast<std::size_t>(op.stage) * pass_count +
                         static_cast<std::size_t>(op.pass)];
    }

    // F, B or BW: the end of its output (B and BW share the backward's slot).
    double end_of(const Op& op) const { return end_[output_slot(op, stages_)]; }

    // When the inputs an op needs are done, by the current timing.
    double input_ready(const Op& op) const { return detail::inputs_end(op, stages_, end_); }

    int stages_;
    const std::vector<double>& end_;
    const std::vector<double>& duration_;
};

}  // namespace

namespace detail {

Schedule reorder_timed(Schedule schedule, const std::vector<double>& duration, AsapTiming timing,
                       const MemoryModel& memory) {
    Schedule next = schedule;
    Schedule current = std::move(schedule);
    AsapTiming next_timing;
    std::vector<double> peak(static_cast<std::size_t>(next.devices));
    for (int d = 0; d < next.devices; ++d)
        peak[d] = order_peak(current.device_ops[d], memory);
    // Ready times come from the previous round's timing; a few rounds let the devices' gains
    // propagate. A round is kept only if it runs (same ops per device, so the timing walk is
    // the whole validation) and does not lengthen the pipeline. `next` and `next_timing` are
    // reused from round to round.
    constexpr int rounds = 4;
    for (int round = 0; round < rounds; ++round) {
        const Reorderer reorderer(next.stages(), timing.end, duration);
        next.device_ops = current.device_ops;
        std::vector<double> next_peak = peak;
        bool changed = false;
        for (int d = 0; d < next.devices; ++d) {
            std::vector<Op>& ops = next.device_ops[d];
            const std::vector<Op>& before = current.device_ops[d];
            // Only the warm-up's forwards and the ops after the last forward move.
            const auto warm_end = static_cast<std::ptrdiff_t>(reorderer.warm_up(ops));
            const auto cool_start = static_cast<std::ptrdiff_t>(reorderer.cool_down(ops));
            if (std::equal(ops.begin(), ops.begin() + warm_end, before.begin()) &&
                std::equal(ops.begin() + cool_start, ops.end(), before.begin() + cool_start))
                continue;  // the same order, the same peak
            next_peak[d] = order_peak(ops, memory);
            if (next_peak[d] > peak[d] + 1e-9) {
                ops = before;
                next_peak[d] = peak[d];
            } else {
                changed = true;
            }
        }
        if (!changed) break;
        if (asap_timing(next, duration, next_timing)) break;
        if (next_timing.makespan > timing.makespan) break;
        std::swap(current, next);
        std::swap(timing, next_timing);
        peak = std::move(next_peak);
    }
    return current;
}

}  // namespace detail

Schedule reorder(const Schedule& schedule, const Timeline& squeezed, const MemoryModel& memory) {
    const std::vector<double> duration = detail::timeline_durations(squeezed);
    detail::AsapTiming timing;
    timing.end = detail::end_times(squeezed);
    for (const auto& ops : squeezed.device_ops)
        if (!ops.empty()) timing.makespan = std::max(timing.makespan, ops.back().end);
    return detail::reorder_timed(schedule, duration, std::move(timing), memory);
}

}  // namespace pipesim
