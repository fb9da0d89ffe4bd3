#pragma once
// Memory-capped search: the lowest-bubble schedule whose peak activation stays within a cap,
// among the registered schedules (except those with two model copies, DualPipe, whose unit
// costs and memory stand for twice the layers per device), V-shape building blocks of several
// offsets and of every six-slot starting pattern with one or two offsets (their warm-up and
// cool-down rebuilt under the cap) and the automatic scheduler run under the cap itself.

#include <functional>
#include <string>
#include <vector>

#include "schedules/costs.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

struct ScheduleGenerator;

/// What the caller measured for one candidate (e.g. a timed replay and its metrics, which
/// live in sim/: the search stays in schedules/ and gets them through this callback).
struct SearchEvaluation {
    double bubble_rate = 0;
    double makespan = 0;
    double peak_activation_max = 0;  ///< full-stage microbatch units, as memory_limit
    /// The candidate's own busy time over all devices / (p × makespan), as analyze reports it
    /// (0 where the evaluator does not give it).
    double efficiency = 0;
};

/// Measures one schedule. May throw std::invalid_argument for a schedule it cannot time.
using SearchEvaluator = std::function<SearchEvaluation(const Schedule&)>;

/// What to search. `f`, `b`, `w` are one chunk pass's times and `comm_latency` the latency
/// between devices; the automatic scheduler plans with them (the evaluator times them).
struct SearchOptions {
    int devices = 0;
    int microbatches = 0;
    double memory_limit = 0;  ///< per device, full-stage microbatch units (1F1B needs p)
    PassCosts costs;  ///< one full stage's F, B, W (split over the chunks of v > 1 candidates)
    double comm_latency = 0;
    double mem_w_ratio = 1;  ///< M_W / M_B, for the candidates that plan their memory
    /// Rank by makespan first instead of bubble rate. With given costs every candidate does
    /// the same work per device, and the bubble rate (idle time within each device's own
    /// span) orders them by the period of repeated iterations rather than by one
    /// iteration's makespan; with a model the layers are split anew for each chunk count (the
    /// embedding and head land on other devices), the work per device differs, and only the
    /// time says which candidate is faster.
    bool rank_by_time = false;
    /// Builds a registered schedule as the caller's own runs generate it (with a model:
    /// planned with its per-stage times, which `costs`, their mean, leaves out), so that the
    /// ranking's "zb-v" is `analyze -s zb-v`'s; empty: planned with `costs`.
    std::function<Schedule(const ScheduleGenerator&)> registered;
    /// Called before each candidate is built (`done` of `total` so far, its label) and once
    /// at the end (`done` = `total`, no label): a progress line, or a place to stop (what it
    /// throws ends the search).
    std::function<void(std::size_t done, std::size_t total, const std::string& label)> progress;
};

/// One candidate of the ranking.
struct SearchEntry {
    std::string label;  ///< e.g. "zb-v", "v-shape offset 3", "auto (v=2, cap 6)"
    std::string kind;   ///< "registered", "block" or "auto"
    SearchEvaluation evaluation;
    bool fits = false;  ///< peak within memory_limit
};

struct SearchResult {
    /// Every candidate that could be built and timed, those that fit first, each part by
    /// bubble rate (makespan with SearchOptions::rank_by_time), then peak, then makespan.
    std::vector<SearchEntry> ranking;
    /// The best one (ranking.front()) and its schedule.
    Schedule best;
    /// What memory buys within the cap: the indices in `ranking` of the fitting candidates
    /// that no other fitting candidate matches or beats in both its rank (bubble rate, or
    /// makespan with SearchOptions::rank_by_time) and its peak. From ranking.front() on, each
    /// has a lower peak (by more than 0.1 %) and a higher bubble rate (or makespan) than the
    /// one before.
    std::vector<std::size_t> front;
};

/// Builds every candidate for p devices and m microbatches, measures each with `evaluate`
/// (a candidate it throws std::invalid_argument for is left out) and ranks them. Throws
/// std::invalid_argument for p or m < 1 or a cap ≤ 0, and, naming the cap and the smallest peak any
/// candidate needs, when no candidate fits.
SearchResult search_schedules(const SearchOptions& options, const SearchEvaluator& evaluate);

}  // namespace pipesim
