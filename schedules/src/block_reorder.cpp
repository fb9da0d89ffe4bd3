// Building blocks: warm-up and cool-down reordering that never raises peak memory.
#include <algorithm>
#include <deque>
#include <limits>

#include "block_timing.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

bool is_backward(Pass pass) {
    return pass == Pass::B || pass == Pass::BW;
}

double makespan_of(const Timeline& t) {
    double last = 0;
    for (const auto& ops : t.device_ops)
        if (!ops.empty()) last = std::max(last, ops.back().end);
    return last;
}

class Reorderer {
  public:
    Reorderer(const Timeline& timing, const std::vector<double>& duration)
        : stages_(timing.stages()), end_(detail::end_times(timing)), duration_(duration) {}

    // Forwards before the first backward, in the order their inputs arrive.
    void warm_up(std::vector<Op>& ops) const {
        const auto first_back =
            std::find_if(ops.begin(), ops.end(), [](const Op& op) { return is_backward(op.pass); });
        std::stable_sort(ops.begin(), first_back,
                         [&](const Op& a, const Op& b) { return input_ready(a) < input_ready(b); });
    }

    // After the last forward: a backward whose input has arrived runs first (it unblocks
    // other devices); otherwise a pending W fills the wait.
    void cool_down(std::vector<Op>& ops) const {
        std::size_t last_f = ops.size();
        for (std::size_t k = ops.size(); k-- > 0;)
            if (ops[k].pass == Pass::F) {
                last_f = k;
                break;
            }
        if (last_f == ops.size()) return;
        std::deque<Op> backwards;
        std::deque<Op> weights;
        for (std::size_t k = last_f + 1; k < ops.size(); ++k)
            (ops[k].pass == Pass::W ? weights : backwards).push_back(ops[k]);
        std::vector<char> done(dense_op_count(max_microbatch(ops) + 1, stages_), 0);
        for (std::size_t k = 0; k <= last_f; ++k)
            done[dense_op_index(ops[k], stages_)] = 1;
        double t = end_[dense_op_index(ops[last_f], stages_)];
        std::size_t out = last_f + 1;
        auto place = [&](const Op& op, double start) {
            ops[out++] = op;
            done[dense_op_index(op, stages_)] = 1;
            t = start + duration(op);
        };
        auto weight_ready = [&](const Op& w) {
            return done[dense_op_index(Op{Pass::B, w.microbatch, w.stage}, stages_)] != 0;
        };
        while (!backwards.empty() || !weights.empty()) {
            const bool back_ready = !backwards.empty() && input_ready(backwards.front()) <= t;
            auto w = std::find_if(weights.begin(), weights.end(), weight_ready);
            if (back_ready || (w == weights.end() && !backwards.empty())) {
                const Op op = backwards.front();
                backwards.pop_front();
                place(op, std::max(t, input_ready(op)));
            } else {
                const Op op = *w;
                weights.erase(w);
                place(op, t);
            }
        }
    }

  private:
    static int max_microbatch(const std::vector<Op>& ops) {
        int m = 0;
        for (const Op& op : ops)
            m = std::max(m, op.microbatch);
        return m;
    }

    double duration(const Op& op) const {
        return duration_[static_cast<std::size_t>(op.stage) * pass_count +
                         static_cast<std::size_t>(op.pass)];
    }

    double end_of(const Op& op) const { return end_[dense_op_index(op, stages_)]; }

    // When the inputs an op needs from other stages are done, by the current timing.
    double input_ready(const Op& op) const {
        switch (op.pass) {
            case Pass::F:
                return op.stage > 0 ? end_of(Op{Pass::F, op.microbatch, op.stage - 1}) : 0;
            case Pass::B:
            case Pass::BW: {
                double ready = end_of(Op{Pass::F, op.microbatch, op.stage});
                if (op.stage + 1 < stages_) {
                    const double split = end_of(Op{Pass::B, op.microbatch, op.stage + 1});
                    ready = std::max(
                        ready,
                        split >= 0 ? split : end_of(Op{Pass::BW, op.microbatch, op.stage + 1}));
                }
                return ready;
            }
            case Pass::W:
                return end_of(Op{Pass::B, op.microbatch, op.stage});
        }
        return 0;
    }

    int stages_;
    std::vector<double> end_;
    const std::vector<double>& duration_;
};

}  // namespace

Schedule reorder(const Schedule& schedule, const Timeline& squeezed, const MemoryModel& memory) {
    std::vector<double> duration(static_cast<std::size_t>(schedule.stages()) * pass_count, 0.0);
    for (const auto& ops : squeezed.device_ops)
        for (const TimedOp& t : ops)
            duration[static_cast<std::size_t>(t.op.stage) * pass_count +
                     static_cast<std::size_t>(t.op.pass)] = t.end - t.start;
    Schedule current = schedule;
    Timeline timing = squeezed;
    // Ready times come from the previous round's timing; a few rounds let the devices' gains
    // propagate. A round is kept only if it is valid and does not lengthen the pipeline.
    constexpr int rounds = 4;
    for (int round = 0; round < rounds; ++round) {
        const Reorderer reorderer(timing, duration);
        Schedule next = current;
        for (int d = 0; d < schedule.devices; ++d) {
            std::vector<Op>& ops = next.device_ops[d];
            reorderer.warm_up(ops);
            reorderer.cool_down(ops);
            if (detail::order_peak(ops, memory) >
                detail::order_peak(current.device_ops[d], memory) + 1e-9)
                ops = current.device_ops[d];
        }
        if (next == current || validate(next)) break;
        Timeline next_timing = detail::asap_timeline(next, duration);
        if (makespan_of(next_timing) > makespan_of(timing)) break;
        current = std::move(next);
        timing = std::move(next_timing);
    }
    return current;
}

}  // namespace pipesim
