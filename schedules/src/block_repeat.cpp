// Building blocks: repeating, squeezing and the block-to-schedule pipeline.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "block_timing.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace detail {

std::vector<double> slot_durations(int stages, const SlotLengths& lengths) {
    std::vector<double> duration(static_cast<std::size_t>(stages) * pass_count);
    for (int s = 0; s < stages; ++s)
        for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW})
            duration[static_cast<std::size_t>(s) * pass_count + static_cast<std::size_t>(pass)] =
                lengths.of(pass);
    return duration;
}

Timeline asap_timeline(const Schedule& schedule, const std::vector<double>& duration) {
    const int stages = schedule.stages();
    Timeline t;
    t.schedule = schedule.name;
    t.devices = schedule.devices;
    t.microbatches = schedule.microbatches;
    t.chunks = schedule.chunks;
    t.stage_device = schedule.stage_device;
    t.time_unit = "slot";
    t.device_ops.resize(schedule.device_ops.size());
    for (std::size_t d = 0; d < schedule.device_ops.size(); ++d)
        t.device_ops[d].resize(schedule.device_ops[d].size());
    std::vector<double> end(dense_op_count(schedule.microbatches, stages), 0.0);
    std::vector<double> device_free(static_cast<std::size_t>(schedule.devices), 0.0);
    DependencyWalker walker(schedule);
    auto issue = walker.run([&](int device, int position, const Op& op, const Predecessors& preds) {
        double start = device_free[device];
        for (int k = 0; k < preds.count; ++k)
            start = std::max(start, end[dense_op_index(preds.op[k], stages)]);
        const double finish = start + duration[static_cast<std::size_t>(op.stage) * pass_count +
                                               static_cast<std::size_t>(op.pass)];
        end[dense_op_index(op, stages)] = finish;
        device_free[device] = finish;
        t.device_ops[device][position] = TimedOp{op, start, finish};
    });
    if (issue) throw InvalidSchedule(issue->message);
    return t;
}

std::vector<double> end_times(const Timeline& timeline) {
    std::vector<double> end(dense_op_count(timeline.microbatches, timeline.stages()), -1.0);
    for (const auto& ops : timeline.device_ops)
        for (const TimedOp& t : ops)
            end[dense_op_index(t.op, timeline.stages())] = t.end;
    return end;
}

double order_peak(const std::vector<Op>& ops, const MemoryModel& memory) {
    double held = 0;
    double peak = 0;
    for (const Op& op : ops) {
        const double mb = memory.activation[op.stage];
        const double mw = memory.held_for_w[op.stage];
        switch (op.pass) {
            case Pass::F:
                held += mb;
                peak = std::max(peak, held);
                break;
            case Pass::B:
                held -= mb - mw;
                break;
            case Pass::W:
                held -= mw;
                break;
            case Pass::BW:
                held -= mb;
                break;
        }
    }
    return peak;
}

}  // namespace detail

namespace {

struct Placed {
    std::int64_t start;
    std::int64_t end;
    Op op;
};

}  // namespace

Timeline repeat_block(const BuildingBlock& block, int microbatches) {
    check_block(block);
    if (microbatches < 1 || microbatches % block.group != 0)
        throw InvalidBlock(fmt::format(
            "block '{}' repeats groups of {} microbatches: m must be a positive multiple of {}, "
            "got {}",
            block.name, block.group, block.group, microbatches));
    const int repeats = microbatches / block.group;
    // Per device, the block's passes in start order; repetitions are merged in order below.
    std::vector<std::vector<Placed>> per_device(static_cast<std::size_t>(block.devices));
    for (const BlockPass& p : block.passes)
        per_device[block.stage_device[p.stage]].push_back(
            Placed{p.start, p.start + block.lengths.of(p.pass), Op{p.pass, p.microbatch, p.stage}});
    Timeline t;
    t.schedule = block.name;
    t.devices = block.devices;
    t.microbatches = microbatches;
    t.chunks = block.chunks;
    t.stage_device = block.stage_device;
    t.time_unit = "slot";
    t.device_ops.resize(static_cast<std::size_t>(block.devices));
    std::vector<Placed> all;
    for (int d = 0; d < block.devices; ++d) {
        const std::vector<Placed>& base = per_device[d];
        all.clear();
        all.reserve(base.size() * static_cast<std::size_t>(repeats));
        for (int r = 0; r < repeats; ++r) {
            const std::int64_t shift = static_cast<std::int64_t>(r) * block.interval;
            for (const Placed& p : base)
                all.push_back(Placed{p.start + shift, p.end + shift,
                                     Op{p.op.pass, r * block.group + p.op.microbatch, p.op.stage}});
        }
        std::sort(all.begin(), all.end(), [](const Placed& a, const Placed& b) {
            return a.start != b.start ? a.start < b.start : a.end < b.end;
        });
        auto& ops = t.device_ops[d];
        ops.reserve(all.size());
        for (std::size_t k = 0; k < all.size(); ++k) {
            if (k > 0 && all[k].start < all[k - 1].end)
                throw InvalidBlock(fmt::format(
                    "block '{}' collides when repeated every {} slots: on device {}, {} (slots "
                    "{}..{}) overlaps {} (slots {}..{}) at slot {}",
                    block.name, block.interval, d, to_string(all[k].op), all[k].start,
                    all[k].end - 1, to_string(all[k - 1].op), all[k - 1].start, all[k - 1].end - 1,
                    all[k].start));
            ops.push_back(TimedOp{all[k].op, static_cast<double>(all[k].start),
                                  static_cast<double>(all[k].end)});
        }
    }
    return t;
}

Schedule schedule_from_timeline(const Timeline& timeline, std::string name) {
    Schedule s = make_empty_schedule(std::move(name), timeline.devices, timeline.microbatches,
                                     timeline.chunks, timeline.stage_device);
    for (int d = 0; d < timeline.devices; ++d) {
        auto& ops = s.device_ops[d];
        ops.reserve(timeline.device_ops[d].size());
        for (const TimedOp& t : timeline.device_ops[d])
            ops.push_back(t.op);
    }
    return s;
}

Timeline squeeze(const Timeline& timeline) {
    std::vector<double> duration(static_cast<std::size_t>(timeline.stages()) * pass_count, 0.0);
    for (const auto& ops : timeline.device_ops)
        for (const TimedOp& t : ops)
            duration[static_cast<std::size_t>(t.op.stage) * pass_count +
                     static_cast<std::size_t>(t.op.pass)] = t.end - t.start;
    return detail::asap_timeline(schedule_from_timeline(timeline, timeline.schedule), duration);
}

Schedule schedule_from_block(const BuildingBlock& block, int microbatches,
                             const BlockScheduleOptions& options) {
    const Timeline repeated = repeat_block(block, microbatches);
    Schedule schedule = schedule_from_timeline(repeated, block.name);
    if (auto issue = validate(schedule))
        throw InvalidBlock(fmt::format("block '{}' repeated {} times is not a valid schedule: {}",
                                       block.name, microbatches, issue->message));
    if (!options.reorder) return schedule;
    const Timeline squeezed =
        detail::asap_timeline(schedule, detail::slot_durations(block.stages(), block.lengths));
    return reorder(schedule, squeezed, unit_memory_model(block.devices, block.chunks));
}

}  // namespace pipesim
