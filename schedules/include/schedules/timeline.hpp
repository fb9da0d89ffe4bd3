#pragma once
// The Timeline: what every engine (analytic replay, SimGrid, real GPUs) produces.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/op.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

/// One op as it ran: start and end in the timeline's time unit.
struct TimedOp {
    Op op;
    double start = 0;
    double end = 0;

    bool operator==(const TimedOp&) const = default;
};

/// What a transfer carries: a pipeline activation or gradient between stages, or a
/// collective (tensor-parallel all-reduces inside an op, the data-parallel gradient
/// reduction, context parallelism's K/V ring inside an op).
enum class TransferKind : std::uint8_t {
    pipeline,
    tensor_parallel,
    data_parallel,
    context_parallel
};

/// "pipeline", "tensor-parallel", "data-parallel" or "context-parallel", as timeline files and
/// traces name the kinds.
std::string_view transfer_kind_name(TransferKind kind);

/// One message between devices: the output of `producer` sent to the device running
/// `consumer`. `bytes` is 0 when the engine has no message sizes (unit-cost replay).
/// Collectives (kind ≠ pipeline) have src_device == dst_device, the device whose GPUs take
/// part, and their producer/consumer ops are meaningless.
struct Transfer {
    int src_device = 0;
    int dst_device = 0;
    Op producer;
    Op consumer;
    double bytes = 0;
    double start = 0;
    double end = 0;
    TransferKind kind = TransferKind::pipeline;

    bool operator==(const Transfer&) const = default;
};

/// Every op of every device with its start and end, plus the transfers between devices.
struct Timeline {
    std::string schedule;
    int devices = 0;
    int microbatches = 0;
    int chunks = 1;
    /// Device of each virtual stage (as in Schedule).
    std::vector<int> stage_device;
    /// Per microbatch, the inclusive range of virtual stages it passes through (as in
    /// Schedule); empty when every microbatch passes through all stages.
    std::vector<StageRange> microbatch_stages;
    /// F&B pairs (as in Schedule): positions in device_ops of each pair's F.
    std::vector<std::vector<int>> fb_pairs;
    /// Per device, its ops in the order it ran them (non-overlapping, increasing start).
    std::vector<std::vector<TimedOp>> device_ops;
    std::vector<Transfer> transfers;
    /// "unit" for unit costs, "s" when a model or cluster gives seconds.
    std::string time_unit = "unit";

    int stages() const { return devices * chunks; }
    /// When the last op of any device ends (0 without ops): a device's ops run in order, so
    /// its last ends latest.
    double last_end() const {
        double end = 0;
        for (const std::vector<TimedOp>& ops : device_ops)
            if (!ops.empty()) end = std::max(end, ops.back().end);
        return end;
    }
    bool operator==(const Timeline&) const = default;
};

/// A Timeline with no ops or transfers yet, for the run of `schedule`: its name, devices,
/// microbatches, chunks, stage_device and microbatch_stages copied, one empty op list per
/// device (with `reserve_ops`, each with capacity for that device's ops) and the given time
/// unit. Every engine starts from this so that no field of the schedule is forgotten.
Timeline empty_timeline(const Schedule& schedule, std::string time_unit, bool reserve_ops = true);

}  // namespace pipesim
