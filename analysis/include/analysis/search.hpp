#pragma once
// The memory-capped schedule search (schedules/search.hpp) with every candidate timed by the
// analytic replay (`pipesim search`, pipesim.search in Python).

#include <nlohmann/json.hpp>

#include "analysis/spec.hpp"
#include "schedules/search.hpp"

namespace pipesim::analysis {

/// Searches with `options` (its costs, latency and M_W ratio are those the candidates are
/// timed with) and replays each candidate with them. Throws like search_schedules().
SearchResult search(const SearchOptions& options);

/// The `pipesim search --json` object: stages, devices, microbatches, memory_limit, best,
/// chunks (of the best) and the ranking (label, kind, bubble_rate, makespan,
/// peak_activation_max, fits).
nlohmann::ordered_json search_json(const SearchResult& result, const SearchOptions& options);

}  // namespace pipesim::analysis
