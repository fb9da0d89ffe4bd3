#pragma once
// A round-based, cost-aware list schedule of the V-shape placement under a memory cap (see
// v_rounds.cpp), offered as V-shape candidates.

#include "v_plan.hpp"

namespace pipesim::detail {

/// Where pending W's may go beyond the waits they fit in: before a second-chunk backward,
/// before a forward (always before a first-chunk backward).
struct VRoundChoices {
    bool fill_before_backward = true;
    bool fill_before_forward = true;
    /// First-chunk forwards fill device d's first wait while it keeps memory for
    /// reserve·(d+1) more chunk activations (2: every second-chunk forward of the warm-up).
    int reserve = 2;
};

/// Offers `best` the round-based schedules of p devices and m microbatches under `cap`
/// full-stage microbatches per device, planned with `costs`, for each VRoundChoices, each
/// re-planned up to `refinements` times with the idle time the previous plan gave each
/// device as what it may idle (while the largest idle time shrinks); only the default
/// choices unless `all_choices`. Choices whose rules cannot finish within the cap are skipped.
void offer_v_rounds(int devices, int microbatches, const PlanningCosts& costs, double cap,
                    int refinements, bool all_choices, BestPlan& best);

}  // namespace pipesim::detail
