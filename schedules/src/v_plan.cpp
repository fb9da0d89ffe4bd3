// Cost-aware V-shape candidates: building blocks laid out for the real pass lengths, placed
// under a memory cap, timed with the planning costs.
#include "v_plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "block_timing.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

namespace {

constexpr double eps = 1e-9;
// Problems with at most this many ops get every turn delay; larger ones only the undelayed
// block (the candidates' work grows with p·m and generation must stay fast at p=64, m=1024).
constexpr double many_delays_ops = 3e4;
// Problems with at most this many ops also get blocks laid out with unit slots placed with
// the real pass lengths, and the greedy list schedule.
constexpr double all_placements_ops = 1.5e5;
// The longest slot a pass gets when the block is laid out in the ratio of the pass times.
constexpr int max_slot_length = 8;

bool shorter(const PlannedLength& a, const PlannedLength& b) {
    const double tolerance = eps * std::max(1.0, std::abs(b.longest_span));
    return a.longest_span < b.longest_span - tolerance;
}

bool same_length(const PlannedLength& a, const PlannedLength& b) {
    return !shorter(a, b) && !shorter(b, a);
}

double mean(const std::vector<double>& x) {
    return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

// Slot lengths in the ratio of the mean F, B and W times (the shortest pass one slot, none
// longer than max_slot_length); nothing when that is unit slots.
std::optional<SlotLengths> cost_slots(const PlanningCosts& costs) {
    const double f = mean(costs.times.forward);
    const double b = mean(costs.times.backward_input);
    const double w = mean(costs.times.backward_weight);
    const double shortest = std::min({f, b, w});
    const double longest = std::max({f, b, w});
    const double unit = std::max(shortest, longest / max_slot_length);
    auto slots = [&](double x) { return std::max(1, static_cast<int>(std::lround(x / unit))); };
    const SlotLengths lengths{slots(f), slots(b), slots(w)};
    if (lengths == SlotLengths{}) return std::nullopt;
    return lengths;
}

// The turn delays tried with slot lengths `l`: none; for small problems also one and two of
// each pass length and half an interval (the authors' V-Min waits two unit slots at the turn
// for p divisible by 3, their V-Half three for even p).
std::vector<int> turn_delays(const SlotLengths& l, bool many) {
    std::vector<int> delays{0};
    if (!many) return delays;
    for (int d : {1, 2, l.f, l.b, l.w, 2 * l.w, l.b + l.w, l.f + l.b + l.w})
        if (std::find(delays.begin(), delays.end(), d) == delays.end()) delays.push_back(d);
    return delays;
}

}  // namespace

VPlanFigures plan_figures(const Schedule& schedule, const PlanningCosts& costs) {
    VPlanFigures figures;
    figures.length = planned_length(schedule, costs);
    const MemoryModel memory =
        unit_memory_model(schedule.devices, schedule.chunks, costs.w_memory_share);
    for (const auto& ops : schedule.device_ops)
        figures.peak = std::max(figures.peak, order_peak(ops, memory));
    return figures;
}

bool BestPlan::offer(Schedule candidate) {
    if (validate(candidate)) return false;
    const VPlanFigures f = plan_figures(candidate, costs_);
    if (f.peak > cap_ + eps) return false;
    if (best_) {
        const bool better =
            shorter(f.length, figures_.length) ||
            (same_length(f.length, figures_.length) &&
             (f.peak < figures_.peak - eps ||
              (std::abs(f.peak - figures_.peak) <= eps && f.length < figures_.length)));
        if (!better) return false;
    }
    best_ = std::move(candidate);
    figures_ = f;
    return true;
}

void offer_v_candidates(const VPlanRequest& r, const PlanningCosts& costs, double cap,
                        BestPlan& best) {
    const int p = r.devices;
    const int m = r.microbatches;
    const double ops = 6.0 * p * m;
    const std::vector<double> duration = pass_durations(costs.times);
    const MemoryModel memory = unit_memory_model(p, 2, costs.w_memory_share);
    const MemoryModel unit_memory = unit_memory_model(p, 2);

    std::vector<SlotLengths> slot_choices;
    const std::optional<SlotLengths> scaled = cost_slots(costs);
    if (scaled) slot_choices.push_back(*scaled);
    if (!scaled || ops <= all_placements_ops) slot_choices.push_back(SlotLengths{});

    for (const SlotLengths& lengths : slot_choices) {
        for (int offset : r.offsets) {
            for (int delay : turn_delays(lengths, ops <= many_delays_ops)) {
                BlockLayout layout = vshape_layout(p, offset, lengths);
                layout.b_gap[static_cast<std::size_t>(2 * p - 1)] += delay;
                BuildingBlock block;
                Schedule order;
                try {
                    block = place_block(layout);
                    order = schedule_from_block(block, m, {.reorder = false, .fill_idle = false});
                } catch (const std::invalid_argument&) {
                    continue;  // no free slots for some pass, or the repetition collides
                }
                const Lifespan life = block_lifespan(block, unit_memory);
                if (life.max_bound > 2 * cap + 1) continue;  // far above the cap: no use
                std::vector<double> bound = life.device_bound;
                for (double& b : bound)
                    b = std::min(b, cap);
                // Placed with the real pass lengths: idle slots filled under the cap, and
                // warm-up and cool-down reordered.
                if (auto filled = fill_idle(order, duration, bound, memory))
                    best.offer(*std::move(filled));
                if (ops <= all_placements_ops) {
                    AsapTiming timing;
                    if (!asap_timing(order, duration, timing))
                        best.offer(reorder_timed(order, duration, std::move(timing), memory));
                    // Placed with the block's own slots.
                    const std::vector<double> slots = slot_durations(2 * p, block.lengths);
                    if (auto filled = fill_idle(order, slots, bound, memory))
                        best.offer(*std::move(filled));
                    AsapTiming slot_timing;
                    if (!asap_timing(order, slots, slot_timing))
                        best.offer(reorder_timed(order, slots, std::move(slot_timing), memory));
                    best.offer(std::move(order));
                }
            }
        }
    }
    if (r.greedy && ops <= all_placements_ops) {
        AutoScheduleOptions a;
        a.name = "v-greedy";
        a.devices = p;
        a.microbatches = m;
        a.chunks = 2;
        a.stage_device = vshape_placement(p, 2);
        a.costs = costs;
        a.memory_limit = cap;
        try {
            best.offer(auto_schedule(a));
        } catch (const std::invalid_argument&) {
            // The cap is too small for the greedy order.
        }
    }
}

Schedule plan_v_schedule(const GeneratorOptions& o, std::vector<Schedule> unit_orders,
                         std::vector<int> offsets, const char* name) {
    Schedule& first = unit_orders.front();
    first.name = name;
    if (o.planning.empty()) return std::move(first);
    const MemoryModel unit_memory = unit_memory_model(first.devices, first.chunks);
    double cap = 0;
    for (const auto& ops : first.device_ops)
        cap = std::max(cap, order_peak(ops, unit_memory));
    BestPlan best(o.planning, cap);
    for (Schedule& s : unit_orders)
        best.offer(std::move(s));
    offer_v_candidates(VPlanRequest{o.devices, o.microbatches, std::move(offsets), true},
                       o.planning, cap, best);
    Schedule chosen = best.take();
    chosen.name = name;
    return chosen;
}

}  // namespace pipesim::detail
