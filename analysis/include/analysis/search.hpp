#pragma once
// The memory-capped schedule search (schedules/search.hpp) with every candidate timed by the
// analytic replay (`pipesim search`, pipesim.search in Python).

#include <nlohmann/json.hpp>

#include "analysis/device_cap.hpp"
#include "analysis/spec.hpp"
#include "schedules/search.hpp"

namespace pipesim::analysis {

/// Searches with `options` (its costs, latency and M_W ratio are those the candidates are
/// timed with) and replays each candidate with them. Throws like search_schedules().
SearchResult search(const SearchOptions& options);

/// The same with each candidate timed with `spec`'s costs or model and latency (its schedule
/// replaced by the candidate) and, with `cap`, measured by its fullest device's whole memory
/// on the cap's scale (DeviceCap::units_of; options.memory_limit is then cap->units).
SearchResult search(const SearchOptions& options, const PipelineSpec& spec, const DeviceCap* cap);

/// The `pipesim search --json` object: stages, devices, microbatches, memory_limit, best,
/// chunks (of the best) and the ranking (label, kind, bubble_rate, makespan,
/// peak_activation_max, fits).
nlohmann::ordered_json search_json(const SearchResult& result, const SearchOptions& options);

}  // namespace pipesim::analysis
