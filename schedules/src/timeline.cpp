#include "schedules/timeline.hpp"

#include <utility>

namespace pipesim {

std::string_view transfer_kind_name(TransferKind kind) {
    switch (kind) {
        case TransferKind::pipeline:
            return "pipeline";
        case TransferKind::tensor_parallel:
            return "tensor-parallel";
        case TransferKind::data_parallel:
            return "data-parallel";
        case TransferKind::context_parallel:
            return "context-parallel";
    }
    return "pipeline";
}

Timeline empty_timeline(const Schedule& schedule, std::string time_unit, bool reserve_ops) {
    Timeline t;
    t.schedule = schedule.name;
    t.devices = schedule.devices;
    t.microbatches = schedule.microbatches;
    t.chunks = schedule.chunks;
    t.stage_device = schedule.stage_device;
    t.microbatch_stages = schedule.microbatch_stages;
    t.fb_pairs = schedule.fb_pairs;
    t.time_unit = std::move(time_unit);
    t.device_ops.resize(static_cast<std::size_t>(schedule.devices));
    for (std::size_t d = 0;
         reserve_ops && d < t.device_ops.size() && d < schedule.device_ops.size(); ++d)
        t.device_ops[d].reserve(schedule.device_ops[d].size());
    return t;
}

}  // namespace pipesim
