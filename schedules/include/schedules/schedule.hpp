#pragma once
// The schedule IR: which ops each device runs, in which order.

#include <string>
#include <vector>

#include "schedules/op.hpp"

namespace pipesim {

/// The virtual stages a microbatch passes through: first..last, inclusive.
struct StageRange {
    int first = 0;
    int last = 0;

    bool operator==(const StageRange&) const = default;
};

/// How many of a device's virtual stages one microbatch passes through: `chunks` when every
/// microbatch passes through all stages (`ranges` empty), else the ranges' common length / p
/// (DualPipe: 1, each chunk a full stage of one model copy). A full stage's pass times and
/// activations (`--costs`, the unit memory model) are split evenly over that many chunks.
/// Ranges of unequal lengths, or not a multiple of p, fall back to `chunks`.
int chunks_per_microbatch(int devices, int chunks, const std::vector<StageRange>& ranges);

/// A pipeline schedule: `devices` pipeline devices, `chunks` virtual stages per device
/// (p·v virtual stages in all), `microbatches` microbatches, and for each device the ordered
/// list of ops it runs. Dependencies are implied by the ops (see validate.hpp).
/// A Schedule is a plain value: build it, validate it, then treat it as immutable.
///
/// Normally every microbatch passes through all p·v stages. A schedule may instead give each
/// microbatch its own range of stages (`microbatch_stages`): DualPipe feeds half of the
/// microbatches through one copy of the model (stages 0..p−1) and half through the other
/// (stages p..2p−1, placed in reverse), so each microbatch meets each layer once.
struct Schedule {
    std::string name;
    int devices = 0;
    int microbatches = 0;
    int chunks = 1;
    /// Device that holds each virtual stage; size devices·chunks.
    std::vector<int> stage_device;
    /// Per device, the ops in the order the device runs them.
    std::vector<std::vector<Op>> device_ops;
    /// Per microbatch, the stages it passes through; empty: all stages for every microbatch.
    std::vector<StageRange> microbatch_stages;
    /// Overlapped forward-and-backward pairs (DualPipe, DeepSeek-V3 §3.2.1): per device, the
    /// increasing positions k at which op k, an F, and op k + 1, a B or BW of another
    /// microbatch, run as one F&B op. The pair starts when the inputs of both are there and
    /// both outputs leave when it ends. Empty: no pairs (or one empty list per device).
    std::vector<std::vector<int>> fb_pairs;

    int stages() const { return devices * chunks; }
    /// The stages microbatch `microbatch` passes through.
    StageRange stages_of(int microbatch) const {
        return microbatch_stages.empty() ? StageRange{0, stages() - 1}
                                         : microbatch_stages[static_cast<std::size_t>(microbatch)];
    }
    std::size_t op_count() const;
    /// chunks_per_microbatch() of this schedule's shape.
    int microbatch_chunks() const {
        return chunks_per_microbatch(devices, chunks, microbatch_stages);
    }

    /// Every field (schedule.cpp lists them: a field added here goes there too); fb_pairs as
    /// the pairs they hold, so that no pairs equals one empty list per device (a generator's
    /// output and its JSON, which leaves them out, compare equal).
    bool operator==(const Schedule& other) const;
};

/// Whether `pairs` (Schedule::fb_pairs or Timeline::fb_pairs) hold any pair.
bool has_fb_pairs(const std::vector<std::vector<int>>& pairs);

/// An empty schedule (no ops yet) with the given shape and placement; the generators'
/// starting point. Precondition: placement.size() == devices·chunks.
Schedule make_empty_schedule(std::string name, int devices, int microbatches, int chunks,
                             std::vector<int> placement);

/// Makes every step of `schedule` exchange once (Schedule::fb_pairs): on each device, each F
/// followed directly by a B or BW of another microbatch becomes a pair, so that the F's output
/// leaves with the backward's at the pair's end and the pair starts once both inputs are
/// there. Megatron-LM's interleaved 1F1B without p2p overlap runs its steady state so (its
/// only mode before 2023, `--no-overlap-p2p-communication` since): each step runs an F and a
/// backward, then sends both outputs and receives the next step's inputs in one batched call.
/// An F followed by the backward of its own microbatch (the last stage) stays alone: its
/// output goes nowhere. Replaces any pairs the schedule had.
void pair_steps(Schedule& schedule);

}  // namespace pipesim
