#pragma once
// Measured activation lifespans of a block schedule in units of the block's repeat interval,
// next to the block's bound Σ⌈l_s/T⌉·M_B(s) (Qi et al., NeurIPS 2024).

#include <optional>
#include <string>
#include <vector>

#include "schedules/block.hpp"
#include "schedules/metrics.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::analysis {

/// A block schedule's measured lifespans (Metrics::stage_lifespan) in repeat intervals, and
/// the block's bound.
struct BlockLifespans {
    std::string block;  ///< the block's name
    int interval = 0;   ///< T, in slots
    /// One slot in the timeline's time unit: the busy time of all devices divided by the busy
    /// slots the block's repetitions take (with F = B = W per slot, one chunk pass).
    double slot_time = 0;
    double interval_time = 0;             ///< T · slot_time
    std::vector<double> measured_max;     ///< per stage: Metrics max / interval_time
    std::vector<double> measured_mean;    ///< per stage: Metrics mean / interval_time
    std::vector<int> measured_in_flight;  ///< per stage: StageLifespan::max_in_flight
    std::vector<double> bound_lifespan;   ///< per stage: the block's l_s / T (intervals)
    std::vector<int> bound_in_flight;     ///< per stage: Σ ⌈l_s/T⌉ over the block's group
    std::vector<double> device_bound;     ///< per device: Σ_s ⌈l_s/T⌉·M_B(s)
    double measured_max_intervals = 0;    ///< max over stages of measured_max
    double bound_lifespan_max = 0;        ///< max over stages of bound_lifespan
    double max_bound = 0;                 ///< max over devices of device_bound
};

/// The lifespans of a run of `block` repeated for `microbatches` microbatches, measured in
/// `metrics` (with `memory`, the run's memory model). Preconditions: check_block(block)
/// passed; the metrics are of a schedule with the block's p·v stages.
BlockLifespans block_lifespans(const BuildingBlock& block, const Metrics& metrics,
                               const MemoryModel& memory, int microbatches);

/// Whether the run measured in `lifespans` keeps every stage within the block's in-flight
/// bound (measured_in_flight ≤ bound_in_flight), so that its devices' peaks are within
/// device_bound: true for the block's own repetition, not always for another order of the
/// same name.
bool block_bound_holds(const BlockLifespans& lifespans);

/// The catalog block (block_families()) a generated schedule is named after with its p and v
/// (1f1b, zb-h1, zb-h2, v-min, v-half, v-zb ...), or nothing.
std::optional<BuildingBlock> catalog_block(const Schedule& schedule);

}  // namespace pipesim::analysis
