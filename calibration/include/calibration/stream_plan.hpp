#pragma once
// How `pipesim gpu-run` issues a schedule to the GPUs: one compute stream per pipeline
// device, ops in an order the host can issue without ever waiting on an op it has not yet
// issued, and an event wait plus a copy for every dependency that crosses devices.

#include <array>
#include <span>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim::calibration {

/// An input an op needs from another device: the producer's output is copied (on the
/// consumer's copy stream, after the producer's end event) before the op starts.
struct CrossInput {
    int producer = 0;         ///< index in StreamPlan::ops of the producing op
    int producer_device = 0;  ///< its pipeline device
};

/// One op as the host issues it.
struct PlannedOp {
    int device = 0;    ///< pipeline device (stream) that runs it
    int position = 0;  ///< its position in that device's op list
    Op op;
    int layers = 0;  ///< transformer layers of its virtual stage: the pass runs that many times
    int input_count = 0;
    std::array<CrossInput, 2> inputs{};  ///< cross-device inputs (same-device ones need none)
};

/// The issue order: every device's ops in the schedule's order, and every op after the ops
/// it depends on, so recording a producer's event always precedes waiting on it.
struct StreamPlan {
    int devices = 0;
    std::vector<PlannedOp> ops;
    std::vector<int> stage_layers;  ///< layers of each virtual stage

    /// Cross-device copies in all (one per CrossInput).
    int transfers() const;
};

/// Plans `schedule`'s ops. `stage_layers` has one count ≥ 1 per virtual stage. Throws
/// InvalidSchedule for an invalid schedule, std::invalid_argument for bad layer counts.
StreamPlan plan_streams(const Schedule& schedule, std::span<const int> stage_layers);

/// `layers` layers split into `stages` contiguous groups as evenly as possible, the first
/// `layers mod stages` groups one larger. Throws std::invalid_argument if stages > layers or
/// either is < 1.
std::vector<int> even_stage_layers(int layers, int stages);

}  // namespace pipesim::calibration

namespace pipesim::calibration {

/// Where the pipeline devices of a gpu-run live.
enum class RunMode {
    automatic,   ///< multi_gpu with at least P GPUs, else partitions
    multi_gpu,   ///< pipeline device i on GPU first+i; activations move by peer copies
    partitions,  ///< pipeline devices are SM partitions (green contexts) of one GPU
};

/// What the driver offers, for choosing a mode.
struct GpuInventory {
    int gpus = 0;
    int sm_count = 0;             ///< SMs of the GPU partitions would split
    bool green_contexts = false;  ///< driver and toolkit ≥ 12.4
    int min_partition_sms = 0;    ///< smallest green-context partition (from the driver)
    int partition_alignment = 1;  ///< partition sizes are multiples of this
};

/// The chosen mode and, for partitions, the SMs each gets.
struct RunPlacement {
    RunMode mode = RunMode::multi_gpu;
    int partition_sms = 0;
};

/// Chooses where `devices` pipeline devices run. Throws std::invalid_argument with one clear
/// line (naming what was found and what is missing) when the request cannot be met: fewer
/// GPUs than devices for multi_gpu, no green contexts or partitions below the driver's
/// minimum for partitions, neither for automatic.
RunPlacement choose_placement(RunMode requested, int devices, const GpuInventory& inventory);

}  // namespace pipesim::calibration
