// Building blocks: warm-up and cool-down reordering that never raises peak memory.
#include <algorithm>
#include <cstddef>
#include <cstdint>
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

namespace {

// One device's order split where the reorder may change it: the warm-up's forwards before
// [middle, cool) and the ops from `cool` on (after the last forward); the ops between never
// move. Its peak is order_peak()'s (the same sums in the same order), with the middle's
// climb kept for the memory it starts from: a round that changes only the ends re-sums only
// them unless the warm-up ends at other memory.
class SplitOrder {
  public:
    /// The memory each pass of each stage adds, one table for all devices (one per device
    /// took p·2p·4 doubles: 1 GB at p = 4096).
    static std::vector<double> changes(int stages, const MemoryModel& memory) {
        std::vector<double> change(static_cast<std::size_t>(stages) * pass_count);
        for (std::size_t s = 0; s < static_cast<std::size_t>(stages); ++s)
            for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW})
                change[s * pass_count + static_cast<std::size_t>(pass)] =
                    memory_change(Op{pass, 0, static_cast<std::int32_t>(s)}, memory);
        return change;
    }

    /// `change` is changes()'s table, which must outlive this.
    SplitOrder(const std::vector<Op>& ops, const std::vector<double>& change) : change_(change) {
        const auto first_back =
            std::find_if(ops.begin(), ops.end(), [](const Op& op) { return is_backward(op.pass); });
        middle_ = static_cast<std::size_t>(first_back - ops.begin());
        cool_ = middle_;
        for (std::size_t k = ops.size(); k-- > middle_;)
            if (ops[k].pass == Pass::F) {
                cool_ = k + 1;
                break;
            }
    }

    // Copies the parts that may move from `from` (the same ops in the middle) to `to`.
    void copy_ends(const std::vector<Op>& from, std::vector<Op>& to) const {
        std::copy(from.begin(), from.begin() + middle(), to.begin());
        std::copy(from.begin() + cool(), from.end(), to.begin() + cool());
    }
    bool same_ends(const std::vector<Op>& a, const std::vector<Op>& b) const {
        return std::equal(a.begin(), a.begin() + middle(), b.begin()) &&
               std::equal(a.begin() + cool(), a.end(), b.begin() + cool());
    }

    double peak(const std::vector<Op>& ops) {
        double held = 0;
        double peak = 0;
        sum(ops, 0, middle_, held, peak);
        if (!middle_known_ || held != middle_from_) {
            middle_from_ = held;
            middle_peak_ = 0;
            sum(ops, middle_, cool_, held, middle_peak_);
            middle_to_ = held;
            middle_known_ = true;
        }
        peak = std::max(peak, middle_peak_);
        held = middle_to_;
        sum(ops, cool_, ops.size(), held, peak);
        return peak;
    }

  private:
    std::ptrdiff_t middle() const { return static_cast<std::ptrdiff_t>(middle_); }
    std::ptrdiff_t cool() const { return static_cast<std::ptrdiff_t>(cool_); }
    void sum(const std::vector<Op>& ops, std::size_t first, std::size_t last, double& held,
             double& peak) const {
        for (std::size_t k = first; k < last; ++k) {
            held += change_[static_cast<std::size_t>(ops[k].stage) * pass_count +
                            static_cast<std::size_t>(ops[k].pass)];
            peak = std::max(peak, held);
        }
    }

    const std::vector<double>& change_;
    std::size_t middle_;  ///< the first backward (the warm-up's forwards are before it)
    std::size_t cool_;    ///< after the last forward (not before middle_)
    bool middle_known_ = false;
    double middle_from_ = 0;  ///< the memory the middle's sums below started from
    double middle_peak_ = 0;  ///< their highest (0 if none)
    double middle_to_ = 0;    ///< the memory after the middle
};

}  // namespace

Schedule reorder_timed(Schedule schedule, const std::vector<double>& duration, AsapTiming timing,
                       const MemoryModel& memory, OrderFigures* figures) {
    Schedule next = schedule;
    Schedule current = std::move(schedule);
    AsapTiming next_timing;
    const std::vector<double> change = SplitOrder::changes(next.stages(), memory);
    std::vector<SplitOrder> split;
    split.reserve(static_cast<std::size_t>(next.devices));
    std::vector<double> peak(static_cast<std::size_t>(next.devices));
    for (int d = 0; d < next.devices; ++d) {
        split.emplace_back(current.device_ops[d], change);
        peak[d] = split[d].peak(current.device_ops[d]);
    }
    // Ready times come from the previous round's timing; a few rounds let the devices' gains
    // propagate. A round is kept only if it runs (same ops per device, so the timing walk is
    // the whole validation) and does not lengthen the pipeline. `next` and `next_timing` are
    // reused from round to round; `next` and `current` always have the same middles.
    constexpr int rounds = 4;
    for (int round = 0; round < rounds; ++round) {
        const Reorderer reorderer(next.stages(), timing.end, duration);
        std::vector<double> next_peak = peak;
        bool changed = false;
        for (int d = 0; d < next.devices; ++d) {
            std::vector<Op>& ops = next.device_ops[d];
            const std::vector<Op>& before = current.device_ops[d];
            split[d].copy_ends(before, ops);
            // Only the warm-up's forwards and the ops after the last forward move.
            reorderer.warm_up(ops);
            reorderer.cool_down(ops);
            if (split[d].same_ends(ops, before)) continue;  // the same order, the same peak
            next_peak[d] = split[d].peak(ops);
            if (next_peak[d] > peak[d] + 1e-9) {
                split[d].copy_ends(before, ops);
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
    if (figures != nullptr) {
        figures->first_start = std::move(timing.first_start);
        figures->last_end = std::move(timing.last_end);
        figures->peak = std::move(peak);
    }
    return current;
}

}  // namespace detail

Schedule reorder(const Schedule& schedule, const Timeline& squeezed, const MemoryModel& memory) {
    const std::vector<double> duration = detail::timeline_durations(squeezed);
    detail::AsapTiming timing;
    timing.end = detail::end_times(squeezed);
    timing.makespan = squeezed.last_end();
    return detail::reorder_timed(schedule, duration, std::move(timing), memory);
}

}  // namespace pipesim
