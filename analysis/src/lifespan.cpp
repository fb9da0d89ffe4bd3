#include "analysis/lifespan.hpp"

#include <algorithm>
#include <stdexcept>

#include "schedules/block_catalog.hpp"

namespace pipesim::analysis {

BlockLifespans block_lifespans(const BuildingBlock& block, const Metrics& metrics,
                               const MemoryModel& memory, int microbatches) {
    const Lifespan bound = block_lifespan(block, memory);
    BlockLifespans out;
    out.block = block.name;
    out.interval = block.interval;
    double block_slots = 0;
    for (const BlockPass& pass : block.passes)
        block_slots += block.lengths.of(pass.pass);
    double busy = 0;
    for (const DeviceMetrics& d : metrics.devices)
        busy += d.busy;
    const double repetitions = static_cast<double>(microbatches) / block.group;
    out.slot_time = block_slots > 0 && repetitions > 0 ? busy / (repetitions * block_slots) : 0;
    out.interval_time = block.interval * out.slot_time;
    const double per_interval = out.interval_time > 0 ? 1 / out.interval_time : 0;
    for (const StageLifespan& s : metrics.stage_lifespan) {
        out.measured_max.push_back(s.max * per_interval);
        out.measured_mean.push_back(s.mean * per_interval);
        out.measured_in_flight.push_back(s.max_in_flight);
        out.measured_max_intervals = std::max(out.measured_max_intervals, out.measured_max.back());
    }
    for (int l : bound.stage_lifespan) {
        out.bound_lifespan.push_back(static_cast<double>(l) / block.interval);
        out.bound_lifespan_max = std::max(out.bound_lifespan_max, out.bound_lifespan.back());
    }
    out.bound_in_flight = bound.stage_in_flight;
    out.device_bound = bound.device_bound;
    out.max_bound = bound.max_bound;
    return out;
}

bool block_bound_holds(const BlockLifespans& lifespans) {
    if (lifespans.measured_in_flight.size() != lifespans.bound_in_flight.size()) return false;
    for (std::size_t s = 0; s < lifespans.measured_in_flight.size(); ++s)
        if (lifespans.measured_in_flight[s] > lifespans.bound_in_flight[s]) return false;
    return true;
}

std::optional<BuildingBlock> catalog_block(const Schedule& schedule) {
    for (const BlockFamily& family : block_families()) {
        if (family.name != schedule.name) continue;
        try {
            BuildingBlock block = family.build(schedule.devices, SlotLengths{});
            if (block.devices == schedule.devices && block.chunks == schedule.chunks &&
                block.stage_device == schedule.stage_device && schedule.microbatches > 0 &&
                schedule.microbatches % block.group == 0)
                return block;
        } catch (const std::invalid_argument&) {
            // no block of this family for this p
        }
    }
    return std::nullopt;
}

}  // namespace pipesim::analysis
