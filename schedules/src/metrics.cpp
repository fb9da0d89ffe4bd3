#include "schedules/metrics.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim {

MemoryModel unit_memory_model(int devices, int chunks, double mem_w_ratio) {
    if (!(mem_w_ratio >= 0.0 && mem_w_ratio <= 1.0))
        throw std::invalid_argument(
            fmt::format("the M_W ratio must be between 0 and 1, got {}", mem_w_ratio));
    const auto stages = static_cast<std::size_t>(devices * chunks);
    const double per_chunk = 1.0 / chunks;
    return MemoryModel{std::vector<double>(stages, per_chunk),
                       std::vector<double>(stages, per_chunk * mem_w_ratio)};
}

namespace {

// Change of held activation memory when `op` starts (allocation) and when it ends (release).
struct MemoryDelta {
    double at_start = 0;
    double at_end = 0;
};

MemoryDelta memory_delta(const Op& op, const MemoryModel& memory) {
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

}  // namespace

Metrics compute_metrics(const Timeline& timeline, const MemoryModel& memory) {
    if (memory.activation.size() != static_cast<std::size_t>(timeline.stages()) ||
        memory.held_for_w.size() != memory.activation.size())
        throw std::invalid_argument(fmt::format("memory model has {} stages, timeline has {}",
                                                memory.activation.size(), timeline.stages()));
    Metrics metrics;
    metrics.devices.resize(timeline.device_ops.size());
    double first = std::numeric_limits<double>::infinity();
    double last = -std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < timeline.device_ops.size(); ++d) {
        const auto& ops = timeline.device_ops[d];
        DeviceMetrics& dm = metrics.devices[d];
        if (ops.empty()) continue;
        double held = 0;
        for (const TimedOp& t : ops) {
            dm.busy += t.end - t.start;
            const MemoryDelta delta = memory_delta(t.op, memory);
            held += delta.at_start;
            dm.peak_activation = std::max(dm.peak_activation, held);
            held += delta.at_end;
        }
        dm.span = ops.back().end - ops.front().start;
        dm.idle = std::max(0.0, dm.span - dm.busy);
        dm.bubble_rate = dm.span > 0 ? dm.idle / dm.span : 0.0;
        first = std::min(first, ops.front().start);
        last = std::max(last, ops.back().end);
        if (dm.bubble_rate > metrics.bubble_rate) {
            metrics.bubble_rate = dm.bubble_rate;
            metrics.bubble_device = static_cast<int>(d);
        }
        metrics.bubble_time = std::max(metrics.bubble_time, dm.idle);
        metrics.peak_activation_max = std::max(metrics.peak_activation_max, dm.peak_activation);
    }
    metrics.makespan = last > first ? last - first : 0.0;
    metrics.throughput = metrics.makespan > 0 ? timeline.microbatches / metrics.makespan : 0.0;
    return metrics;
}

std::vector<MemoryPoint> memory_over_time(const Timeline& timeline, const MemoryModel& memory,
                                          int device) {
    std::vector<MemoryPoint> curve;
    const auto& ops = timeline.device_ops.at(static_cast<std::size_t>(device));
    if (ops.empty()) return curve;
    curve.push_back({ops.front().start, 0.0});
    double held = 0;
    auto add = [&](double time, double delta) {
        if (delta == 0) return;
        held += delta;
        if (curve.back().time == time)
            curve.back().activation = held;
        else
            curve.push_back({time, held});
    };
    for (const TimedOp& t : ops) {
        const MemoryDelta delta = memory_delta(t.op, memory);
        add(t.start, delta.at_start);
        add(t.end, delta.at_end);
    }
    return curve;
}

}  // namespace pipesim
