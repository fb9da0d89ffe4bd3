#include "calibration/stream_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim::calibration {

int StreamPlan::transfers() const {
    int n = 0;
    for (const PlannedOp& op : ops)
        n += op.input_count;
    return n;
}

StreamPlan plan_streams(const Schedule& schedule, std::span<const int> stage_layers) {
    require_valid(schedule);
    if (stage_layers.size() != static_cast<std::size_t>(schedule.stages()))
        throw std::invalid_argument(fmt::format("{} layer counts for {} virtual stages",
                                                stage_layers.size(), schedule.stages()));
    for (std::size_t s = 0; s < stage_layers.size(); ++s)
        if (stage_layers[s] < 1)
            throw std::invalid_argument(
                fmt::format("virtual stage {} has {} layers; every stage needs at least one", s,
                            stage_layers[s]));
    StreamPlan plan;
    plan.devices = schedule.devices;
    plan.stage_layers.assign(stage_layers.begin(), stage_layers.end());
    plan.ops.reserve(schedule.op_count());
    // Plan index of the op that produced each output slot (F and backward of each stage).
    std::vector<int> producer(output_slot_count(schedule.microbatches, schedule.stages()), -1);
    DependencyWalker walker(schedule);
    const auto issue =
        walker.run([&](int device, int position, const Op& op, const Predecessors& preds) {
            PlannedOp p;
            p.device = device;
            p.position = position;
            p.op = op;
            p.layers = stage_layers[static_cast<std::size_t>(op.stage)];
            for (int k = 0; k < preds.count; ++k) {
                if (preds.device[k] == device) continue;
                p.inputs[static_cast<std::size_t>(p.input_count++)] = {producer[preds.slot[k]],
                                                                       preds.device[k]};
            }
            const int index = static_cast<int>(plan.ops.size());
            if (op.pass != Pass::W) producer[output_slot(op, schedule.stages())] = index;
            plan.ops.push_back(p);
        });
    if (issue) throw InvalidSchedule(issue->message);  // require_valid should have caught it
    return plan;
}

std::vector<int> even_stage_layers(int layers, int stages) {
    if (layers < 1 || stages < 1 || stages > layers)
        throw std::invalid_argument(fmt::format(
            "cannot split {} layers into {} stages of at least one layer", layers, stages));
    std::vector<int> counts(static_cast<std::size_t>(stages), layers / stages);
    for (int s = 0; s < layers % stages; ++s)
        ++counts[static_cast<std::size_t>(s)];
    return counts;
}

}  // namespace pipesim::calibration

namespace pipesim::calibration {

RunPlacement choose_placement(RunMode requested, int devices, const GpuInventory& inv) {
    if (requested == RunMode::multi_gpu ||
        (requested == RunMode::automatic && inv.gpus >= devices)) {
        if (inv.gpus < devices)
            throw std::invalid_argument(fmt::format(
                "{} pipeline devices need {} GPUs, found {} (use SM partitions of one GPU instead)",
                devices, devices, inv.gpus));
        return {RunMode::multi_gpu, 0};
    }
    if (!inv.green_contexts)
        throw std::invalid_argument(fmt::format(
            "{} pipeline devices on {} GPU(s) need SM partitions (CUDA green contexts, driver "
            "and toolkit 12.4 or later), which this system does not support",
            devices, inv.gpus));
    const int align = std::max(1, inv.partition_alignment);
    const int sms = inv.sm_count / devices / align * align;
    if (sms < std::max(1, inv.min_partition_sms))
        throw std::invalid_argument(fmt::format(
            "{} SM partitions of a {}-SM GPU would have {} SMs each, below the driver's minimum "
            "of {}",
            devices, inv.sm_count, sms, inv.min_partition_sms));
    return {RunMode::partitions, sms};
}

}  // namespace pipesim::calibration
