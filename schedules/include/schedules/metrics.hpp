#pragma once
// Metrics over a Timeline, defined once for every engine (see docs/metrics.md).

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "schedules/timeline.hpp"
#include "schedules/zeroed_array.hpp"

namespace pipesim {

/// Activation memory per virtual stage for one microbatch.
/// F adds activation[s]; B releases activation[s] − held_for_w[s]; W releases held_for_w[s];
/// BW releases activation[s]. Units are whatever the caller uses (1 = one full stage's
/// activations for unit models, bytes for model-based ones).
struct MemoryModel {
    std::vector<double> activation;  ///< M_B(s)
    std::vector<double> held_for_w;  ///< M_W(s) ≤ M_B(s)
};

/// The unit memory model: M_B = 1/split per chunk (1 per full stage; `split` as in
/// uniform_stage_costs, 0: v), M_W = ratio · M_B. Throws std::invalid_argument unless
/// 0 ≤ ratio ≤ 1.
MemoryModel unit_memory_model(int devices, int chunks, double mem_w_ratio = 1.0, int split = 0);

/// Change of held activation memory when an op starts (F allocates) and when it ends (B, W
/// and BW release), following the accounting of MemoryModel.
struct MemoryDelta {
    double at_start = 0;
    double at_end = 0;
};

/// The MemoryDelta of `op`. Precondition: op.stage has an entry in `memory`.
inline MemoryDelta memory_delta(const Op& op, const MemoryModel& memory) {
    const double mb = memory.activation[op.stage];
    const double mw = memory.held_for_w[op.stage];
    switch (op.pass) {
        case Pass::F:
            return {mb, 0};
        case Pass::B:
            return {0, -(mb - mw)};
        case Pass::W:
            return {0, -mw};
        case Pass::BW:
            return {0, -mb};
    }
    return {};
}

/// Per-device figures. `span` runs from the device's first start to its last end.
struct DeviceMetrics {
    double busy = 0;
    double first_start = 0;  ///< start of the device's first op (0 for an empty device)
    double span = 0;         ///< end of its last op − first_start
    double idle = 0;         ///< span − busy
    double bubble_rate = 0;  ///< idle / span (0 for an empty device)
    double peak_activation = 0;

    double last_end() const { return first_start + span; }  ///< end of the device's last op
};

/// Measured activation lifespans of one virtual stage: for each microbatch through it, from
/// the start of its F to the end of its W (or of its BW where the backward is one pass).
struct StageLifespan {
    double max = 0;        ///< longest over the stage's microbatches (0: none passed through)
    double mean = 0;       ///< mean over the stage's microbatches
    int microbatches = 0;  ///< how many passed through (with a W or BW)
    /// Most microbatches alive on the stage at once (F started, W or BW not yet ended): what
    /// a building block's ⌈l/T⌉ bounds.
    int max_in_flight = 0;
};

struct Metrics {
    double makespan = 0;     ///< last end − first start over all devices
    double bubble_rate = 0;  ///< max over devices of idle / span
    double bubble_time = 0;  ///< idle time of bubble_device
    int bubble_device = 0;   ///< device with the largest bubble_rate
    double peak_activation_max = 0;
    double throughput = 0;  ///< microbatches per time unit of makespan
    /// Whole-pipeline efficiency: busy time summed over the devices / (devices × makespan).
    double efficiency = 0;
    /// Per virtual stage, in the time unit of the timeline.
    std::vector<StageLifespan> stage_lifespan;
    double lifespan_max = 0;   ///< max over stages of StageLifespan::max
    double lifespan_mean = 0;  ///< mean over every (microbatch, stage) lifespan
    std::vector<DeviceMetrics> devices;
};

/// Computes all metrics. Throws std::invalid_argument unless memory has one entry per virtual
/// stage.
Metrics compute_metrics(const Timeline& timeline, const MemoryModel& memory);

/// compute_metrics() for ops given one at a time, as an engine times them, so that no per-op
/// record is needed: each device's ops in its order (devices may interleave). Gives exactly
/// what compute_metrics() gives for the timeline of the same ops.
class MetricsBuilder {
  public:
    /// Throws std::invalid_argument unless memory has one entry per virtual stage (`stages`).
    /// `memory` must outlive the builder.
    MetricsBuilder(int devices, int stages, int microbatches, const MemoryModel& memory);

    /// The next op of `device` (0 ≤ device < devices; op.stage within the stages).
    void add(int device, const Op& op, double start, double end);
    /// The metrics of every op added.
    Metrics finish() const;

  private:
    const MemoryModel& memory_;
    int stages_;
    int microbatches_;
    struct Lifespans {
        double max = 0;
        double sum = 0;
        int count = 0;
        int alive = 0;
        int max_alive = 0;
    };
    /// Per (microbatch, stage), as output_slot() / 2: the start of its F, its bits XOR those of
    /// a NaN (forward_bits), so that the array, zero to start with, reads NaN until the F ran.
    /// Engines visit a microbatch's stages close together, so this order keeps them close in
    /// memory.
    ZeroedArray<std::uint64_t> forward_start_;
    static constexpr std::uint64_t not_run = 0x7ff8000000000000;  ///< a quiet NaN's bits
    static std::uint64_t forward_bits(double start) {
        return std::bit_cast<std::uint64_t>(start) ^ not_run;
    }
    static double forward_start(std::uint64_t bits) {
        return std::bit_cast<double>(bits ^ not_run);
    }
    std::vector<Lifespans> lifespans_;
    struct Device {
        DeviceMetrics metrics;
        double held = 0;  ///< activation held after its last op
        double first = std::numeric_limits<double>::quiet_NaN();  ///< first start (NaN: none)
        double last = 0;                                          ///< last end
        double ops = 0;  ///< ops added, which bounds the rounding of the busy sum
    };
    std::vector<Device> devices_;
};

// Inline: engines call it once per op.
inline void MetricsBuilder::add(int device, const Op& op, double start, double end) {
    Device& dev = devices_[static_cast<std::size_t>(device)];
    if (std::isnan(dev.first)) dev.first = start;
    dev.last = end;
    dev.metrics.busy += end - start;
    ++dev.ops;
    const MemoryDelta delta = memory_delta(op, memory_);
    dev.held += delta.at_start;
    dev.metrics.peak_activation = std::max(dev.metrics.peak_activation, dev.held);
    dev.held += delta.at_end;
    const std::size_t pair =
        static_cast<std::size_t>(op.microbatch) * static_cast<std::size_t>(stages_) +
        static_cast<std::size_t>(op.stage);
    Lifespans& l = lifespans_[static_cast<std::size_t>(op.stage)];
    if (op.pass == Pass::F) {
        forward_start_[pair] = forward_bits(start);
        l.max_alive = std::max(l.max_alive, ++l.alive);
    } else if ((op.pass == Pass::W || op.pass == Pass::BW) &&
               !std::isnan(forward_start(forward_start_[pair]))) {
        --l.alive;
        const double lifespan = end - forward_start(forward_start_[pair]);
        l.max = std::max(l.max, lifespan);
        l.sum += lifespan;
        ++l.count;
    }
}

/// A point of a device's activation-memory step curve: from `time` on, `activation` is held.
struct MemoryPoint {
    double time = 0;
    double activation = 0;
};

/// Device `device`'s activation memory over time: F allocates at its start, B/W/BW release at
/// their end. One point per change, in time order, starting from 0 at the first op's start.
std::vector<MemoryPoint> memory_over_time(const Timeline& timeline, const MemoryModel& memory,
                                          int device);

}  // namespace pipesim
