// The Zero Bubble paper's memory-capped greedy scheduler.
#include "schedules/auto_schedule.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "schedules/op_dependencies.hpp"
#include "schedules/phases.hpp"
#include "schedules/placement.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

constexpr double never = std::numeric_limits<double>::infinity();
constexpr double eps = 1e-9;

class AutoScheduler {
  public:
    explicit AutoScheduler(const AutoScheduleOptions& o)
        : o_(o),
          stages_(o.devices * o.chunks),
          schedule_(make_empty_schedule(
              o.name, o.devices, o.microbatches, o.chunks,
              o.stage_device.empty() ? looped_placement(o.devices, o.chunks) : o.stage_device)),
          f_end_(static_cast<std::size_t>(o.microbatches * stages_), never),
          b_end_(f_end_.size(), never),
          next_f_(static_cast<std::size_t>(stages_), 0),
          next_b_(static_cast<std::size_t>(stages_), 0),
          free_at_(static_cast<std::size_t>(o.devices), 0.0),
          held_(static_cast<std::size_t>(o.devices), 0.0),
          pending_w_(static_cast<std::size_t>(o.devices)),
          left_(static_cast<std::size_t>(o.devices), 0),
          local_stages_(static_cast<std::size_t>(o.devices)),
          waiting_(static_cast<std::size_t>(o.devices), false),
          failed_at_(static_cast<std::size_t>(o.devices), 0.0),
          queued_(static_cast<std::size_t>(o.devices), 0) {
        // Later stages first: they are nearer the loss (V-shape: the second chunk).
        for (int s = stages_ - 1; s >= 0; --s)
            local_stages_[schedule_.stage_device[s]].push_back(s);
        for (int d = 0; d < o.devices; ++d)
            left_[d] = 3 * o.microbatches * static_cast<int>(local_stages_[d].size());
        activation_ = 1.0 / o.chunks;
        duration_ = planning_durations(o.costs, stages_);
    }

    Schedule run() {
        for (int d = 0; d < o_.devices; ++d)
            if (left_[d] > 0) enqueue(d);
        const std::size_t total = static_cast<std::size_t>(o_.microbatches) * stages_ * 3;
        std::size_t left = total;
        while (left > 0) {
            // Of a long run (50 million ops take seconds), how far it is, every 2^20 ops.
            if ((left & ((std::size_t{1} << 20) - 1)) == 0 && left < total && reporting_phases())
                report_phase(fmt::format(
                    "generating {}: the greedy list schedule, {:.0f} % placed", o_.name,
                    100.0 * static_cast<double>(total - left) / static_cast<double>(total)));
            if (queue_.empty()) throw std::invalid_argument(stuck_message());
            const auto [time, d, entry] = queue_.top();
            queue_.pop();
            if (entry != queued_[d]) continue;  // d was queued again, earlier (wake())
            waiting_[d] = false;
            if (step(d)) {
                --left;
                if (left_[d] > 0) enqueue(d);
            } else {
                wait(d);  // a device with no input known is queued again by wake()
                if (free_at_[d] != never) enqueue(d);
            }
        }
        return std::move(schedule_);
    }

  private:
    double cost(int s, Pass pass) const {
        return duration_[static_cast<std::size_t>(s) * pass_count + static_cast<std::size_t>(pass)];
    }
    std::size_t at(int mb, int s) const { return static_cast<std::size_t>(mb) * stages_ + s; }

    double arrival(double end, int from_stage, int to_device) const {
        return end +
               (schedule_.stage_device[from_stage] == to_device ? 0.0 : o_.costs.comm_latency);
    }
    double end_of(const Op& op) const {
        return (op.pass == Pass::F ? f_end_ : b_end_)[at(op.microbatch, op.stage)];
    }
    // When the inputs of `op` have arrived on its device (never: one has not run yet).
    double input_ready(const Op& op) const {
        const int device = schedule_.stage_device[op.stage];
        double ready = 0;
        for (const Op& input : predecessors(op, StageRange{0, stages_ - 1}, true))
            ready = std::max(ready, arrival(end_of(input), input.stage, device));
        return ready;
    }

    void emit(int d, Op op, double start, double length) {
        schedule_.device_ops[d].push_back(op);
        free_at_[d] = start + length;
        --left_[d];
        events_.insert(free_at_[d] + o_.costs.comm_latency);
        events_.insert(free_at_[d]);
        // A waiting device may run sooner if it holds the stage this op's output goes to: it
        // waits for nothing else (its memory is freed by its own W's, which it would run).
        const int next_stage = op.pass == Pass::F ? op.stage + 1 : op.stage - 1;
        if (op.pass != Pass::W && next_stage >= 0 && next_stage < stages_) {
            const int other = schedule_.stage_device[next_stage];
            if (waiting_[other]) wake(other);
        }
    }

    void enqueue(int d) { queue_.emplace(free_at_[d], d, ++queued_[d]); }

    // When the earliest input of an op d could run next arrives (never: none has been made).
    double earliest_input(int d) const {
        double need = never;
        candidates(d, [&](const Op& op) {
            need = std::min(need, input_ready(op));
            return false;
        });
        return need;
    }

    // The time a device that found nothing to run at failed_at_[d] runs next, where only its
    // inputs' arrivals can let it (never: none is known yet). A device looks again at each
    // moment an output is done or arrives (events_) after the last one it looked at, and
    // runs at the first at which an input is there: that is the first event from the
    // earliest input's arrival on (less the tolerance of step()), not before the next event.
    // Going there at once, instead of through every event in between, keeps the planner
    // linear in the ops: with unequal stage times few events coincide, and every waiting
    // device looked again at nearly every op's end (zb-2p with llama2-7b's times at p = 32,
    // m = 32,768: 3.8 s before, 1.1 s now; docs/automatic-schedules.md).
    double wake_time(int d) const {
        const double need = earliest_input(d);
        if (need == never) return never;
        auto next = events_.upper_bound(failed_at_[d] + eps);
        const auto ready = events_.lower_bound(need - eps);
        if (ready != events_.end() && (next == events_.end() || *ready > *next)) next = ready;
        return next == events_.end() ? never : *next;
    }

    // An output for a waiting device d was just made: d may run sooner than it was due.
    void wake(int d) {
        const double at = wake_time(d);
        if (!(at < free_at_[d])) return;
        free_at_[d] = at;
        enqueue(d);
    }

    // The ops device d may run next but a W, in the order step() tries them: each local
    // stage's next B, then, if the cap allows one more forward, each one's next F. Stops at
    // the first for which visit(op) returns true, and returns whether one did.
    template <class Visit>
    bool candidates(int d, Visit&& visit) const {
        for (int s : local_stages_[d])
            if (next_b_[s] < o_.microbatches && visit(Op{Pass::B, next_b_[s], s})) return true;
        if (held_[d] + activation_ <= o_.memory_limit + eps)
            for (int s : local_stages_[d])
                if (next_f_[s] < o_.microbatches && visit(Op{Pass::F, next_f_[s], s})) return true;
        return false;
    }

    // Runs one op on device d at its free time if one can run; false if it must wait.
    bool step(int d) {
        const double t = free_at_[d];
        Op op{};
        if (candidates(d, [&](const Op& c) { return input_ready(op = c) <= t + eps; })) {
            const double length = cost(op.stage, op.pass);
            if (op.pass == Pass::B) {
                b_end_[at(op.microbatch, op.stage)] = t + length;
                ++next_b_[op.stage];
                pending_w_[d].push_back(Op{Pass::W, op.microbatch, op.stage});
            } else {
                f_end_[at(op.microbatch, op.stage)] = t + length;
                ++next_f_[op.stage];
                held_[d] += activation_;
            }
            emit(d, op, t, length);
            return true;
        }
        if (!pending_w_[d].empty()) {
            const Op w = pending_w_[d].front();
            pending_w_[d].pop_front();
            held_[d] -= activation_;
            emit(d, w, t, cost(w.stage, Pass::W));
            return true;
        }
        return false;
    }

    // Nothing can run on d now: move it to the moment an input lets it (wake_time()).
    void wait(int d) {
        // Devices are stepped in time order (d is the earliest) and events come no earlier than
        // the step that adds them: events up to now are of no use to any later wait.
        events_.erase(events_.begin(), events_.upper_bound(free_at_[d] + eps));
        failed_at_[d] = free_at_[d];
        waiting_[d] = true;
        free_at_[d] = wake_time(d);
    }

    std::string stuck_message() const {
        return fmt::format(
            "{}: no schedule fits a memory cap of {:g} per device (one microbatch needs {:g} on "
            "a device, as it holds all its chunks' activations until their backward)",
            o_.name, o_.memory_limit, activation_ * o_.chunks);
    }

    const AutoScheduleOptions& o_;
    int stages_;
    Schedule schedule_;
    std::vector<double> f_end_;
    std::vector<double> b_end_;
    std::vector<int> next_f_;
    std::vector<int> next_b_;
    std::vector<double> free_at_;
    std::vector<double> held_;
    std::vector<std::deque<Op>> pending_w_;
    std::vector<int> left_;  ///< per device, the ops it has yet to run
    std::vector<std::vector<int>> local_stages_;
    /// Devices not done, by the time they are free (ties: the lowest index), each with the
    /// count of its entries so far: an entry older than queued_[d] was replaced by an earlier
    /// one (wake()). A waiting device with no input known (free at `never`) has none.
    std::priority_queue<std::tuple<double, int, unsigned>,
                        std::vector<std::tuple<double, int, unsigned>>, std::greater<>>
        queue_;
    std::vector<bool> waiting_;      ///< per device: found nothing to run, due at free_at_
    std::vector<double> failed_at_;  ///< per device: when it last found nothing to run
    std::vector<unsigned> queued_;   ///< per device: its entries in queue_ so far
    /// When an output is done or arrives on another device: the times a waiting device may
    /// look again.
    std::set<double> events_;
    double activation_ = 1;
    std::vector<double> duration_;  ///< planning_durations, by stage·pass_count + pass
};

bool is_time(double x) {
    return x >= 0 && std::isfinite(x);
}

}  // namespace

Schedule auto_schedule(const AutoScheduleOptions& options) {
    if (options.devices < 1 || options.microbatches < 1 || options.chunks < 1)
        throw std::invalid_argument(fmt::format("{}: p, m and v must be ≥ 1", options.name));
    const StageCosts& times = options.costs.times;
    const bool valid =
        std::all_of(times.forward.begin(), times.forward.end(), is_time) &&
        std::all_of(times.backward_input.begin(), times.backward_input.end(), is_time) &&
        std::all_of(times.backward_weight.begin(), times.backward_weight.end(), is_time);
    if (!valid || !(options.costs.comm_latency >= 0))
        throw std::invalid_argument(
            fmt::format("{}: pass times must be finite and ≥ 0 and latency ≥ 0", options.name));
    if (!options.costs.empty()) check_stage_costs(times, options.devices * options.chunks);
    Schedule s = AutoScheduler(options).run();
    if (reporting_phases())
        report_phase(fmt::format("generating {}: checking the greedy list schedule", options.name));
    require_valid(s);
    return s;
}

}  // namespace pipesim
