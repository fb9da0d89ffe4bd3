#pragma once
// Slot compaction of a repeated V-shape block under a memory cap (see v_compact.cpp).

#include "schedules/block.hpp"
#include "v_plan.hpp"

namespace pipesim::detail {

/// Offers `best` the block repeated for `microbatches` on its unit-slot grid with every op
/// moved, in slot order, to the earliest free slot after its inputs (and after the same
/// stage and pass of the previous microbatch) at which its device's memory under `memory`
/// stays within `cap`: with the steady phase kept as laid out or compacted too, and with the
/// W's kept or taken out and put back, oldest first, into the first free slots after their
/// B's. For a V placement also the layout reordered greedily in two rounds with a squeeze
/// after each (warm-up and cool-down with the W's on the grid, then the cool-down without
/// them), within the laid-out peak and within the cap. Only for blocks of unit slots and one
/// microbatch; others offer nothing.
void offer_compacted(const BuildingBlock& block, int microbatches, const MemoryModel& memory,
                     double cap, BestPlan& best);

}  // namespace pipesim::detail
