// Memory-capped search over the registered schedules, V-shape blocks (of the catalogue's
// offsets and of every six-slot starting pattern) and the automatic scheduler.
#include "schedules/search.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/auto_schedule.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"
#include "v_patterns.hpp"
#include "v_plan.hpp"

namespace pipesim {

namespace {

constexpr double eps = 1e-9;
// Peaks closer than this share of the lower one are the same on the search's front.
constexpr double front_peak_tolerance = 1e-3;
// V-shape block offsets tried: 1 V-Min, 2 V-Half, 4 V-ZB and those between and after.
constexpr int max_vshape_offset = 6;
// The most grid cells the six-slot pattern candidates lay out: every block up to p=12,
// m=60 (7.2·10⁶ cells at a cap of p), about a hundred at p=32, m=256 (1.5·10⁸ for all;
// the whole search there must stay within about a second).
constexpr double max_pattern_cells = 8e6;

// A candidate, built when its turn comes: the search holds only the best schedule so far and
// the one being timed (at p = m = 1024 each is some 10⁷ ops).
struct Candidate {
    std::string label;
    std::string kind;
    std::function<Schedule()> build;
};

// Every candidate for this p and m; a build throws std::invalid_argument where the candidate
// cannot be built (some need e.g. more microbatches). The builds capture by value.
std::vector<Candidate> candidates(const SearchOptions& given) {
    // The planners' times, scaled as generate_schedule() scales them (scale_invariant): the
    // candidates are orders, timed afterwards by the caller's evaluator at the given costs.
    SearchOptions o = given;
    const double scale = planning_scale(std::max(
        {o.costs.forward, o.costs.backward_input, o.costs.backward_weight, o.comm_latency}));
    o.costs = {scale * o.costs.forward, scale * o.costs.backward_input,
               scale * o.costs.backward_weight};
    o.comm_latency *= scale;
    std::vector<Candidate> out;
    auto add = [&](std::string label, std::string kind, std::function<Schedule()> build) {
        out.push_back(Candidate{std::move(label), std::move(kind), std::move(build)});
    };
    // Cost-aware generators (zb-1p, zb-2p, the V shapes) and the heuristic plan with the
    // search's times (per virtual stage of each generator's default chunk count).
    PlanningCosts planning;
    planning.times = uniform_stage_costs(o.devices, 1, o.costs.forward, o.costs.backward_input,
                                         o.costs.backward_weight);
    planning.comm_latency = o.comm_latency;
    planning.w_memory_share = o.mem_w_ratio;
    for (const ScheduleGenerator& g : schedule_generators())
        add(std::string(g.name), "registered", [o, planning, &g] {
            GeneratorOptions options{o.devices, o.microbatches, 0, 0};
            if (g.plans_with_costs) {
                options.planning = planning;
                options.planning.times =
                    uniform_stage_costs(o.devices, g.default_chunks, o.costs.forward,
                                        o.costs.backward_input, o.costs.backward_weight);
            }
            Schedule s = o.registered ? o.registered(g) : generate_schedule(g.name, options);
            // Two model copies (DualPipe): each device holds twice the layers, so a "full
            // stage" of its costs and memory is twice the others' and the figures do not
            // compare; leave such schedules out rather than rank them wrongly.
            if (!s.microbatch_stages.empty())
                throw std::invalid_argument("two model copies: not comparable");
            return s;
        });
    for (int offset = 1; offset <= max_vshape_offset; ++offset) {
        add(fmt::format("v-shape offset {}", offset), "block", [o, offset] {
            return schedule_from_block(vshape_block(o.devices, offset), o.microbatches);
        });
        // The same block with its idle slots filled within its lifespan bound.
        add(fmt::format("v-shape offset {} filled", offset), "block", [o, offset] {
            return schedule_from_block(vshape_block(o.devices, offset), o.microbatches,
                                       BlockScheduleOptions{.reorder = true, .fill_idle = true});
        });
    }
    // V-shape blocks of every offset laid out for these pass times and placed under the cap
    // itself, and the round-based V list schedule under the cap (v_plan.hpp).
    // The V placement's times per chunk; each family keeps its best under the cap.
    PlanningCosts v_costs;
    v_costs.times = uniform_stage_costs(o.devices, 2, o.costs.forward, o.costs.backward_input,
                                        o.costs.backward_weight);
    v_costs.comm_latency = o.comm_latency;
    v_costs.w_memory_share = o.mem_w_ratio;
    auto best_v = [o, v_costs](const char* name, auto&& offer) {
        detail::BestPlan best(v_costs, o.memory_limit);
        offer(best);
        if (best.empty()) throw std::invalid_argument("no V-shape candidate fits the cap");
        Schedule s = best.take();
        s.name = name;
        return s;
    };
    // The planners choose their layouts by the cap, so a cap between two whole stages' worth
    // may lose a layout that a smaller cap keeps (p = 4, m = 8: at 1.5 no V layout was placed,
    // at 1.25 one of peak 1 was). They also plan under the whole-stage cap below, and each
    // family keeps its best under the given cap: raising the cap never loses a schedule.
    std::vector<double> plan_caps = {o.memory_limit};
    if (const double whole = std::floor(o.memory_limit); whole >= 1 && whole < o.memory_limit)
        plan_caps.push_back(whole);
    add(fmt::format("v-shape planned (cap {:g})", o.memory_limit), "auto", [=] {
        return best_v("v-planned", [&](detail::BestPlan& best) {
            for (const double cap : plan_caps)
                detail::offer_v_candidates({o.devices, o.microbatches, {1, 2, 3, 4, 5}, true, true},
                                           v_costs, cap, best);
        });
    });
    // V-shape blocks of every six-slot starting pattern and pair of offsets, warm-up and
    // cool-down rebuilt under the cap (v_patterns.hpp).
    add(fmt::format("v-shape patterns (cap {:g})", o.memory_limit), "auto", [=] {
        return best_v("v-patterns", [&](detail::BestPlan& best) {
            for (const double cap : plan_caps)
                detail::offer_v_patterns(o.devices, o.microbatches, cap, max_pattern_cells, best);
        });
    });
    // Interleaved 1F1B with v = 2 and 3 chunks and microbatch groups of p and 2p.
    for (int chunks : {2, 3})
        for (int group : {o.devices, 2 * o.devices})
            add(fmt::format("interleaved-1f1b (v={}, group {})", chunks, group), "registered",
                [o, chunks, group] {
                    return generate_schedule("interleaved-1f1b",
                                             {o.devices, o.microbatches, chunks, group});
                });
    // The greedy planners are planned under the whole-stage cap below as well, each a
    // candidate of its own: more memory can lead a greedy choice astray (p = 12, m = 48,
    // costs 0.44, 2.73, 1.27: the automatic scheduler with v = 3 idles 4.49 % under a cap of
    // 18 and more under 18.5, where the best was 5.58 %).
    for (const double cap : plan_caps)
        for (int chunks : {1, 2, 3}) {
            add(fmt::format("auto (v={}, cap {:g})", chunks, cap), "auto", [o, chunks, cap] {
                AutoScheduleOptions a;
                a.name = fmt::format("auto-v{}", chunks);
                a.devices = o.devices;
                a.microbatches = o.microbatches;
                a.chunks = chunks;
                a.stage_device = chunks == 2 ? vshape_placement(o.devices, 2)
                                             : looped_placement(o.devices, chunks);
                a.costs.times =
                    uniform_stage_costs(o.devices, chunks, o.costs.forward, o.costs.backward_input,
                                        o.costs.backward_weight);
                a.costs.comm_latency = o.comm_latency;
                a.memory_limit = cap;
                return auto_schedule(a);
            });
        }
    for (const double cap : plan_caps)
        add(fmt::format("zb heuristic (cap {:g})", cap), "auto", [o, planning, cap] {
            ShortestSchedule shortest;
            offer_zero_bubble_candidates("zb-heuristic", o.devices, o.microbatches, planning, cap,
                                         shortest);
            if (shortest.empty()) throw std::invalid_argument("no heuristic schedule fits the cap");
            return shortest.take();
        });
    return out;
}

}  // namespace

SearchResult search_schedules(const SearchOptions& o, const SearchEvaluator& evaluate) {
    if (o.devices < 1 || o.microbatches < 1)
        throw std::invalid_argument(
            fmt::format("search: p and m must be ≥ 1, got p={} m={}", o.devices, o.microbatches));
    if (!(o.memory_limit > 0) || !std::isfinite(o.memory_limit))
        throw std::invalid_argument(
            fmt::format("search: the memory limit must be a number > 0, got {:g}", o.memory_limit));
    const auto before = [&](const SearchEntry& a, const SearchEntry& b) {
        if (a.fits != b.fits) return a.fits;
        if (o.rank_by_time && std::abs(a.evaluation.makespan - b.evaluation.makespan) >
                                  eps * std::max(a.evaluation.makespan, b.evaluation.makespan))
            return a.evaluation.makespan < b.evaluation.makespan;
        if (std::abs(a.evaluation.bubble_rate - b.evaluation.bubble_rate) > eps)
            return a.evaluation.bubble_rate < b.evaluation.bubble_rate;
        if (std::abs(a.evaluation.peak_activation_max - b.evaluation.peak_activation_max) > eps)
            return a.evaluation.peak_activation_max < b.evaluation.peak_activation_max;
        return a.evaluation.makespan < b.evaluation.makespan;
    };
    const std::vector<Candidate> planned = candidates(o);
    std::vector<SearchEntry> entries;
    // The best so far: the first entry no later one comes before, which the stable sort below
    // puts first.
    std::size_t best_entry = 0;
    Schedule best;
    bool planner_found_none = false;  // an automatic planner found no schedule within the limit
    for (std::size_t k = 0; k < planned.size(); ++k) {
        if (o.progress) o.progress(k, planned.size(), planned[k].label);
        SearchEntry e{planned[k].label, planned[k].kind, {}, false};
        Schedule schedule;
        try {
            schedule = planned[k].build();
            e.evaluation = evaluate(schedule);
        } catch (const std::invalid_argument&) {
            // Not buildable for this p and m, or cannot be timed with these inputs (e.g. more
            // stages than layers): not a candidate.
            planner_found_none = planner_found_none || planned[k].kind == "auto";
            continue;
        }
        e.fits = e.evaluation.peak_activation_max <= o.memory_limit + eps;
        if (entries.empty() || before(e, entries[best_entry])) {
            best_entry = entries.size();
            best = std::move(schedule);
        }
        entries.push_back(std::move(e));
    }
    if (o.progress) o.progress(planned.size(), planned.size(), "");
    const std::string best_label = entries.empty() ? "" : entries[best_entry].label;
    std::stable_sort(entries.begin(), entries.end(), before);
    if (entries.empty() || !entries.front().fits) {
        double least = 0;
        std::string needs = "none could be built";
        for (const SearchEntry& e : entries)
            if (needs == "none could be built" || e.evaluation.peak_activation_max < least) {
                least = e.evaluation.peak_activation_max;
                needs = fmt::format("the smallest peak is {:g}, {}'s", least, e.label);
            }
        // The planners plan to the limit itself: one that found nothing has no peak above,
        // and a larger limit may let it plan one below that smallest peak. Below 1 none can:
        // a device holds its last chunk's activations of a microbatch from that chunk's F to
        // its B, and by then all its chunks' of that microbatch, a whole stage's.
        if (o.memory_limit < 1 - eps)
            needs =
                "the least any schedule holds is 1, a device's whole stage of activations for one "
                "microbatch (from its last chunk's forward to that chunk's backward)";
        else if (planner_found_none)
            needs +=
                " (the automatic planners, which plan to the limit, found no schedule "
                "within it)";
        throw std::invalid_argument(fmt::format(
            "no schedule fits a memory limit of {:g} (full-stage microbatches per device) for "
            "p={} m={}: {}",
            o.memory_limit, o.devices, o.microbatches, needs));
    }
    SearchResult result;
    // Ties within eps need not order transitively: should the sort put another first than
    // the running best, that one is built again (labels are unique), so that the schedule
    // returned is always the ranking's first.
    if (entries.front().label == best_label) {
        result.best = std::move(best);
    } else {
        const auto front = std::find_if(planned.begin(), planned.end(), [&](const Candidate& c) {
            return c.label == entries.front().label;
        });
        result.best = front->build();
    }
    result.ranking = std::move(entries);
    // The ranking orders the fitting candidates by rank, then peak: one is beaten on neither
    // by those before it exactly when its peak is below all of theirs. Peaks within 0.1 % of
    // each other count as one (a model's layer splits differ by a few MB in GBs).
    double lowest_peak = 0;
    for (std::size_t k = 0; k < result.ranking.size() && result.ranking[k].fits; ++k) {
        const double peak = result.ranking[k].evaluation.peak_activation_max;
        if (result.front.empty() ||
            peak < lowest_peak - std::max(eps, front_peak_tolerance * lowest_peak)) {
            result.front.push_back(k);
            lowest_peak = peak;
        }
    }
    return result;
}

}  // namespace pipesim
