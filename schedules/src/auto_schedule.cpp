// The Zero Bubble paper's memory-capped greedy scheduler.
#include "schedules/auto_schedule.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
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
          parked_(static_cast<std::size_t>(o.devices), false) {
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
            if (left_[d] > 0) queue_.emplace(free_at_[d], d);
        const std::size_t total = static_cast<std::size_t>(o_.microbatches) * stages_ * 3;
        std::size_t left = total;
        while (left > 0) {
            // Of a long run (50 million ops take seconds), how far it is, every 2^20 ops.
            if ((left & ((std::size_t{1} << 20) - 1)) == 0 && left < total && reporting_phases())
                report_phase(fmt::format(
                    "generating {}: the greedy list schedule, {:.0f} % placed", o_.name,
                    100.0 * static_cast<double>(total - left) / static_cast<double>(total)));
            if (queue_.empty()) throw std::invalid_argument(stuck_message());
            const int d = queue_.top().second;
            queue_.pop();
            if (step(d)) {
                --left;
                if (left_[d] > 0) queue_.emplace(free_at_[d], d);
            } else {
                wait(d);
                if (free_at_[d] == never)
                    parked_[d] = true;
                else
                    queue_.emplace(free_at_[d], d);
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
        // A device that found nothing to wait for may find something now if it holds the stage
        // this op's output goes to: it waits for nothing else (its memory is freed by its own
        // W's, which it would run). Waking every parked device on every op made p ≫ m
        // quadratic in p, and the others only failed again.
        const int next_stage = op.pass == Pass::F ? op.stage + 1 : op.stage - 1;
        if (op.pass != Pass::W && next_stage >= 0 && next_stage < stages_) {
            const int other = schedule_.stage_device[next_stage];
            if (parked_[other]) {
                parked_[other] = false;
                free_at_[other] = free_at_[d];
                queue_.emplace(free_at_[other], other);
            }
        }
        add_event(free_at_[d] + o_.costs.comm_latency);
        add_event(free_at_[d]);
    }

    // A time pushed before is in events_ still, or was dropped by a wait no later than every
    // wait to come (waits come in time order), which drops it again: pushing it once more
    // changes no wait. Consecutive ops often end at the same time (equal pass times).
    void add_event(double time) {
        if (time == last_event_[0] || time == last_event_[1]) return;
        last_event_[1] = last_event_[0];
        last_event_[0] = time;
        events_.push(time);
    }

    // Runs one op on device d at its free time if one can run; false if it must wait.
    bool step(int d) {
        const double t = free_at_[d];
        for (int s : local_stages_[d]) {
            const int mb = next_b_[s];
            if (mb < o_.microbatches && input_ready(Op{Pass::B, mb, s}) <= t + eps) {
                b_end_[at(mb, s)] = t + cost(s, Pass::B);
                ++next_b_[s];
                pending_w_[d].push_back(Op{Pass::W, mb, s});
                emit(d, Op{Pass::B, mb, s}, t, cost(s, Pass::B));
                return true;
            }
        }
        if (held_[d] + activation_ <= o_.memory_limit + eps) {
            for (int s : local_stages_[d]) {
                const int mb = next_f_[s];
                if (mb < o_.microbatches && input_ready(Op{Pass::F, mb, s}) <= t + eps) {
                    f_end_[at(mb, s)] = t + cost(s, Pass::F);
                    ++next_f_[s];
                    held_[d] += activation_;
                    emit(d, Op{Pass::F, mb, s}, t, cost(s, Pass::F));
                    return true;
                }
            }
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

    // Nothing can run on d now: move it to the next moment an input may arrive.
    void wait(int d) {
        // Devices are stepped in time order (d is the earliest) and events come no earlier than
        // the step that adds them: events up to now are of no use to any later wait.
        while (!events_.empty() && events_.top() <= free_at_[d] + eps)
            events_.pop();
        free_at_[d] = events_.empty() ? never : events_.top();
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
    /// Devices not done and not parked, by the time they are free (ties: the lowest index,
    /// each device once); parked: devices waiting with no known event (free at `never`).
    std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>
        queue_;
    std::vector<bool> parked_;  ///< per device
    /// When an output is done or arrives on another device: the times a waiting device looks
    /// again; earliest first.
    std::priority_queue<double, std::vector<double>, std::greater<>> events_;
    std::array<double, 2> last_event_{never, never};  ///< the two times pushed last
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
