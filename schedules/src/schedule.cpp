#include "schedules/schedule.hpp"

#include <algorithm>
#include <tuple>

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

bool has_fb_pairs(const std::vector<std::vector<int>>& pairs) {
    return std::any_of(pairs.begin(), pairs.end(),
                       [](const std::vector<int>& device) { return !device.empty(); });
}

bool Schedule::operator==(const Schedule& other) const {
    const auto fields = [](const Schedule& s) {
        return std::tie(s.name, s.devices, s.microbatches, s.chunks, s.stage_device, s.device_ops,
                        s.microbatch_stages);
    };
    if (fields(*this) != fields(other)) return false;
    const bool pairs = has_fb_pairs(fb_pairs);
    return pairs == has_fb_pairs(other.fb_pairs) && (!pairs || fb_pairs == other.fb_pairs);
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

void pair_steps(Schedule& schedule) {
    schedule.fb_pairs.assign(schedule.device_ops.size(), {});
    for (std::size_t d = 0; d < schedule.device_ops.size(); ++d) {
        const std::vector<Op>& ops = schedule.device_ops[d];
        for (std::size_t k = 0; k + 1 < ops.size(); ++k) {
            const Op& f = ops[k];
            const Op& back = ops[k + 1];
            if (f.pass == Pass::F && (back.pass == Pass::B || back.pass == Pass::BW) &&
                f.microbatch != back.microbatch)
                schedule.fb_pairs[d].push_back(static_cast<int>(k++));
        }
    }
}

}  // namespace pipesim
