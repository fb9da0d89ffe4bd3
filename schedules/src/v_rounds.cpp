// A round-based list schedule of the V-shape placement under a memory cap, planned with the
// pass times. The approach follows the one the Zero Bubble authors describe for their V
// schedules (sail-sg/zero-bubble-pipeline-parallelism, the V-ZB scheduler): fill the first
// wait of each device with first-chunk forwards while memory is kept for the rest of the V,
// then run rounds of one backward and one forward per device, putting pending W's into the
// waits they fit in, or into longer waits when a device has idled less than the others.
#include "v_rounds.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <utility>

#include "schedules/placement.hpp"

namespace pipesim::detail {

namespace {

constexpr double eps = 1e-9;
constexpr double unplaced = -1;

// Chunk 0 of device d runs stage d (the first half of the V), chunk 1 stage 2p−1−d.
class RoundPlanner {
  public:
    RoundPlanner(int devices, int microbatches, const PlanningCosts& costs, double cap,
                 const VRoundChoices& choices, const std::vector<double>& allowed_idle)
        : p_(devices),
          m_(microbatches),
          duration_(planning_durations(costs, 2 * devices)),
          latency_(costs.comm_latency),
          activation_(0.5),
          b_release_(0.5 * (1 - costs.w_memory_share)),
          w_release_(0.5 * costs.w_memory_share),
          cap_(cap),
          choices_(choices),
          allowed_(allowed_idle),
          schedule_(make_empty_schedule("v-rounds", devices, microbatches, 2,
                                        vshape_placement(devices, 2))),
          end_(3 * static_cast<std::size_t>(2 * devices * microbatches), unplaced),
          now_(static_cast<std::size_t>(devices), 0.0),
          idle_(now_.size(), 0.0),
          held_(now_.size(), 0.0),
          count_(now_.size(), std::array<std::array<int, 2>, 3>{}),
          pending_(now_.size()) {
        if (allowed_.empty()) allowed_.assign(now_.size(), -1);
        most_allowed_ = *std::max_element(allowed_.begin(), allowed_.end());
        for (auto& ops : schedule_.device_ops)
            ops.reserve(static_cast<std::size_t>(6 * m_));
    }

    bool run() {
        for (int d = 0; d < p_; ++d)
            if (!put(d, Pass::F, 0)) return false;
        if (!fill_turn() || !balance_forwards()) return false;
        // Rounds until every forward and backward has run; a round in which nothing runs
        // means the rules cannot finish within the cap.
        while (placed_ < 4 * p_ * m_) {
            const long before = placed_;
            if (!backward_round() || !forward_round()) return false;
            if (placed_ == before) return false;
        }
        for (int d = 0; d < p_; ++d)
            while (!pending_[d].empty())
                if (!put_w(d)) return false;
        for (int d = 0; d < p_; ++d)
            if (schedule_.device_ops[d].size() != static_cast<std::size_t>(6 * m_)) return false;
        return true;
    }

    Schedule take() { return std::move(schedule_); }
    const std::vector<double>& idle() const { return idle_; }

  private:
    int stage(int d, int chunk) const { return chunk == 0 ? d : 2 * p_ - 1 - d; }
    int kind(Pass pass) const { return pass == Pass::F ? 0 : pass == Pass::B ? 1 : 2; }
    int& count(int d, Pass pass, int chunk) { return count_[d][kind(pass)][chunk]; }
    double& end(Pass pass, int s, int mb) {
        return end_[(static_cast<std::size_t>(kind(pass)) * 2 * p_ + s) * m_ + mb];
    }
    double dur(int s, Pass pass) const {
        return duration_[static_cast<std::size_t>(s) * pass_count + static_cast<std::size_t>(pass)];
    }
    int device_of(int s) const { return s < p_ ? s : 2 * p_ - 1 - s; }

    // The op on another device that the next (pass, chunk) op of device d waits for, as
    // (stage, pass); stage −1 when its input is on d itself (or it has none).
    std::pair<int, Pass> remote_input(int d, Pass pass, int chunk) const {
        if (pass == Pass::F) {
            if (chunk == 0 && d > 0) return {d - 1, Pass::F};
            if (chunk == 1 && d < p_ - 1) return {stage(d + 1, 1), Pass::F};
        } else if (pass == Pass::B) {
            if (chunk == 1 && d > 0) return {stage(d - 1, 1), Pass::B};
            if (chunk == 0 && d < p_ - 1) return {d + 1, Pass::B};
        }
        return {-1, Pass::F};
    }
    // When the remote input of the next (pass, chunk) op of d arrives (−1: none or not run).
    double arrival(int d, Pass pass, int chunk) {
        const auto [s, input] = remote_input(d, pass, chunk);
        const int mb = count(d, pass, chunk);
        if (s < 0 || mb >= m_) return unplaced;
        const double e = end(input, s, mb);
        return e < 0 ? unplaced : e + latency_;
    }
    // Whether the remote input of the next (pass, chunk) op of d has run.
    bool input_ran(int d, Pass pass, int chunk) {
        const auto [s, input] = remote_input(d, pass, chunk);
        const int mb = count(d, pass, chunk);
        return mb < m_ && (s < 0 || end(input, s, mb) >= 0);
    }

    // Whether every input of the next (pass, chunk) op of d has run (on d or elsewhere).
    bool inputs_ran(int d, Pass pass, int chunk) {
        const int s = stage(d, chunk);
        const int mb = count(d, pass, chunk);
        if (mb >= m_) return false;
        if (pass == Pass::F) return s == 0 || end(Pass::F, s - 1, mb) >= 0;
        if (pass == Pass::B)
            return end(Pass::F, s, mb) >= 0 && (s == 2 * p_ - 1 || end(Pass::B, s + 1, mb) >= 0);
        return end(Pass::B, s, mb) >= 0;
    }

    // Runs the next (pass, chunk) op of d as soon as its inputs allow. False when that breaks
    // the cap or an input has not run (the rules cannot finish this problem).
    bool put(int d, Pass pass, int chunk) {
        const int s = stage(d, chunk);
        const int mb = count(d, pass, chunk);
        if (mb >= m_) return false;
        double ready = 0;
        auto need = [&](Pass input_pass, int input_stage) {
            const double e = end(input_pass, input_stage, mb);
            if (e < 0) return false;
            ready = std::max(ready, e + (device_of(input_stage) == d ? 0 : latency_));
            return true;
        };
        bool ok = true;
        if (pass == Pass::F && s > 0) ok = need(Pass::F, s - 1);
        if (pass == Pass::B) ok = need(Pass::F, s) && (s == 2 * p_ - 1 || need(Pass::B, s + 1));
        if (pass == Pass::W) ok = need(Pass::B, s);
        if (!ok) return false;
        double change = pass == Pass::F ? activation_ : pass == Pass::B ? -b_release_ : -w_release_;
        if (held_[d] + change > cap_ + eps) return false;
        const double start = std::max(ready, now_[d]);
        if (!schedule_.device_ops[d].empty()) idle_[d] += start - now_[d];
        now_[d] = start + dur(s, pass);
        end(pass, s, mb) = now_[d];
        held_[d] += change;
        ++count(d, pass, chunk);
        if (pass != Pass::W) ++placed_;
        schedule_.device_ops[d].push_back(Op{pass, mb, s});
        if (pass == Pass::B) pending_[d].push_back(chunk);
        return true;
    }
    bool put_w(int d) {
        if (pending_[d].empty()) return false;
        const int chunk = pending_[d].front();
        pending_[d].pop_front();
        return put(d, Pass::W, chunk);
    }

    // The first-chunk forwards that fill each device's wait for its first second-chunk
    // forward, keeping memory for the second-chunk forwards still to come on its way back.
    bool fill_turn() {
        for (int d = p_ - 1; d >= 0; --d) {
            if (d < p_ - 1) {
                const double back = end(Pass::F, stage(d + 1, 1), 0) + latency_;
                while (held_[d] + activation_ * choices_.reserve * (1 + d) <= cap_ + eps &&
                       now_[d] + dur(d, Pass::F) <= back + eps && count(d, Pass::F, 0) < m_)
                    for (int j = 0; j <= d; ++j)
                        if (!put(j, Pass::F, 0)) return false;
            }
            if (!put(d, Pass::F, 1)) return false;
        }
        return true;
    }

    // Later devices catch up on forwards, alternating chunks from the last device back, until
    // each holds no fewer than the one before it.
    bool balance_forwards() {
        int chunk = 0;
        for (int d = 1; d < p_; ++d) {
            int guard = 4 * m_ + 4;
            while (total_forwards(d) < total_forwards(d - 1) ||
                   (count(d, Pass::F, 1) <= count(d - 1, Pass::F, 1) &&
                    count(d - 1, Pass::F, 1) < m_)) {
                if (--guard < 0) return false;
                bool any = false;
                for (int j = p_ - 1; j >= d; --j)
                    if (count(j, Pass::F, chunk) < m_ && held_[j] + activation_ <= cap_ + eps) {
                        if (!put(j, Pass::F, chunk)) return false;
                        any = true;
                    }
                chunk = 1 - chunk;
                if (!any && held_[d] + activation_ > cap_ + eps) break;  // memory is full
            }
        }
        return true;
    }
    int total_forwards(int d) { return count(d, Pass::F, 0) + count(d, Pass::F, 1); }

    double largest_idle(int d) const {
        const double most = *std::max_element(idle_.begin(), idle_.end());
        return std::max(most, most_allowed_ - allowed_[d]);
    }

    // Before the next (pass, chunk) op of d: W's that fit in its wait, and one more W when the
    // wait is longer than d may still idle (`fill`).
    bool fill_wait(int d, Pass pass, int chunk, bool fill) {
        const double arrives = arrival(d, pass, chunk);
        if (arrives < 0) return true;
        while (!pending_[d].empty() && arrives + eps >= now_[d] + dur(next_w_stage(d), Pass::W))
            if (!put_w(d)) return false;
        if (fill && !pending_[d].empty() && arrives - now_[d] > largest_idle(d) - idle_[d] + eps)
            return put_w(d);
        return true;
    }
    int next_w_stage(int d) const { return stage(d, pending_[d].front()); }

    bool backward_round() {
        std::vector<std::pair<int, int>> order;  // (device, chunk)
        std::vector<int> second;                 // devices running a second-chunk backward
        for (int d = p_ - 1; d >= 0; --d) {
            const bool first_chunk =
                count(d, Pass::B, 0) < count(d, Pass::B, 1) &&
                (d == p_ - 1 || input_ran(d, Pass::B, 0) || count(d, Pass::B, 1) >= m_);
            if (first_chunk)
                order.emplace_back(d, 0);
            else
                second.push_back(d);
        }
        for (auto it = second.rbegin(); it != second.rend(); ++it)
            order.emplace_back(*it, 1);
        for (const auto& [d, chunk] : order) {
            if (count(d, Pass::B, chunk) >= m_ || !inputs_ran(d, Pass::B, chunk)) continue;
            if (!fill_wait(d, Pass::B, chunk, chunk == 0 || choices_.fill_before_backward))
                return false;
            if (!put(d, Pass::B, chunk)) return false;
        }
        return true;
    }

    bool forward_round() {
        for (int d = 0; d < p_; ++d) {
            if (count(d, Pass::F, 1) >= m_) continue;
            int chunk = -1;
            if (count(d, Pass::F, 1) >= count(d, Pass::F, 0))
                chunk = 0;
            else if (d == p_ - 1 || input_ran(d, Pass::F, 1))
                chunk = 1;
            else if (count(d, Pass::F, 0) < m_ && input_ran(d, Pass::F, 0))
                chunk = 0;
            if (chunk < 0 || !inputs_ran(d, Pass::F, chunk)) continue;
            while (held_[d] + activation_ > cap_ + eps && !pending_[d].empty())
                if (!put_w(d)) return false;
            if (held_[d] + activation_ > cap_ + eps) continue;  // waits for a backward
            if (!fill_wait(d, Pass::F, chunk, choices_.fill_before_forward)) return false;
            if (!put(d, Pass::F, chunk)) return false;
        }
        return true;
    }

    int p_;
    int m_;
    std::vector<double> duration_;
    double latency_;
    double activation_;  ///< one chunk's activations, full-stage units
    double b_release_;
    double w_release_;
    double cap_;
    VRoundChoices choices_;
    std::vector<double> allowed_;
    double most_allowed_ = -1;
    long placed_ = 0;  ///< forwards and backwards run
    Schedule schedule_;
    std::vector<double> end_;  ///< by pass kind, stage, microbatch; −1 until run
    std::vector<double> now_;
    std::vector<double> idle_;
    std::vector<double> held_;
    std::vector<std::array<std::array<int, 2>, 3>> count_;
    std::vector<std::deque<int>> pending_;  ///< chunks of the B's whose W has not run
};

}  // namespace

void offer_v_rounds(int devices, int microbatches, const PlanningCosts& costs, double cap,
                    int refinements, bool all_choices, BestPlan& best) {
    if (devices < 2) return;
    for (int reserve : {2, 1})
        for (bool before_backward : {true, false}) {
            for (bool before_forward : {true, false}) {
                if (!all_choices && !(reserve == 2 && before_backward && before_forward)) continue;
                const VRoundChoices choices{before_backward, before_forward, reserve};
                std::vector<double> allowed;
                double previous = std::numeric_limits<double>::infinity();
                for (int k = 0; k <= refinements; ++k) {
                    RoundPlanner planner(devices, microbatches, costs, cap, choices, allowed);
                    const bool ok = planner.run();
                    if (!ok) break;
                    const double most =
                        *std::max_element(planner.idle().begin(), planner.idle().end());
                    allowed = planner.idle();
                    best.offer(planner.take());
                    if (!(most < previous - eps)) break;
                    previous = most;
                }
            }
        }
}

}  // namespace pipesim::detail
