#pragma once
// Building blocks (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024):
// the passes of one group of microbatches placed on a slot grid, repeated every T slots,
// squeezed, optionally reordered, and turned into an ordinary Schedule. The file format is
// described in docs/block-format.md.

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "schedules/metrics.hpp"
#include "schedules/op.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"

namespace pipesim {

/// Lengths of the passes in slots (every stage alike). A fused BW lasts b + w slots.
struct SlotLengths {
    int f = 1;
    int b = 1;
    int w = 1;

    /// The length of `pass` (BW: b + w).
    int of(Pass pass) const;
    bool operator==(const SlotLengths&) const = default;
};

/// One pass of the block: microbatch `microbatch` (0..group−1 within the block) runs `pass`
/// of virtual stage `stage` from slot `start` (relative to the block's origin).
struct BlockPass {
    Pass pass = Pass::F;
    int stage = 0;
    int start = 0;
    int microbatch = 0;

    bool operator==(const BlockPass&) const = default;
};

/// A building block. Microbatch j of repetition r is microbatch r·group + j and runs every
/// pass of the block shifted by r·interval slots. Each (microbatch, stage) of the block has
/// an F and either a BW or a B and a W.
struct BuildingBlock {
    std::string name;
    int devices = 0;
    int chunks = 1;
    /// Device of each virtual stage; size devices·chunks.
    std::vector<int> stage_device;
    SlotLengths lengths;
    /// The repeat interval T in slots.
    int interval = 1;
    /// Microbatches per block (1 in the paper's blocks; interleaved 1F1B uses p).
    int group = 1;
    std::vector<BlockPass> passes;

    int stages() const { return devices * chunks; }
    bool operator==(const BuildingBlock&) const = default;
};

/// Thrown for a malformed block or one whose repetition collides; derives from
/// std::invalid_argument (bad input). The message is one line naming the problem.
class InvalidBlock : public std::invalid_argument {
  public:
    /// `pass`: the index in BuildingBlock::passes of the pass the problem is at, −1 when it
    /// is not one pass's (the block's shape, a missing pass, a collision of repetitions).
    explicit InvalidBlock(const std::string& message, int pass = -1)
        : std::invalid_argument(message), pass_(pass) {}

    /// The index of the offending pass, or −1.
    int pass() const { return pass_; }

  private:
    int pass_ = -1;
};

/// Checks the block's shape (p, v, T, group, lengths ≥ 1, placement in range, v stages per
/// device), that every (microbatch, stage) has exactly F and BW or F, B and W, and that the
/// passes respect the dependencies of one microbatch in slot time (F(s) after F(s−1) ends,
/// B(s) after F(s) and B(s+1), W(s) after B(s)). Throws InvalidBlock naming the pass.
void check_block(const BuildingBlock& block);

/// The ops of the block repeated for `microbatches` microbatches: its passes once per group.
inline double block_op_count(const BuildingBlock& block, int microbatches) {
    return static_cast<double>(block.passes.size()) * (microbatches / std::max(block.group, 1));
}

/// The block repeated for `microbatches` microbatches (a multiple of block.group): every pass
/// of repetition r starts r·T slots later. The Timeline's times are slots, its time unit
/// "slot", each device's ops in start order. Throws InvalidBlock if two passes on one device
/// overlap, naming both ops, the device and the slot, or if `microbatches` is not a
/// positive multiple of the group.
Timeline repeat_block(const BuildingBlock& block, int microbatches);

/// Per device, the ops of `timeline` in start order: the Schedule the timeline runs.
Schedule schedule_from_timeline(const Timeline& timeline, std::string name);

/// Removes idle slots: every op starts as soon as its device is free and its inputs are done
/// (no latency), keeping each device's order and each op's length. Precondition: `timeline`
/// comes from repeat_block (its start times respect every dependency).
Timeline squeeze(const Timeline& timeline);

/// Warm-up and cool-down reordering that never raises any device's peak activation memory
/// under `memory`: the forwards before a device's first backward run in the order their
/// inputs arrive (when the squeezed `timeline` shows them waiting), and after a device's last
/// forward every B runs before the W's it was interleaved with (W feeds no other device).
/// Memory rises only in the first phase and never in the second, so the peak cannot grow;
/// a device whose new order would be invalid or raise its peak keeps its old order.
Schedule reorder(const Schedule& schedule, const Timeline& squeezed, const MemoryModel& memory);

/// What to do after repeating.
struct BlockScheduleOptions {
    /// Reorder warm-up and cool-down (reorder()).
    bool reorder = true;
    /// Instead of reorder(), fill every idle slot of the repeated order with a later op of the
    /// device's own order whose inputs are done (forwards of the next microbatches in the
    /// warm-up, pending W's in the cool-down), as long as the device's memory stays within the
    /// block's lifespan bound (block_lifespan's device_bound). Off by default: it raises the
    /// memory of blocks whose schedule holds less than their bound.
    bool fill_idle = false;
};

/// repeat_block → squeeze → (reorder or fill_idle) → validated Schedule named `block.name`. Throws
/// InvalidBlock for a bad block or collision; the result satisfies validate().
Schedule schedule_from_block(const BuildingBlock& block, int microbatches,
                             const BlockScheduleOptions& options = {});

/// The lifespan analysis of a block (unit memory model unless given).
struct Lifespan {
    /// Per virtual stage: from the start of its first F to the end of its last W/BW over the
    /// block's microbatches, in slots (the largest lifespan of the group's microbatches).
    std::vector<int> stage_lifespan;
    /// Per virtual stage: Σ over the block's microbatches of ⌈l/T⌉ (in-flight microbatches).
    std::vector<int> stage_in_flight;
    /// Per device: Σ over its stages of stage_in_flight · M_B(s), the bound on its peak.
    std::vector<double> device_bound;
    double max_bound = 0;
};

/// Lifespans of `block` and the peak-memory bound Σ_s ⌈l_s/T⌉·M_B(s) per device.
/// Precondition: check_block passed; memory has one entry per stage.
Lifespan block_lifespan(const BuildingBlock& block, const MemoryModel& memory);

}  // namespace pipesim
