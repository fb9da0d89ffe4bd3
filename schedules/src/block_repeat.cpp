// Building blocks: repeating, squeezing and the block-to-schedule pipeline.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "block_timing.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/registry.hpp"
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

std::optional<ValidationIssue> asap_timing(const Schedule& schedule,
                                           const std::vector<double>& duration,
                                           AsapTiming& timing) {
    // The last end of any op is the latest device's (ends on a device only grow).
    if (quick_asap_walk(
            schedule, duration, 0.0, &timing.end, timing.walk,
            [](int, int, const Op&, double, double) {}, &timing.first_start, &timing.last_end)) {
        timing.makespan = 0;
        for (double e : timing.last_end)
            timing.makespan = std::max(timing.makespan, e);
        return std::nullopt;
    }
    double last = 0;
    timing.first_start.assign(schedule.device_ops.size(), 0.0);
    timing.last_end.assign(schedule.device_ops.size(), 0.0);
    auto issue = pipesim::asap_walk(
        schedule, duration, 0.0, timing.end,
        [&](int device, int position, const Op&, const Predecessors&, double start, double finish) {
            last = std::max(last, finish);
            if (position == 0) timing.first_start[device] = start;
            timing.last_end[device] = finish;
        });
    timing.makespan = last;
    return issue;
}

bool durations_are_exact(const std::vector<double>& duration, int microbatches) {
    constexpr int fraction_bits = 20;
    double total = 0;
    for (double d : duration) {
        const double scaled = std::ldexp(d, fraction_bits);
        if (!(d >= 0) || scaled != std::floor(scaled)) return false;
        total += d;
    }
    return total * std::max(1, microbatches) < std::ldexp(1.0, 32);
}

Timeline asap_timeline(const Schedule& schedule, const std::vector<double>& duration) {
    Timeline t = empty_timeline(schedule, "slot");
    for (std::size_t d = 0; d < schedule.device_ops.size(); ++d)
        t.device_ops[d].resize(schedule.device_ops[d].size());
    std::vector<double> end;
    auto issue = pipesim::asap_walk(schedule, duration, 0.0, end,
                                    [&](int device, int position, const Op& op, const Predecessors&,
                                        double start, double finish) {
                                        t.device_ops[device][position] = TimedOp{op, start, finish};
                                    });
    if (issue) throw InvalidSchedule(issue->message);
    return t;
}

std::vector<double> timeline_durations(const Timeline& timeline) {
    std::vector<double> duration(static_cast<std::size_t>(timeline.stages()) * pass_count, 0.0);
    for (const auto& ops : timeline.device_ops)
        for (const TimedOp& t : ops)
            duration[static_cast<std::size_t>(t.op.stage) * pass_count +
                     static_cast<std::size_t>(t.op.pass)] = t.end - t.start;
    return duration;
}

std::vector<double> end_times(const Timeline& timeline) {
    std::vector<double> end(output_slot_count(timeline.microbatches, timeline.stages()), -1.0);
    for (const auto& ops : timeline.device_ops)
        for (const TimedOp& t : ops)
            if (t.op.pass != Pass::W) end[output_slot(t.op, timeline.stages())] = t.end;
    return end;
}

double order_peak(const std::vector<Op>& ops, const MemoryModel& memory) {
    double held = 0;
    double peak = 0;
    const std::size_t stages = memory.activation.size();
    if (ops.size() < 2 * stages * pass_count) {
        for (const Op& op : ops) {
            held += memory_change(op, memory);
            peak = std::max(peak, held);
        }
        return peak;
    }
    // A long order: memory_change() looked up per stage and pass (the same values, summed in
    // the same order).
    std::vector<double> change(stages * pass_count);
    for (std::size_t s = 0; s < stages; ++s)
        for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW})
            change[s * pass_count + static_cast<std::size_t>(pass)] =
                memory_change(Op{pass, 0, static_cast<std::int32_t>(s)}, memory);
    for (const Op& op : ops) {
        held += change[static_cast<std::size_t>(op.stage) * pass_count +
                       static_cast<std::size_t>(op.pass)];
        peak = std::max(peak, held);
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

// The block repeated for `microbatches` microbatches, device by device in start order:
// `on_device(d, count)` once per device with its op count, then `on_op(d, placed)` for each of
// its ops. A pass starting at slot s = q·T + o (0 ≤ o < T) of repetition r starts in period
// r + q at offset o, so walking the periods in order and, within one, the device's passes by
// (offset, length) gives the start order (ties by end, as a sort by (start, end) would)
// without sorting the m·|passes| ops. Throws InvalidBlock naming the earliest collision: of
// the first two passes that overlap on each device, those that meet at the lowest slot (the
// lowest device on a tie).
template <class OnDevice, class OnOp>
void repeat_in_order(const BuildingBlock& block, int microbatches, OnDevice&& on_device,
                     OnOp&& on_op) {
    check_block(block);
    if (microbatches < 1 || microbatches % block.group != 0)
        throw InvalidBlock(fmt::format(
            "block '{}' repeats groups of {} microbatches: m must be a positive multiple of {}, "
            "got {}",
            block.name, block.group, block.group, microbatches));
    const int repeats = microbatches / block.group;
    if (const double ops = block_op_count(block, microbatches); ops > max_schedule_ops)
        throw InvalidBlock(fmt::format(
            "block '{}' repeated for {} microbatches gives {:.0f} ops, more than the {:.0e} a "
            "schedule may have",
            block.name, microbatches, ops, max_schedule_ops));
    const std::int64_t interval = block.interval;
    std::optional<std::pair<std::int64_t, std::string>> earliest_collision;
    std::vector<std::vector<Placed>> per_device(static_cast<std::size_t>(block.devices));
    for (const BlockPass& p : block.passes)
        per_device[block.stage_device[p.stage]].push_back(
            Placed{p.start, p.start + block.lengths.of(p.pass), Op{p.pass, p.microbatch, p.stage}});
    for (int d = 0; d < block.devices; ++d) {
        std::vector<Placed>& base = per_device[d];
        std::sort(base.begin(), base.end(), [&](const Placed& a, const Placed& b) {
            const std::int64_t oa = a.start % interval;
            const std::int64_t ob = b.start % interval;
            return oa != ob ? oa < ob : a.end - a.start < b.end - b.start;
        });
        std::int64_t first_period = 0;
        std::int64_t last_period = 0;
        // Per pass, the period its first repetition starts in (divided once, not per period).
        std::vector<std::int64_t> start_period(base.size());
        for (std::size_t k = 0; k < base.size(); ++k) {
            start_period[k] = base[k].start / interval;
            last_period = std::max(last_period, start_period[k] + repeats - 1);
        }
        on_device(d, base.size() * static_cast<std::size_t>(repeats));
        // The periods in which every pass repeats repeat the one before shifted by the
        // interval: past the second of them (checked for collisions, also with the one before)
        // they collide nowhere and need no test, up to the last one.
        std::int64_t steady_first = 0;
        std::int64_t steady_last = -1;
        if (!base.empty()) {
            steady_first = *std::max_element(start_period.begin(), start_period.end());
            steady_last = *std::min_element(start_period.begin(), start_period.end()) + repeats - 1;
        }
        bool any = false;
        bool collided = false;
        Placed previous{};
        for (std::int64_t period = first_period; period <= last_period && !collided; ++period) {
            if (period == steady_first + 2 && period <= steady_last) {
                for (; period <= steady_last; ++period)
                    for (std::size_t k = 0; k < base.size(); ++k) {
                        const Placed& p = base[k];
                        const std::int64_t r = period - start_period[k];
                        const std::int64_t shift = r * interval;
                        on_op(d, Placed{p.start + shift, p.end + shift,
                                        Op{p.op.pass,
                                           static_cast<std::int32_t>(r) * block.group +
                                               p.op.microbatch,
                                           p.op.stage}});
                    }
                // The last op placed: the steady period's last pass.
                const Placed& p = base.back();
                const std::int64_t r = steady_last - start_period.back();
                previous = Placed{
                    p.start + r * interval, p.end + r * interval,
                    Op{p.op.pass, static_cast<std::int32_t>(r) * block.group + p.op.microbatch,
                       p.op.stage}};
                if (period > last_period) break;
            }
            for (std::size_t k = 0; k < base.size(); ++k) {
                const Placed& p = base[k];
                const std::int64_t r = period - start_period[k];
                if (r < 0 || r >= repeats) continue;
                const std::int64_t shift = r * interval;
                const Placed placed{
                    p.start + shift, p.end + shift,
                    Op{p.op.pass, static_cast<std::int32_t>(r) * block.group + p.op.microbatch,
                       p.op.stage}};
                if (any && placed.start < previous.end) {
                    // Later devices may collide earlier: the message waits for all of them.
                    if (!earliest_collision || placed.start < earliest_collision->first)
                        earliest_collision.emplace(
                            placed.start,
                            fmt::format("block '{}' collides when repeated every {} slots: on "
                                        "device {}, {} (slots {}..{}) overlaps {} (slots {}..{}) "
                                        "at slot {}",
                                        block.name, block.interval, d, to_string(placed.op),
                                        placed.start, placed.end - 1, to_string(previous.op),
                                        previous.start, previous.end - 1, placed.start));
                    collided = true;
                    break;
                }
                on_op(d, placed);
                previous = placed;
                any = true;
            }
        }
    }
    if (earliest_collision) throw InvalidBlock(earliest_collision->second);
}

}  // namespace

Timeline repeat_block(const BuildingBlock& block, int microbatches) {
    Timeline t;
    t.schedule = block.name;
    t.devices = block.devices;
    t.microbatches = microbatches;
    t.chunks = block.chunks;
    t.stage_device = block.stage_device;
    t.time_unit = "slot";
    t.device_ops.resize(static_cast<std::size_t>(block.devices));
    repeat_in_order(
        block, microbatches, [&](int d, std::size_t count) { t.device_ops[d].reserve(count); },
        [&](int d, const Placed& p) {
            t.device_ops[d].push_back(
                TimedOp{p.op, static_cast<double>(p.start), static_cast<double>(p.end)});
        });
    return t;
}

Schedule schedule_from_timeline(const Timeline& timeline, std::string name) {
    Schedule s = make_empty_schedule(std::move(name), timeline.devices, timeline.microbatches,
                                     timeline.chunks, timeline.stage_device);
    s.microbatch_stages = timeline.microbatch_stages;
    for (int d = 0; d < timeline.devices; ++d) {
        auto& ops = s.device_ops[d];
        ops.reserve(timeline.device_ops[d].size());
        for (const TimedOp& t : timeline.device_ops[d])
            ops.push_back(t.op);
    }
    return s;
}

Timeline squeeze(const Timeline& timeline) {
    return detail::asap_timeline(schedule_from_timeline(timeline, timeline.schedule),
                                 detail::timeline_durations(timeline));
}

Schedule schedule_from_block(const BuildingBlock& block, int microbatches,
                             const BlockScheduleOptions& options) {
    return detail::schedule_from_block_seen(block, microbatches, options).order;
}

detail::UnitOrder detail::schedule_from_block_seen(const BuildingBlock& block, int microbatches,
                                                   const BlockScheduleOptions& options) {
    UnitOrder out;
    Schedule& schedule = out.order;
    // repeat_block checked the block's dependencies in slot time (they never cross
    // microbatches, so every repetition keeps them) and that no two passes collide, and lists
    // each device's passes in start order: the repeated order holds every op once and runs,
    // its slot times being a timing of it. The timing walk below is needed only to reorder.
    schedule = make_empty_schedule(block.name, block.devices, microbatches, block.chunks,
                                   block.stage_device);
    repeat_in_order(
        block, microbatches,
        [&](int d, std::size_t count) { schedule.device_ops[d].reserve(count); },
        [&](int d, const Placed& p) { schedule.device_ops[d].push_back(p.op); });
    if (!options.fill_idle && !options.reorder) return out;
    out.durations = detail::slot_durations(block.stages(), block.lengths);
    const std::vector<double>& duration = out.durations;
    const MemoryModel memory = unit_memory_model(block.devices, block.chunks);
    if (options.fill_idle) {
        const Lifespan life = block_lifespan(block, memory);
        OrderFigures figures;
        const bool exact = durations_are_exact(duration, microbatches);
        if (auto filled = detail::fill_idle(schedule, duration, life.device_bound, memory,
                                            std::numeric_limits<double>::infinity(),
                                            exact ? &figures : nullptr)) {
            schedule = *std::move(filled);
            if (exact) out.seen = std::move(figures);
            return out;
        }
    }
    if (!options.reorder) return out;
    detail::AsapTiming squeezed;
    if (auto issue = detail::asap_timing(schedule, duration, squeezed))
        throw InvalidBlock(fmt::format("block '{}' repeated {} times is not a valid schedule: {}",
                                       block.name, microbatches, issue->message));
    OrderFigures figures;
    schedule =
        detail::reorder_timed(std::move(schedule), duration, std::move(squeezed), memory, &figures);
    out.seen = std::move(figures);
    return out;
}

}  // namespace pipesim
