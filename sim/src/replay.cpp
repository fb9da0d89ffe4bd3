#include "sim/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

Timeline replay(const Schedule& schedule, const StageCosts& costs, const ReplayOptions& options) {
    // Structure first; the timed walk below checks order and deadlock (one walk, not two).
    if (auto issue = validate_structure(schedule))
        throw InvalidSchedule(
            fmt::format("schedule '{}' is invalid: {}", schedule.name, issue->message));
    check_stage_costs(costs, schedule.stages());
    if (!std::isfinite(options.comm_latency) || options.comm_latency < 0)
        throw std::invalid_argument(fmt::format(
            "communication latency must be a finite number ≥ 0, got {}", options.comm_latency));

    const int stages = schedule.stages();
    // Duration of each pass of each stage, indexed by stage·pass_count + pass.
    std::vector<double> duration(static_cast<std::size_t>(stages) * pass_count);
    for (int s = 0; s < stages; ++s) {
        double* d = &duration[static_cast<std::size_t>(s) * pass_count];
        d[static_cast<int>(Pass::F)] = costs.forward[s];
        d[static_cast<int>(Pass::B)] = costs.backward_input[s];
        d[static_cast<int>(Pass::W)] = costs.backward_weight[s];
        d[static_cast<int>(Pass::BW)] = costs.backward_input[s] + costs.backward_weight[s];
    }

    Timeline timeline = empty_timeline(schedule, "unit");

    std::vector<double> end_time(output_slot_count(schedule.microbatches, stages), 0.0);
    std::vector<double> device_free(static_cast<std::size_t>(schedule.devices), 0.0);
    const double latency = options.comm_latency;
    const std::size_t stride = pass_count;

    // Each F, B or BW has at most one input from another device; W has none.
    if (options.record_transfers) timeline.transfers.reserve(schedule.op_count());
    DependencyWalker walker(schedule);
    auto issue = walker.run([&](int device, int, const Op& op, const Predecessors& preds) {
        double start = device_free[device];
        for (int k = 0; k < preds.count; ++k) {
            const bool remote = preds.device[k] != device;
            const double arrival = end_time[preds.slot[k]] + (remote ? latency : 0.0);
            start = std::max(start, arrival);
        }
        const double end = start + duration[static_cast<std::size_t>(op.stage) * stride +
                                            static_cast<std::size_t>(op.pass)];
        if (op.pass != Pass::W) end_time[output_slot(op, stages)] = end;
        device_free[device] = end;
        // Each device's ops are visited in its order, so position == size here.
        timeline.device_ops[device].push_back(TimedOp{op, start, end});
        if (!options.record_transfers) return;
        for (int k = 0; k < preds.count; ++k) {
            if (preds.device[k] == device) continue;
            const double sent = end_time[preds.slot[k]];
            timeline.transfers.push_back(Transfer{preds.device[k], device, preds.op[k], op,
                                                  options.message_bytes, sent, sent + latency});
        }
    });
    if (issue)
        throw InvalidSchedule(
            fmt::format("schedule '{}' is invalid: {}", schedule.name, issue->message));
    return timeline;
}

}  // namespace pipesim
