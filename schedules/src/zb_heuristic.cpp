// The Zero Bubble paper's round-based heuristic (Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024, §3.1), and the timing used to compare candidate schedules.
//
// The schedule is built one op at a time in a fixed order (stages' forwards first to last,
// then backwards last to first), and each op is timed as it is placed: it starts when its
// device is free and its input has arrived (plus the latency between devices). That is the
// as-soon-as-possible timing of the resulting order, so the heuristic sees exactly the
// bubbles the replay will find.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "block_timing.hpp"
#include "schedules/auto_schedule.hpp"
#include "schedules/op_dependencies.hpp"
#include "schedules/phases.hpp"
#include "schedules/placement.hpp"

namespace pipesim {

namespace {

constexpr double eps = 1e-9;

/// The heuristic's binary choices (HeuristicChoices), as the bits of a choice number.
constexpr int choice_count = 16;

/// The three binary choices the paper grid-searches, and a fourth from its authors' code.
struct HeuristicChoices {
    /// Warm-up: run only the forwards that end before the first backward arrives (a bubble
    /// shorter than one F may remain) instead of forwards until the device is busy past it
    /// (which may delay that backward a little).
    bool leave_gap_before_first_b = false;
    /// Steady state: a stage that is two or more forwards ahead of the next one may skip its
    /// forward this round when that adds no bubble.
    bool skip_forward_when_ahead = false;
    /// A wait shorter than a W, which would not raise the largest accumulated bubble of any
    /// stage, is still filled with a W (which then delays the next op a little).
    bool fill_small_waits = false;
    /// Not among the paper's choices; its authors' scheduler always takes it
    /// (sail-sg/zero-bubble-pipeline-parallelism, scheduler/zb.py): the first stage, its
    /// forwards all run, clears its pending W's before each backward. Pipesim tries both:
    /// with unequal stages either may be the shorter.
    bool clear_first_stage_ws = false;
};

class RoundScheduler {
  public:
    RoundScheduler(const std::string& name, int devices, int microbatches,
                   const PlanningCosts& costs, double memory_limit, HeuristicChoices choices)
        : p_(devices),
          m_(microbatches),
          duration_(planning_durations(costs, devices)),
          comm_(costs.comm_latency),
          w_share_(costs.w_memory_share),
          cap_(memory_limit),
          choices_(choices),
          schedule_(
              make_empty_schedule(name, devices, microbatches, 1, looped_placement(devices, 1))),
          free_at_(static_cast<std::size_t>(devices), 0.0),
          idle_(static_cast<std::size_t>(devices), 0.0),
          first_start_(static_cast<std::size_t>(devices), 0.0),
          held_(static_cast<std::size_t>(devices), 0.0),
          placed_(static_cast<std::size_t>(devices), {0, 0, 0}),
          f_end_(static_cast<std::size_t>(devices * microbatches), 0.0),
          b_end_(f_end_.size(), 0.0) {}

    /// The schedule, or nothing when the cap cannot be kept with these choices.
    std::optional<Schedule> run() {
        for (auto& ops : schedule_.device_ops)
            ops.reserve(static_cast<std::size_t>(3 * m_));
        if (!warm_up()) return std::nullopt;
        for (int mb = 1; mb < m_; ++mb)
            if (!round(mb)) return std::nullopt;
        for (int s = 0; s < p_; ++s)
            while (count(s, Pass::W) < m_)
                put(s, Pass::W);
        return std::move(schedule_);
    }

    /// Which of the four choices (bits 1, 2, 4, 8 as in build_candidates) decided something in
    /// run(): a decision the other value of that choice would have taken differently. A run
    /// with a choice that decided nothing flipped takes every decision alike: the same
    /// schedule.
    int mattered() const { return mattered_; }

    /// planned_length of the schedule run() built, from the times it placed the ops at.
    PlannedLength length() const {
        PlannedLength length;
        for (int s = 0; s < p_; ++s) {
            const double end = free_at_[static_cast<std::size_t>(s)];
            length.longest_span =
                std::max(length.longest_span, end - first_start_[static_cast<std::size_t>(s)]);
            length.makespan = std::max(length.makespan, end);
        }
        return length;  // stage 0 starts at time 0
    }

  private:
    enum Kind { forward = 0, backward = 1, weight = 2 };
    static constexpr int leave_gap_bit = 1;
    static constexpr int skip_forward_bit = 2;
    static constexpr int fill_small_waits_bit = 4;
    static constexpr int clear_first_stage_ws_bit = 8;

    static int kind(Pass pass) {
        return pass == Pass::F ? forward : pass == Pass::B ? backward : weight;
    }
    std::size_t at(int s, int mb) const { return static_cast<std::size_t>(s * m_ + mb); }
    int count(int s, Pass pass) const { return placed_[static_cast<std::size_t>(s)][kind(pass)]; }
    double cost(int s, Pass pass) const {
        return duration_[static_cast<std::size_t>(s) * pass_count + static_cast<std::size_t>(pass)];
    }
    double& free_at(int s) { return free_at_[static_cast<std::size_t>(s)]; }
    double& held(int s) { return held_[static_cast<std::size_t>(s)]; }
    double idle(int s) const { return idle_[static_cast<std::size_t>(s)]; }
    double largest_idle() const { return largest_idle_; }
    bool w_pending(int s) const { return count(s, Pass::W) < count(s, Pass::B); }
    bool memory_allows_forward(int s) { return held(s) + 1 <= cap_ + eps; }

    /// When the inputs of stage s's next `pass` have arrived. Preconditions: they are placed
    /// (the round order guarantees it).
    double input_ready(int s, Pass pass) const {
        double ready = 0;
        for (const Op& input :
             predecessors(Op{pass, count(s, pass), s}, StageRange{0, p_ - 1}, true))
            ready = std::max(
                ready,
                (input.pass == Pass::F ? f_end_ : b_end_)[at(input.stage, input.microbatch)] +
                    (input.stage == s ? 0.0 : comm_));
        return ready;
    }

    void put(int s, Pass pass) {
        const int mb = count(s, pass);
        const double start = std::max(free_at(s), input_ready(s, pass));
        if (schedule_.device_ops[static_cast<std::size_t>(s)].empty()) {
            first_start_[static_cast<std::size_t>(s)] = start;
        } else {
            double& idle = idle_[static_cast<std::size_t>(s)];
            idle += start - free_at(s);
            largest_idle_ = std::max(largest_idle_, idle);  // idle times only grow
        }
        free_at(s) = start + cost(s, pass);
        if (pass == Pass::F) {
            f_end_[at(s, mb)] = free_at(s);
            held(s) += 1;
        } else if (pass == Pass::B) {
            b_end_[at(s, mb)] = free_at(s);
            held(s) -= 1 - w_share_;
        } else {
            held(s) -= w_share_;
        }
        schedule_.device_ops[static_cast<std::size_t>(s)].push_back(Op{pass, mb, s});
        ++placed_[static_cast<std::size_t>(s)][kind(pass)];
    }

    /// Runs W's until a forward fits under the cap; false if it cannot.
    bool make_room_for_forward(int s) {
        while (!memory_allows_forward(s)) {
            if (!w_pending(s) || w_share_ <= 0) return false;
            put(s, Pass::W);
        }
        return true;
    }

    /// Fills the wait for an input arriving at `ready` with pending W's: every W that ends
    /// before it, then one more if the remaining wait would raise the largest bubble of any
    /// stage (or always, with fill_small_waits).
    void fill_wait(int s, double ready) {
        while (w_pending(s) && free_at(s) + cost(s, Pass::W) <= ready + eps)
            put(s, Pass::W);
        if (!w_pending(s) || free_at(s) >= ready - eps) return;
        const bool raises_largest = ready - free_at(s) > largest_idle() - idle(s) + eps;
        if (!raises_largest) mattered_ |= fill_small_waits_bit;
        if (raises_largest || choices_.fill_small_waits) put(s, Pass::W);
    }

    /// Microbatch 0: its forward on every stage, then as many extra forwards per stage as fill
    /// the wait for its backward (within the cap, each stage at least one forward ahead of
    /// the next until they run out), then its backward from the last stage to the first.
    bool warm_up() {
        for (int s = 0; s < p_; ++s) {
            if (!memory_allows_forward(s)) return false;
            put(s, Pass::F);
        }
        std::vector<int> extra(static_cast<std::size_t>(p_), 0);
        double backward_end = free_at(p_ - 1) + cost(p_ - 1, Pass::B);
        for (int s = p_ - 2; s >= 0; --s) {
            const double arrival = backward_end + comm_;
            double busy_until = free_at(s);
            double memory = held(s);
            int& n = extra[static_cast<std::size_t>(s)];
            while (1 + n < m_ && memory + 1 <= cap_ + eps) {
                const double f = cost(s, Pass::F);
                const bool leave_gap = busy_until + f > arrival + eps;
                const bool fill_gap = busy_until >= arrival - eps;
                if (leave_gap != fill_gap) mattered_ |= leave_gap_bit;
                if (choices_.leave_gap_before_first_b ? leave_gap : fill_gap) break;
                busy_until += f;
                memory += 1;
                ++n;
            }
            backward_end = std::max(busy_until, arrival) + cost(s, Pass::B);
        }
        // Stage s keeps at least one forward more than stage s + 1 (Qi et al. §3.1) unless
        // the earlier stage has run all m.
        for (int s = 1; s < p_; ++s) {
            const int before = extra[static_cast<std::size_t>(s - 1)];
            const int most = 1 + before >= m_ ? before : std::max(0, before - 1);
            extra[static_cast<std::size_t>(s)] = std::min(extra[static_cast<std::size_t>(s)], most);
        }
        for (int s = 0; s < p_; ++s)
            for (int k = 0; k < extra[static_cast<std::size_t>(s)]; ++k)
                put(s, Pass::F);
        for (int s = p_ - 1; s >= 0; --s)
            put(s, Pass::B);
        return true;
    }

    /// Whether stage s, ahead of stage s + 1 by two or more forwards, can skip its forward
    /// this round: it is busy until the next backward arrives anyway, or that wait is too
    /// short for the forward (and the W's that make room for it) and absorbing it does not
    /// raise the largest bubble.
    bool skip_forward(int s) {
        const double next_backward =
            free_at(s + 1) + cost(s + 1, Pass::F) + cost(s + 1, Pass::B) + comm_;
        if (free_at(s) >= next_backward - eps) return true;
        double room_cost = 0;
        double memory = held(s) + 1;
        for (int w = count(s, Pass::W); memory > cap_ + eps && w < count(s, Pass::B); ++w) {
            room_cost += cost(s, Pass::W);
            memory -= w_share_;
        }
        if (free_at(s) + cost(s, Pass::F) + room_cost <= next_backward + eps) return false;
        return next_backward - free_at(s) <= largest_idle() - idle(s) + eps;
    }

    /// Round mb: one forward per stage (first to last, unless skipped), then microbatch mb's
    /// backward from the last stage to the first, W's filling the waits.
    bool round(int mb) {
        std::vector<char> forward_now(static_cast<std::size_t>(p_), 0);
        for (int s = 0; s < p_; ++s) {
            bool wants = count(s, Pass::F) < m_;
            if (wants && s + 1 < p_ && count(s, Pass::F) >= count(s + 1, Pass::F) + 2 &&
                skip_forward(s)) {
                mattered_ |= skip_forward_bit;
                wants = !choices_.skip_forward_when_ahead;
            }
            forward_now[static_cast<std::size_t>(s)] = wants;
        }
        // A stage runs a forward only if every later stage does: the gaps between neighbours'
        // forward counts never grow.
        for (int s = p_ - 2; s >= 0; --s)
            forward_now[static_cast<std::size_t>(s)] = forward_now[static_cast<std::size_t>(s)] &&
                                                       forward_now[static_cast<std::size_t>(s + 1)];
        for (int s = 0; s < p_; ++s) {
            if (!forward_now[static_cast<std::size_t>(s)]) continue;
            if (!make_room_for_forward(s)) return false;
            fill_wait(s, input_ready(s, Pass::F));
            put(s, Pass::F);
        }
        for (int s = p_ - 1; s >= 0; --s) {
            if (count(s, Pass::B) != mb || count(s, Pass::F) <= mb)
                throw std::logic_error(fmt::format(
                    "zero bubble heuristic: stage {} not ready for backward {}", s, mb));
            fill_wait(s, input_ready(s, Pass::B));
            if (s == 0 && count(s, Pass::F) == m_ && w_pending(s)) {
                mattered_ |= clear_first_stage_ws_bit;
                if (choices_.clear_first_stage_ws)
                    while (w_pending(s))
                        put(s, Pass::W);
            }
            put(s, Pass::B);
        }
        return true;
    }

    int p_;
    int m_;
    std::vector<double> duration_;  ///< pass_durations, by stage·pass_count + pass
    double comm_;
    double w_share_;
    double cap_;
    HeuristicChoices choices_;
    Schedule schedule_;
    std::vector<double> free_at_;
    std::vector<double> idle_;
    double largest_idle_ = 0;
    int mattered_ = 0;
    std::vector<double> first_start_;
    std::vector<double> held_;
    std::vector<std::array<int, 3>> placed_;
    std::vector<double> f_end_;
    std::vector<double> b_end_;
};

}  // namespace

namespace {

// Builds the heuristic's schedule under each choice and passes every one that keeps the cap
// to `on_candidate(choice, candidate)`, in the order of the choices. A run whose choices differ
// from an earlier run's only in ones that decided nothing there takes every decision alike:
// instead of building that schedule again, `on_duplicate(choice, earlier choice, its length)`
// is called (when the earlier one kept the cap; nothing otherwise), and the schedule is built
// and passed to `on_candidate` only if that returns true.
template <class OnCandidate, class OnDuplicate>
void build_candidates(const std::string& name, int devices, int microbatches,
                      const PlanningCosts& costs, double memory_limit, OnCandidate&& on_candidate,
                      OnDuplicate&& on_duplicate) {
    if (devices < 1 || microbatches < 1)
        throw std::invalid_argument(fmt::format("{}: p and m must be ≥ 1", name));
    struct Run {
        int choice;
        int mattered;
        bool kept;
        PlannedLength length;
    };
    std::vector<Run> runs;
    for (int choice = 0; choice < choice_count; ++choice) {
        const auto same = std::find_if(runs.begin(), runs.end(), [&](const Run& r) {
            return ((choice ^ r.choice) & r.mattered) == 0;
        });
        const bool duplicate = same != runs.end();
        if (duplicate) {
            const Run run = *same;
            runs.push_back(Run{choice, run.mattered, run.kept, run.length});
            if (!run.kept || !on_duplicate(choice, run.choice, run.length)) continue;
        }
        const HeuristicChoices choices{(choice & 1) != 0, (choice & 2) != 0, (choice & 4) != 0,
                                       (choice & 8) != 0};
        if (reporting_phases())
            report_phase(fmt::format("generating {}: the heuristic's choice {} of {}", name,
                                     choice + 1, choice_count));
        RoundScheduler scheduler(name, devices, microbatches, costs, memory_limit, choices);
        auto schedule = scheduler.run();
        if (!duplicate)
            runs.push_back(
                Run{choice, scheduler.mattered(), schedule.has_value(), scheduler.length()});
        if (schedule)
            on_candidate(choice, PlannedSchedule{std::move(*schedule), scheduler.length()});
    }
}

}  // namespace

std::vector<PlannedSchedule> zero_bubble_heuristic(const std::string& name, int devices,
                                                   int microbatches, const PlanningCosts& costs,
                                                   double memory_limit) {
    std::vector<PlannedSchedule> candidates;
    std::vector<int> candidate_of(choice_count, -1);  // per choice, its candidate
    build_candidates(
        name, devices, microbatches, costs, memory_limit,
        [&](int choice, PlannedSchedule c) {
            candidate_of[static_cast<std::size_t>(choice)] = static_cast<int>(candidates.size());
            candidates.push_back(std::move(c));
        },
        [&](int choice, int earlier, const PlannedLength&) {
            const int k = candidate_of[static_cast<std::size_t>(earlier)];
            candidate_of[static_cast<std::size_t>(choice)] = static_cast<int>(candidates.size());
            candidates.push_back(candidates[static_cast<std::size_t>(k)]);
            return false;
        });
    return candidates;
}

void offer_zero_bubble_candidates(const std::string& name, int devices, int microbatches,
                                  const PlanningCosts& costs, double memory_limit,
                                  ShortestSchedule& shortest) {
    // A schedule built before has the same length: it is built again only if that length would
    // replace the shortest (candidates may improve on a shortest that the earlier one did not,
    // since lengths within the tolerance compare by makespan).
    build_candidates(
        name, devices, microbatches, costs, memory_limit,
        [&](int, PlannedSchedule c) { shortest.offer(std::move(c)); },
        [&](int, int, const PlannedLength& length) { return shortest.takes(length); });
}

void ShortestSchedule::offer(PlannedSchedule candidate) {
    if (held_ && !(candidate.length < best_.length)) return;
    best_ = std::move(candidate);
    held_ = true;
}

Schedule ShortestSchedule::take() {
    held_ = false;
    return std::move(best_.schedule);
}

std::vector<double> planning_durations(const PlanningCosts& costs, int stages) {
    return pass_durations(costs.empty() ? uniform_stage_costs(stages, 1, 1, 1, 1) : costs.times);
}

bool PlannedLength::operator<(const PlannedLength& other) const {
    const double tolerance = 1e-9 * std::max(1.0, std::abs(other.longest_span));
    if (std::abs(longest_span - other.longest_span) > tolerance)
        return longest_span < other.longest_span;
    return makespan < other.makespan - tolerance;
}

PlannedLength planned_length(const Schedule& schedule, const PlanningCosts& costs) {
    const std::vector<double> duration = planning_durations(costs, schedule.stages());
    const double never = std::numeric_limits<double>::infinity();
    std::vector<double> first(static_cast<std::size_t>(schedule.devices), never);
    std::vector<double> last(first.size(), -never);
    std::vector<double> end;
    auto span = [&](int device, int, const Op&, double start, double finish) {
        first[static_cast<std::size_t>(device)] =
            std::min(first[static_cast<std::size_t>(device)], start);
        last[static_cast<std::size_t>(device)] = finish;
    };
    std::vector<double> slots;
    // A device's first op starts first and its last ends last.
    if (detail::quick_asap_walk(
            schedule, duration, costs.comm_latency, nullptr, slots,
            [](int, int, const Op&, double, double) {}, &first, &last)) {
        for (std::size_t d = 0; d < first.size(); ++d)
            if (schedule.device_ops[d].empty()) first[d] = never;
    } else {
        std::fill(first.begin(), first.end(), never);
        std::fill(last.begin(), last.end(), -never);
        const auto issue =
            asap_walk(schedule, duration, costs.comm_latency, end,
                      [&](int device, int position, const Op& op, const Predecessors&, double start,
                          double finish) { span(device, position, op, start, finish); });
        if (issue) throw InvalidSchedule(issue->message);
    }
    PlannedLength length;
    double earliest = never;
    for (std::size_t d = 0; d < first.size(); ++d) {
        if (first[d] == never) continue;  // a device without ops
        length.longest_span = std::max(length.longest_span, last[d] - first[d]);
        length.makespan = std::max(length.makespan, last[d]);
        earliest = std::min(earliest, first[d]);
    }
    if (earliest < never) length.makespan -= earliest;
    return length;
}

}  // namespace pipesim
