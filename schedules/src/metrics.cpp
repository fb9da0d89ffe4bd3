#include "schedules/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim {

MemoryModel unit_memory_model(int devices, int chunks, double mem_w_ratio, int split) {
    if (!(mem_w_ratio >= 0.0 && mem_w_ratio <= 1.0))
        throw std::invalid_argument(
            fmt::format("the M_W ratio must be between 0 and 1, got {}", mem_w_ratio));
    const auto stages = static_cast<std::size_t>(devices * chunks);
    const double per_chunk = 1.0 / (split > 0 ? split : chunks);
    return MemoryModel{std::vector<double>(stages, per_chunk),
                       std::vector<double>(stages, per_chunk * mem_w_ratio)};
}

MetricsBuilder::MetricsBuilder(int devices, int stages, int microbatches, const MemoryModel& memory)
    : memory_(memory),
      stages_(stages),
      microbatches_(microbatches),
      forward_start_(static_cast<std::size_t>(stages) * static_cast<std::size_t>(microbatches)),
      lifespans_(static_cast<std::size_t>(stages)),
      devices_(static_cast<std::size_t>(devices)) {
    if (memory.activation.size() != static_cast<std::size_t>(stages) ||
        memory.held_for_w.size() != memory.activation.size())
        throw std::invalid_argument(fmt::format("memory model has {} stages, timeline has {}",
                                                memory.activation.size(), stages));
}

Metrics MetricsBuilder::finish() const {
    Metrics metrics;
    metrics.devices.resize(devices_.size());
    double first = std::numeric_limits<double>::infinity();
    double last = -std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < devices_.size(); ++d) {
        const Device& dev = devices_[d];
        DeviceMetrics& dm = metrics.devices[d];
        dm = dev.metrics;
        if (std::isnan(dev.first)) continue;
        dm.first_start = dev.first;
        dm.span = dev.last - dev.first;
        dm.idle = std::max(0.0, dm.span - dm.busy);
        // The busy time is a sum of op lengths, each rounded (as is each length): an idle
        // time within that rounding, two units in the last place of the span per op, is
        // none (8.9e-16 once printed as a zb-2p device's idle time).
        if (dm.idle <= 2 * dev.ops * 0x1p-52 * dm.span) dm.idle = 0;
        dm.bubble_rate = dm.span > 0 ? dm.idle / dm.span : 0.0;
        first = std::min(first, dev.first);
        last = std::max(last, dev.last);
        if (dm.bubble_rate > metrics.bubble_rate) {
            metrics.bubble_rate = dm.bubble_rate;
            metrics.bubble_device = static_cast<int>(d);
            metrics.bubble_time = dm.idle;
        }
        metrics.peak_activation_max = std::max(metrics.peak_activation_max, dm.peak_activation);
    }
    metrics.makespan = last > first ? last - first : 0.0;
    metrics.throughput = metrics.makespan > 0 ? microbatches_ / metrics.makespan : 0.0;
    double busy = 0;
    for (const DeviceMetrics& dm : metrics.devices)
        busy += dm.busy;
    metrics.efficiency = metrics.makespan > 0
                             ? busy / (static_cast<double>(devices_.size()) * metrics.makespan)
                             : 0.0;
    double sum = 0;
    long long count = 0;
    metrics.stage_lifespan.reserve(lifespans_.size());
    for (const Lifespans& l : lifespans_) {
        metrics.stage_lifespan.push_back(
            {l.max, l.count > 0 ? l.sum / l.count : 0.0, l.count, l.max_alive});
        metrics.lifespan_max = std::max(metrics.lifespan_max, l.max);
        sum += l.sum;
        count += l.count;
    }
    metrics.lifespan_mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
    return metrics;
}

Metrics compute_metrics(const Timeline& timeline, const MemoryModel& memory) {
    MetricsBuilder builder(static_cast<int>(timeline.device_ops.size()), timeline.stages(),
                           timeline.microbatches, memory);
    for (std::size_t d = 0; d < timeline.device_ops.size(); ++d)
        for (const TimedOp& t : timeline.device_ops[d])
            builder.add(static_cast<int>(d), t.op, t.start, t.end);
    return builder.finish();
}

std::vector<MemoryPoint> memory_over_time(const Timeline& timeline, const MemoryModel& memory,
                                          int device) {
    std::vector<MemoryPoint> curve;
    const auto& ops = timeline.device_ops.at(static_cast<std::size_t>(device));
    if (ops.empty()) return curve;
    curve.push_back({ops.front().start, 0.0});
    double held = 0, largest = 0;
    auto add = [&](double time, double delta) {
        if (delta == 0) return;
        held += delta;
        // A W's share and a B's release of one M_B need not add up exactly: what is within
        // rounding of nothing is nothing (it read -2.8e-17 after the last W).
        largest = std::max(largest, std::abs(delta));
        if (std::abs(held) <= 1e-12 * largest) held = 0;
        if (curve.back().time == time)
            curve.back().activation = held;
        else
            curve.push_back({time, held});
        // A release and an allocation at one instant that cancel out change nothing: no point
        // (1F1B's device 3 at p = 4 repeated 1 M_B at each B's end and the next F's start).
        if (curve.size() >= 2 && curve[curve.size() - 2].activation == held) curve.pop_back();
    };
    for (const TimedOp& t : ops) {
        const MemoryDelta delta = memory_delta(t.op, memory);
        add(t.start, delta.at_start);
        add(t.end, delta.at_end);
    }
    return curve;
}

}  // namespace pipesim
