#pragma once
// Cost-aware planning of the V-shape schedules (v-min, v-half, v-zb, zb-v) and of the search's
// V-shape candidates: building blocks laid out for the real pass lengths, placed by a list
// schedule under a memory cap, each timed with the planning costs; the shortest is kept.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "block_timing.hpp"
#include "generators.hpp"
#include "schedules/auto_schedule.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::detail {

/// A candidate's figures under the planning costs: its length (longest device span, then
/// makespan: planned_length) and its peak activation in full-stage microbatches with the
/// costs' W memory share.
struct VPlanFigures {
    PlannedLength length;
    double peak = 0;
};

/// Keeps the best of the schedules offered whose peak stays within a cap: the shortest
/// longest span, then the lowest peak, then the shortest makespan (the first of equals).
class BestPlan {
  public:
    BestPlan(const PlanningCosts& costs, double cap) : costs_(costs), cap_(cap) {}

    /// Whether offer() checks a candidate's structure (validate_structure()) or knows it holds:
    /// an order made from one that holds by moving ops within their devices' orders.
    enum class Structure { check, known };

    /// Times `candidate` with the costs; keeps it if it fits the cap and beats the best so far.
    /// Returns whether it was kept.
    /// With `figures`, those are its figures (figures_of()): it is not timed again.
    bool offer(Schedule candidate, Structure structure = Structure::check,
               const VPlanFigures* figures = nullptr);
    bool empty() const { return !best_; }
    /// How many candidates offer() has kept (each better than the one before).
    std::size_t kept() const { return kept_; }
    /// A candidate offer() timed, with its figures.
    struct Offered {
        Schedule order;
        VPlanFigures figures;
    };
    /// Starts recording the best candidate offered from now on (offered_best()).
    void mark();
    /// Since the last mark(): the best candidate timed within the cap, kept or not; an order
    /// offered again (the best's, or the last one left out) does not count. Nothing when there
    /// was none or mark() was never called.
    const std::optional<Offered>& offered_best() const { return offered_best_; }
    /// offer() leaves out every candidate whose peak is above this.
    double peak_limit() const;
    const VPlanFigures& figures() const { return figures_; }
    /// The best offered. Precondition: !empty().
    Schedule take() { return std::move(*best_); }

  private:
    const PlanningCosts& costs_;
    double cap_;
    std::optional<Schedule> best_;
    VPlanFigures figures_;
    std::size_t kept_ = 0;
    bool recording_ = false;
    std::optional<Offered> offered_best_;
    /// The last candidate timed and left out (no better than the best then), with its figures:
    /// the same order offered again is not timed again.
    std::optional<Schedule> timed_out_;
    VPlanFigures timed_out_figures_;
};

/// The figures of `schedule` under `costs` (valid schedule; costs empty: unit times).
VPlanFigures plan_figures(const Schedule& schedule, const PlanningCosts& costs);

/// plan_figures() of `order` from what the step that made it saw (`seen`: its timing with
/// durations `1/scale` times the planning ones and no latency, and its peaks with the costs'
/// memory model): the same arithmetic on the same times when `scale` is a power of two, since
/// scaling by one neither rounds nor reorders times.
VPlanFigures figures_of(const Schedule& order, const OrderFigures& seen, double scale = 1.0);

/// The power of two `scale` with planning == scale · durations, entry by entry; 0 if none.
double power_of_two_scale(const std::vector<double>& planning,
                          const std::vector<double>& durations);

/// When the V-shape layouts are chosen on a shorter pipeline (2p or 3p microbatches: warm-up,
/// steady state and cool-down all occur) and only the winners placed for all m.
enum class Preselect {
    never,
    /// Problems between many_delays_ops and preselect_ops ops (v_plan.cpp): v-min and v-half.
    mid_sized,
    /// Instead, problems of at most many_delays_ops ops with more than 3p microbatches (tried
    /// on 3p; mid-sized ones place their undelayed layouts only), and no layout compacted on
    /// that path: zb-v and v-zb, planned under the most a V order holds (p full stages). There the
    /// slot compaction and the layouts tried on all m found no shorter order than this on any of
    /// 1,054 inputs (docs/automatic-schedules.md), at two to three times the cost.
    small_uncompacted,
};

/// What the V-shape candidates are built from.
struct VPlanRequest {
    int devices = 0;
    int microbatches = 0;
    /// Offsets of the V-shape block (vshape_block) to lay out; each with the turn of the V
    /// delayed by a few slot lengths as well.
    std::vector<int> offsets;
    /// Also place by the memory-capped greedy list scheduler (auto_schedule on the V).
    bool greedy = true;
    /// Also lay out blocks whose chains advance by one offset on the first devices and by a
    /// smaller one on the others (small problems only).
    bool sections = false;
    /// When every layout is tried on fewer microbatches first and the winners placed for all m
    /// (the thresholds in v_plan.cpp).
    Preselect preselect = Preselect::never;
};

/// Offers `best` the V-shape candidates of `request`, planned with `costs` (non-empty): every
/// block of the offsets, laid out with unit slots and with slots in the ratio of the pass
/// times, repeated and placed three ways (the repeated order squeezed; warm-up and cool-down
/// reordered; idle slots filled under the cap, timed with the real pass lengths), and the
/// greedy list schedule under the cap. Candidates that cannot be built are skipped. Small
/// problems try more turn delays than large ones (the work grows with p·m per candidate).
/// Precondition: `best` times with the same `costs` and `cap` (an idle fill stops once a
/// device holds more than best.peak_limit() under the costs' W memory share).
void offer_v_candidates(const VPlanRequest& request, const PlanningCosts& costs, double cap,
                        BestPlan& best);

/// A registered V-shape generator's schedule: `unit_orders[0]` (its order planned for unit
/// slots, not validated: generate_schedule() checks it) when `options.planning` is empty or the
/// problem has more than 10⁶ ops; otherwise the best
/// of `unit_orders` and the candidates of `offsets`, under a cap of unit_orders[0]'s peak with the
/// unit memory model (the schedule's published peak), timed with options.planning. Named `name`.
/// A planned one is valid: it throws generate_schedule's std::invalid_argument otherwise (the V
/// generators validate themselves when they plan, ScheduleGenerator::validates_itself).
/// Precondition: unit_orders is not empty. `preselect`: VPlanRequest::preselect. `unit_structure`:
/// whether the unit orders' structure is checked (BestPlan::offer) or known to hold.
Schedule plan_v_schedule(const GeneratorOptions& options, std::vector<Schedule> unit_orders,
                         std::vector<int> offsets, const char* name,
                         Preselect preselect = Preselect::never,
                         BestPlan::Structure unit_structure = BestPlan::Structure::check);
/// The same for unit orders offered with their figures where those are plan_figures()'s
/// (no latency, planning durations a power of two times theirs, the same memory model).
Schedule plan_v_schedule(const GeneratorOptions& options, std::vector<UnitOrder> unit_orders,
                         std::vector<int> offsets, const char* name, Preselect preselect,
                         BestPlan::Structure unit_structure);

}  // namespace pipesim::detail
