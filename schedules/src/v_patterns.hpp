#pragma once
// V-shape schedules from every starting pattern of a six-slot building block (see
// v_patterns.cpp), offered as candidates of the memory-capped search.

#include "v_plan.hpp"

namespace pipesim::detail {

/// Offers `best` the V-shape schedules of p devices and m microbatches built from six-slot
/// building blocks: every placement of the first device's F, B of both chunks in the period
/// (W's in the first free slots after their B's), the chains advancing by one offset on the
/// first devices and by another (no larger) on the rest, repeated, squeezed, with a warm-up
/// that keeps the peak and a tight cool-down, gaps filled greedily without raising the peak.
/// Memory is counted in chunk activations with M_W = M_B; blocks whose peak exceeds `cap`
/// (full-stage microbatches) are skipped. Each is timed by `best`. At most
/// `max_cells` grid cells are laid out in all (the blocks of the smaller offsets first): the
/// work of one block grows with p·(4p + m).
void offer_v_patterns(int devices, int microbatches, double cap, double max_cells, BestPlan& best);

}  // namespace pipesim::detail
