#pragma once
// The memory-capped schedule search (schedules/search.hpp) with every candidate timed by the
// analytic replay (`pipesim search`, pipesim.search in Python).

#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/device_cap.hpp"
#include "analysis/run.hpp"
#include "analysis/spec.hpp"
#include "schedules/search.hpp"

namespace pipesim::analysis {

/// Searches with `options` (its costs, latency and M_W ratio are those the candidates are
/// timed with) and replays each candidate with them. Throws like search_schedules().
SearchResult search(const SearchOptions& options);

/// The same with each candidate timed with `spec`'s costs or model and latency (its schedule
/// replaced by the candidate) and, with `cap`, measured by its fullest device's whole memory
/// on the cap's scale (DeviceCap::units_of; options.memory_limit is then cap->units). With
/// `post_validation` each candidate's time is its post-validation period
/// (AnalyticEngine::post_validation).
SearchResult search(const SearchOptions& options, const PipelineSpec& spec, const DeviceCap* cap,
                    bool post_validation = false);

/// A search with what its report shows beside the ranking.
struct SearchReport {
    SearchOptions options;  ///< as searched (with a cap in bytes: memory_limit in M_B)
    SearchResult result;
    Analysis baseline;             ///< 1F1B with the same inputs
    Analysis best;                 ///< the best candidate, run again
    std::optional<DeviceCap> cap;  ///< with a cap in bytes
    bool post_validation = false;  ///< candidates' times are post-validation periods

    /// A candidate's whole-pipeline efficiency: its busy time over all devices / (p × its
    /// makespan), as analyze gives it.
    double efficiency(const SearchEntry& e) const;
    /// 1F1B's iteration time / the candidate's.
    double speedup_1f1b(const SearchEntry& e) const;
    /// Its peak: activation units, or with a cap the bytes of its fullest device.
    double peak(const SearchEntry& e) const;
};

/// Runs 1F1B with `spec`'s inputs (costs or model, latency, tp; its schedule is replaced),
/// converts `cap_bytes` (> 0, needs a model) into the search's unit with device_cap() and the
/// model's mean stage costs, searches (candidates timed with `spec`), and runs the best one
/// again. Throws like search() and device_cap(); when no candidate fits a cap in bytes, the
/// message names the cap, the weights and optimizer state and one stage's activations in GiB.
/// With `post_validation` every run (1F1B's too) is timed by its post-validation period.
SearchReport search_report(SearchOptions options, const PipelineSpec& spec, double cap_bytes = 0,
                           bool post_validation = false);

/// The `pipesim search --json` object: stages, devices, microbatches, memory_limit, best,
/// chunks (of the best), lifespan_max and lifespan_mean (of the best), baseline_1f1b_time,
/// with a cap in bytes its figures and the best one's iteration, step time, throughput and
/// memory_bytes, the front (SearchResult::front) and the ranking, each a list of (label, kind,
/// bubble_rate, makespan or iteration_time (period without a model and with post-validation,
/// then also `"post_validation": true`), efficiency, speedup_1f1b, peak_activation_max or
/// peak_memory_bytes, fits), and the best one's warnings (run_warnings(): devices over their
/// GPU's memory among them).
nlohmann::ordered_json search_json(const SearchReport& report);

}  // namespace pipesim::analysis
