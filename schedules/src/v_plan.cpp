// Cost-aware V-shape candidates: building blocks laid out for the real pass lengths, placed
// under a memory cap, timed with the planning costs.
#include "v_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "block_timing.hpp"
#include "generators.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/phases.hpp"
#include "schedules/placement.hpp"
#include "v_compact.hpp"
#include "v_rounds.hpp"

namespace pipesim::detail {

namespace {

constexpr double eps = 1e-9;
// Problems with at most this many ops get every turn delay; larger ones only the undelayed
// block (the candidates' work grows with p·m and generation must stay fast at p=64, m=1024).
constexpr double many_delays_ops = 5e3;
// Problems with at most this many ops also get blocks laid out with unit slots placed with
// the real pass lengths, and the greedy list schedule.
constexpr double all_placements_ops = 1.5e5;
// Problems between many_delays_ops and this many ops with 2p microbatches try every turn
// delay on fewer microbatches first (offer_v_candidates).
constexpr double preselect_ops = 1.25e4;
// The shorter problem's layouts are compacted up to this many ops (p = 24; the compaction
// is the costly part: at p = 32 it would double the search's time at m = 256).
constexpr double compact_few_ops = 7e3;
// The preselected layouts are also compacted for all m up to this many ops (the compaction's
// work grows faster than m: v-half p = 8, m = 2048 would take 1.3 s).
constexpr double compact_winners_ops = 2.5e4;
// Two-section blocks are (offset pairs)·(p − 2) more layouts, each about as costly as the
// problem's ops: laid out while ops·(p − 2) stays within this (search -p 32 -m 8 with
// --mem-limit 32 took 0.96 s with them and 0.32 s without; -p 128 -m 6, 22.8 s against
// 1.0 s, and -p 192 -m 4, 60 s against 3 s, with the same ranking).
constexpr double sections_work = 1e5;
// Problems above this many ops keep the unit-slot order (one candidate costs about as much as
// generating it; v-half at p = m = 1024 must stay within 2 s).
constexpr double huge_ops = 1e6;
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

// The peak of `schedule` in full-stage microbatches with the costs' W memory share.
double plan_peak(const Schedule& schedule, const PlanningCosts& costs) {
    const MemoryModel memory =
        unit_memory_model(schedule.devices, schedule.chunks, costs.w_memory_share);
    double peak = 0;
    for (const auto& ops : schedule.device_ops)
        peak = std::max(peak, order_peak(ops, memory));
    return peak;
}

}  // namespace

VPlanFigures plan_figures(const Schedule& schedule, const PlanningCosts& costs) {
    VPlanFigures figures;
    figures.length = planned_length(schedule, costs);
    figures.peak = plan_peak(schedule, costs);
    return figures;
}

VPlanFigures figures_of(const Schedule& order, const OrderFigures& seen, double scale) {
    // planned_length()'s sums on the scaled times, and plan_peak()'s highest peak.
    VPlanFigures figures;
    const double never = std::numeric_limits<double>::infinity();
    double earliest = never;
    for (std::size_t d = 0; d < order.device_ops.size(); ++d) {
        figures.peak = std::max(figures.peak, seen.peak[d]);
        if (order.device_ops[d].empty()) continue;
        const double first = scale * seen.first_start[d];
        const double last = scale * seen.last_end[d];
        figures.length.longest_span = std::max(figures.length.longest_span, last - first);
        figures.length.makespan = std::max(figures.length.makespan, last);
        earliest = std::min(earliest, first);
    }
    if (earliest < never) figures.length.makespan -= earliest;
    return figures;
}

double power_of_two_scale(const std::vector<double>& planning,
                          const std::vector<double>& durations) {
    if (planning.size() != durations.size() || durations.empty() || !(durations[0] > 0)) return 0;
    const double scale = planning[0] / durations[0];
    int exponent = 0;
    if (!std::isfinite(scale) || std::frexp(scale, &exponent) != 0.5) return 0;
    for (std::size_t k = 0; k < durations.size(); ++k)
        if (planning[k] != scale * durations[k]) return 0;
    return scale;
}

double BestPlan::peak_limit() const {
    return cap_ + eps;
}

void BestPlan::mark() {
    recording_ = true;
    offered_best_.reset();
}

namespace {

// Whether figures a rank before b: a shorter longest span, then a lower peak, then a shorter
// makespan.
bool better(const VPlanFigures& a, const VPlanFigures& b) {
    return shorter(a.length, b.length) ||
           (same_length(a.length, b.length) &&
            (a.peak < b.peak - eps || (std::abs(a.peak - b.peak) <= eps && a.length < b.length)));
}

// Whether a and b run the same ops in the same orders on the same placement.
bool same_order(const Schedule& a, const Schedule& b) {
    return a.device_ops == b.device_ops && a.stage_device == b.stage_device &&
           a.microbatch_stages == b.microbatch_stages && a.fb_pairs == b.fb_pairs;
}

}  // namespace

bool BestPlan::offer(Schedule candidate, Structure structure, const VPlanFigures* figures) {
    // Every op once (the structure); the timing walk finds an op before its input or a
    // deadlock, which leaves the candidate out too. The peak first: a candidate above the cap
    // is left out whatever its timing. The same order as the best has its figures: no better;
    // the same order as the last one timed and left out has that one's figures.
    if (best_ && same_order(candidate, *best_)) return false;
    VPlanFigures f;
    if (timed_out_ && same_order(candidate, *timed_out_)) {
        f = timed_out_figures_;
    } else {
        if (structure == Structure::check && validate_structure(candidate)) return false;
        if (figures != nullptr) {
            f = *figures;
            if (f.peak > peak_limit()) return false;
        } else {
            f.peak = plan_peak(candidate, costs_);
            if (f.peak > peak_limit()) return false;
            try {
                f.length = planned_length(candidate, costs_);
            } catch (const InvalidSchedule&) {
                return false;
            }
        }
        if (recording_ && (!offered_best_ || better(f, offered_best_->figures)))
            offered_best_ = Offered{candidate, f};
    }
    if (best_) {
        if (!better(f, figures_)) {
            timed_out_ = std::move(candidate);
            timed_out_figures_ = f;
            return false;
        }
    }
    best_ = std::move(candidate);
    figures_ = f;
    ++kept_;
    return true;
}

namespace {

constexpr BestPlan::Structure known = BestPlan::Structure::known;

// Lays out and places the candidates of one problem.
class Candidates {
  public:
    Candidates(int devices, int microbatches, const PlanningCosts& costs, double cap,
               BestPlan& best)
        : p_(devices),
          m_(microbatches),
          ops_(6.0 * devices * microbatches),
          cap_(cap),
          duration_(pass_durations(costs.times)),
          memory_(unit_memory_model(devices, 2, costs.w_memory_share)),
          unit_memory_(unit_memory_model(devices, 2)),
          best_(best) {
        // The fills and reorders with the planning durations see planned_length()'s times
        // when there is no latency (and, for the fill, every time is exact).
        timed_as_planned_ =
            costs.comm_latency == 0 && duration_ == planning_durations(costs, 2 * devices);
        fill_timed_as_planned_ = timed_as_planned_ && durations_are_exact(duration_, microbatches);
    }

    double ops() const { return ops_; }

    // A valid order as it is, filled under the cap and reordered, timed with the real lengths.
    // The fill and the reorder move ops within their devices' orders: the structure holds.
    void place_order(Schedule order) {
        const std::vector<double> uniform(static_cast<std::size_t>(p_), cap_);
        offer_filled(order, uniform);
        offer_reordered(order);
        best_.offer(std::move(order), known);
    }

    // The block of `layout`, repeated and placed every way (see offer_v_candidates).
    void place(const BlockLayout& layout, bool every_way, bool compact) {
        BuildingBlock block;
        Schedule order;
        try {
            block = place_block(layout);
            order = schedule_from_block(block, m_, {.reorder = false, .fill_idle = false});
        } catch (const std::invalid_argument&) {
            return;  // no free slots for some pass, or the repetition collides
        }
        // Layouts whose differences the placement absorbs give the same block: its candidates
        // were offered already.
        const bool repeat = std::any_of(placed_.begin(), placed_.end(), [&](const Placed& d) {
            return d.block == block && d.every_way >= every_way && d.compact >= compact;
        });
        if (repeat) return;
        placed_.push_back({block, every_way, compact});
        // The block passed check_block (every pass of every microbatch and stage once), so the
        // repeated order and those made from it by moving ops within devices hold their
        // structure.
        const Lifespan life = block_lifespan(block, unit_memory_);
        if (life.max_bound > 2 * cap_ + 1) return;  // far above the cap: no use
        std::vector<double> bound = life.device_bound;
        for (double& b : bound)
            b = std::min(b, cap_);
        // Placed with the real pass lengths: idle slots filled under each device's bound or
        // under the cap on every device, and warm-up and cool-down reordered.
        const std::vector<double> uniform(bound.size(), cap_);
        if (ops_ <= all_placements_ops) offer_filled(order, bound);
        if (bound != uniform || ops_ > all_placements_ops) offer_filled(order, uniform);
        if (compact) offer_compacted(block, m_, memory_, cap_, best_);
        if (!every_way || ops_ > all_placements_ops) return;
        offer_reordered(order);
        // Placed with the block's own slots.
        const std::vector<double> slots = slot_durations(2 * p_, block.lengths);
        if (auto filled = fill_idle(order, slots, bound, memory_, best_.peak_limit()))
            best_.offer(*std::move(filled), known);
        AsapTiming slot_timing;
        if (!asap_timing(order, slots, slot_timing))
            best_.offer(reorder_timed(order, slots, std::move(slot_timing), memory_), known);
        best_.offer(std::move(order), known);
    }

  private:
    // `order`, with the figures the step that made it saw when they are plan_figures()'s.
    void offer_seen(Schedule order, const OrderFigures* seen) {
        std::optional<VPlanFigures> figures;
        if (seen != nullptr) figures = figures_of(order, *seen);
        best_.offer(std::move(order), known, figures ? &*figures : nullptr);
    }
    // `order` filled under `cap` with the planning durations, offered likewise.
    void offer_filled(const Schedule& order, const std::vector<double>& cap) {
        OrderFigures seen;
        OrderFigures* const want = fill_timed_as_planned_ ? &seen : nullptr;
        if (auto filled = fill_idle(order, duration_, cap, memory_, best_.peak_limit(), want))
            offer_seen(*std::move(filled), want);
    }
    // `order` reordered with the planning durations, offered likewise.
    void offer_reordered(const Schedule& order) {
        AsapTiming timing;
        if (asap_timing(order, duration_, timing)) return;
        OrderFigures seen;
        OrderFigures* const want = timed_as_planned_ ? &seen : nullptr;
        Schedule reordered = reorder_timed(order, duration_, std::move(timing), memory_, want);
        offer_seen(std::move(reordered), want);
    }

    struct Placed {
        BuildingBlock block;
        bool every_way = false;
        bool compact = false;
    };

    int p_;
    int m_;
    double ops_;
    double cap_;
    std::vector<double> duration_;
    MemoryModel memory_;
    MemoryModel unit_memory_;
    BestPlan& best_;
    bool timed_as_planned_ = false;
    bool fill_timed_as_planned_ = false;
    std::vector<Placed> placed_;  // the blocks placed so far, and how
};

}  // namespace

void offer_v_candidates(const VPlanRequest& r, const PlanningCosts& costs, double cap,
                        BestPlan& best) {
    const int p = r.devices;
    const int m = r.microbatches;
    Candidates candidates(p, m, costs, cap, best);
    const double ops = candidates.ops();
    if (ops > huge_ops) return;
    const bool small = ops <= many_delays_ops;
    // Every turn delay on all m (`many`), or first on fewer microbatches (`few_first`): 3p, a
    // warm-up, p microbatches of steady state and a cool-down (with 2p, p = 2 and m = 188 at
    // stage pass times 4, 0.66, 1, latency 1 and M_W = M_B/2 chose a layout 2.8 points of bubble
    // worse).
    const bool few_first = r.preselect == Preselect::small_uncompacted && small && m > 3 * p;
    const bool many = small && !few_first;
    const bool large = ops > all_placements_ops;
    // Whether the layouts tried on fewer microbatches, and their winners, are compacted.
    const bool compact_preselected = r.preselect != Preselect::small_uncompacted;

    std::vector<SlotLengths> slot_choices;
    const std::optional<SlotLengths> scaled = cost_slots(costs);
    if (scaled) slot_choices.push_back(*scaled);
    if (!scaled || ops <= all_placements_ops) slot_choices.push_back(SlotLengths{});

    // Every block layout of the request: the offsets (only the first for large problems), each
    // with its turn delays (all of them for `every`), and the two-section blocks.
    const auto for_each_layout = [&](bool every, const auto& use) {
        for (const SlotLengths& lengths : slot_choices) {
            for (std::size_t k = 0; k < (large ? 1 : r.offsets.size()); ++k)
                for (int delay : turn_delays(lengths, every))
                    for (int far_delay : every ? std::vector<int>{0, 1} : std::vector<int>{0}) {
                        BlockLayout layout = vshape_layout(p, r.offsets[k], lengths);
                        layout.b_gap[static_cast<std::size_t>(2 * p - 1)] += delay;
                        // The first chunk's backwards may start later than the second chunk's
                        // end.
                        layout.b_gap[static_cast<std::size_t>(p - 1)] += far_delay;
                        use(layout, true);
                    }
            if (!r.sections || !every || ops * (p - 2) > sections_work) continue;
            // Two sections: the first `split` devices' chains advance by one offset, the
            // others' by a smaller one (memory between the two offsets' blocks).
            for (int high : r.offsets)
                for (int low : r.offsets) {
                    if (low >= high) continue;
                    for (int split = 1; split < p - 1; ++split) {
                        BlockLayout layout = vshape_layout(p, high, lengths);
                        for (int i = split; i < p - 1; ++i) {
                            layout.f_gap[static_cast<std::size_t>(i + 1)] = (low - 1) * lengths.f;
                            layout.b_gap[static_cast<std::size_t>(2 * p - 2 - i)] =
                                (low - 1) * lengths.b;
                        }
                        use(layout, false);
                    }
                }
        }
    };
    // Above many_delays_ops (Preselect::mid_sized), or with more than 3p microbatches
    // (Preselect::small_uncompacted, on 3p), every layout is tried on the same pipeline with
    // fewer microbatches (otherwise 2p: warm-up, a steady state and cool-down all occur) while that
    // has at most preselect_ops ops, and the layouts that won there are placed for all m. How a
    // layout fits the pass times and the latency shows in its first microbatches; its later ones
    // repeat its steady state.
    const int few = std::min(m, (few_first ? 3 : 2) * p);
    const bool preselect = (few_first || r.preselect == Preselect::mid_sized) && !many && !large &&
                           6.0 * p * few <= preselect_ops;
    const bool every = many || (preselect && few == m);
    for_each_layout(every, [&](const BlockLayout& layout, bool every_way) {
        report_phase("planning V-shape layouts");  // many at large p: Ctrl-C between them
        candidates.place(layout, every_way, many || (every && ops <= compact_few_ops));
    });
    if (preselect && few < m) {
        BestPlan few_best(costs, cap);
        Candidates few_candidates(p, few, costs, cap, few_best);
        struct Tried {
            BlockLayout layout;
            std::optional<BestPlan::Offered> best;  // its best order on `few` microbatches
            bool won = false;                       // better than every layout before it
        };
        std::vector<Tried> tried;
        for_each_layout(true, [&](const BlockLayout& layout, bool every_way) {
            const std::size_t kept = few_best.kept();
            few_best.mark();
            few_candidates.place(layout, every_way,
                                 compact_preselected && 6.0 * p * few <= compact_few_ops);
            tried.push_back({layout, few_best.offered_best(), few_best.kept() != kept});
        });
        // The best two, as a layout's rank may change with the number of microbatches; and
        // every other layout as short as the best there with an order of its own, as the few
        // microbatches did not tell them apart (p = 21 with chunk times 3, 3, 7 and latency 1:
        // V-Min's turn delays 0, 1 and 2 tie on 42 microbatches; on 52 the delay 2 is shorter).
        std::vector<const Tried*> chosen;
        for (const Tried& t : tried)
            if (t.won) chosen.push_back(&t);
        if (chosen.size() > 2) chosen.erase(chosen.begin(), chosen.end() - 2);
        const VPlanFigures& shortest = few_best.figures();
        for (const Tried& t : tried) {
            if (!t.best || !same_length(t.best->figures.length, shortest.length)) continue;
            const bool repeat = std::any_of(chosen.begin(), chosen.end(), [&](const Tried* c) {
                return c == &t || (c->best && same_order(c->best->order, t.best->order));
            });
            if (!repeat) chosen.push_back(&t);
        }
        // A tie is compacted for all m only within the shorter problem's compaction limit (at
        // v-half p = 8, m = 512 one more compacted layout would cost 40 % more time).
        for (const Tried* t : chosen)
            candidates.place(
                t->layout, true,
                compact_preselected && ops <= (t->won ? compact_winners_ops : compact_few_ops));
    }
    // ZB-V's order with warm-ups for the cap (and, for small problems, lower peaks).
    const int chunk_cap = static_cast<int>(std::min(2.0 * p, std::floor(2 * cap + eps)));
    // With few microbatches many peaks give the same order (at p = 512, m = 1 a large cap
    // tried a thousand): each order is placed once.
    std::vector<std::vector<Op>> previous;
    for (int peak = chunk_cap; peak >= 2 && !large; --peak) {
        report_phase("planning ZB-V orders");
        Schedule order = zb_v_order(GeneratorOptions{p, m, 2, 0, {}}, peak);
        if (order.device_ops == previous) continue;
        previous = order.device_ops;
        if (validate(order)) continue;
        candidates.place_order(std::move(order));
        if (!many) break;
    }
    offer_v_rounds(p, m, costs, cap, large ? 0 : 8, !large, best);
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

bool plans_with_costs(const GeneratorOptions& o) {
    return !o.planning.empty() && 6.0 * o.devices * o.microbatches <= huge_ops;
}

Schedule plan_v_schedule(const GeneratorOptions& o, std::vector<Schedule> unit_orders,
                         std::vector<int> offsets, const char* name, Preselect preselect,
                         BestPlan::Structure unit_structure) {
    std::vector<UnitOrder> orders;
    orders.reserve(unit_orders.size());
    for (Schedule& s : unit_orders)
        orders.push_back(UnitOrder{std::move(s), std::nullopt, {}});
    return plan_v_schedule(o, std::move(orders), std::move(offsets), name, preselect,
                           unit_structure);
}

Schedule plan_v_schedule(const GeneratorOptions& o, std::vector<UnitOrder> unit_orders,
                         std::vector<int> offsets, const char* name, Preselect preselect,
                         BestPlan::Structure unit_structure) {
    Schedule& first = unit_orders.front().order;
    first.name = name;
    if (!plans_with_costs(o)) return std::move(first);  // generate_schedule() checks it
    const MemoryModel unit_memory = unit_memory_model(first.devices, first.chunks);
    double cap = 0;
    if (unit_orders.front().seen) {
        for (double peak : unit_orders.front().seen->peak)  // the same sums
            cap = std::max(cap, peak);
    } else {
        for (const auto& ops : first.device_ops)
            cap = std::max(cap, order_peak(ops, unit_memory));
    }
    BestPlan best(o.planning, cap);
    const std::vector<double> planning = planning_durations(o.planning, first.stages());
    const MemoryModel plan_memory =
        unit_memory_model(first.devices, first.chunks, o.planning.w_memory_share);
    const bool same_memory = plan_memory.activation == unit_memory.activation &&
                             plan_memory.held_for_w == unit_memory.held_for_w;
    for (UnitOrder& u : unit_orders) {
        const double scale = u.seen && same_memory && o.planning.comm_latency == 0
                                 ? power_of_two_scale(planning, u.durations)
                                 : 0.0;
        std::optional<VPlanFigures> figures;
        if (scale > 0) figures = figures_of(u.order, *u.seen, scale);
        best.offer(std::move(u.order), unit_structure, figures ? &*figures : nullptr);
    }
    offer_v_candidates(
        VPlanRequest{o.devices, o.microbatches, std::move(offsets), true, false, preselect},
        o.planning, cap, best);
    // BestPlan took only candidates that validate() accepts (the structure, then the timing
    // walk: an op before its input or a deadlock leaves a candidate out).
    if (best.empty())
        throw std::invalid_argument(fmt::format("{} cannot run with p={} m={} v={}: no valid order",
                                                name, o.devices, o.microbatches, o.chunks));
    Schedule chosen = best.take();
    chosen.name = name;
    return chosen;
}

}  // namespace pipesim::detail
