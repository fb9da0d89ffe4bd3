#include "schedules/schedule.hpp"

namespace pipesim {

int chunks_per_microbatch(int devices, int chunks, const std::vector<StageRange>& ranges) {
    if (ranges.empty() || devices <= 0) return chunks;
    const int length = ranges.front().last - ranges.front().first + 1;
    for (const StageRange& r : ranges)
        if (r.last - r.first + 1 != length) return chunks;
    return length > 0 && length % devices == 0 ? length / devices : chunks;
}

std::size_t Schedule::op_count() const {
    std::size_t count = 0;
    for (const auto& ops : device_ops)
        count += ops.size();
    return count;
}

Schedule make_empty_schedule(std::string name, int devices, int microbatches, int chunks,
                             std::vector<int> placement) {
    Schedule schedule;
    schedule.name = std::move(name);
    schedule.devices = devices;
    schedule.microbatches = microbatches;
    schedule.chunks = chunks;
    schedule.stage_device = std::move(placement);
    schedule.device_ops.resize(static_cast<std::size_t>(devices));
    return schedule;
}

}  // namespace pipesim
