#pragma once
// Memory-capped automatic scheduling (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR
// 2024, Section 3): a greedy timed list scheduler in which each device, whenever it is free,
// runs a backward B whose inputs have arrived, else a forward if its activation memory stays
// within the cap, else a pending W, else waits; and the paper's round-based heuristic.

#include <string>
#include <vector>

#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

/// What auto_schedule is asked for. `costs` are per virtual stage (empty: every chunk pass
/// lasts 1, no latency; its memory share is not used: W holds M_W = M_B until it runs);
/// `memory_limit` is the cap on each device's held activations in full-stage microbatch
/// units (a chunk holds 1/v).
struct AutoScheduleOptions {
    std::string name = "auto";
    int devices = 0;
    int microbatches = 0;
    int chunks = 1;
    std::vector<int> stage_device;  ///< empty: looped placement
    PlanningCosts costs;
    double memory_limit = 0;
};

/// The schedule the heuristic builds (valid, every device's peak ≤ memory_limit). Throws
/// std::invalid_argument when the cap is below one microbatch's activations on some device
/// (no schedule fits), naming the cap and what the smallest feasible one is.
Schedule auto_schedule(const AutoScheduleOptions& options);

/// How long a schedule runs with planning costs (every dependency between devices pays the
/// latency): the longest device span (first start to last end; the paper's "cost") and the
/// makespan. Precondition: the schedule is valid and has `costs` for each of its stages
/// (or `costs` is empty: unit times).
struct PlannedLength {
    double longest_span = 0;
    double makespan = 0;
    bool operator<(const PlannedLength& other) const;
};
PlannedLength planned_length(const Schedule& schedule, const PlanningCosts& costs);

/// The duration table (pass_durations) of `costs` for `stages` stages; unit times when it has
/// none.
std::vector<double> planning_durations(const PlanningCosts& costs, int stages);

/// The Zero Bubble paper's round-based heuristic (Qi et al., ICLR 2024, §3.1) for one chunk
/// per device: a warm-up of as many forwards as fill the wait for the first backward, then
/// rounds of one F and one B per stage with W's filling waits and freeing memory, then the
/// remaining W's. The paper grid-searches three binary choices, its authors' code takes a
/// fourth (the first stage's pending W's cleared before each backward once its forwards are
/// done); this returns, in the order of the 16 choices (the paper's eight first), the schedule
/// of each choice that keeps every device within `memory_limit` full-stage microbatches (F adds
/// one, B releases 1 − costs.w_memory_share, W the rest; none when the cap is below what a
/// stage needs). `costs` are per stage (empty: unit times, no latency).
struct PlannedSchedule {
    Schedule schedule;
    PlannedLength length;  ///< planned_length(schedule, costs), from the heuristic's timing
};
std::vector<PlannedSchedule> zero_bubble_heuristic(const std::string& name, int devices,
                                                   int microbatches, const PlanningCosts& costs,
                                                   double memory_limit);

/// The shortest of candidate schedules by their lengths (the first of equal ones), offered
/// one at a time: holds only the shortest so far, so large candidates need not all be kept.
class ShortestSchedule {
  public:
    /// Keeps `candidate` if it is shorter than every one offered before.
    void offer(PlannedSchedule candidate);
    /// Whether offer() would keep a candidate of this length.
    bool takes(const PlannedLength& length) const { return !held_ || length < best_.length; }
    /// Whether nothing was offered.
    bool empty() const { return !held_; }
    /// The shortest offered. Precondition: !empty().
    Schedule take();

  private:
    bool held_ = false;
    PlannedSchedule best_;
};

/// zero_bubble_heuristic()'s candidates, offered to `shortest` in the same order as each is
/// built.
void offer_zero_bubble_candidates(const std::string& name, int devices, int microbatches,
                                  const PlanningCosts& costs, double memory_limit,
                                  ShortestSchedule& shortest);

}  // namespace pipesim
