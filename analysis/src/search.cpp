#include "analysis/search.hpp"

#include "analysis/run.hpp"

namespace pipesim::analysis {

SearchResult search(const SearchOptions& options) {
    PipelineSpec spec;
    spec.costs.passes = {options.costs};
    spec.costs.mem_w_ratio = options.mem_w_ratio;
    spec.comm_latency = options.comm_latency;
    return search(options, spec, nullptr);
}

SearchResult search(const SearchOptions& options, const PipelineSpec& spec, const DeviceCap* cap) {
    return search_schedules(options, [&](const Schedule& s) {
        PipelineSpec candidate = spec;
        candidate.given = s;
        const Analysis a =
            run(candidate, AnalyticEngine{.record_transfers = false, .record_ops = false});
        const Metrics& m = a.metrics;
        return SearchEvaluation{m.bubble_rate, a.iteration_time,
                                cap && a.model ? cap->units_of(*a.model) : m.peak_activation_max};
    });
}

nlohmann::ordered_json search_json(const SearchResult& result, const SearchOptions& options) {
    nlohmann::ordered_json ranking = nlohmann::ordered_json::array();
    for (const SearchEntry& e : result.ranking)
        ranking.push_back({{"label", e.label},
                           {"kind", e.kind},
                           {"bubble_rate", e.evaluation.bubble_rate},
                           {"makespan", e.evaluation.makespan},
                           {"peak_activation_max", e.evaluation.peak_activation_max},
                           {"fits", e.fits}});
    return {{"stages", options.devices},
            {"devices", options.devices},
            {"microbatches", options.microbatches},
            {"memory_limit", options.memory_limit},
            {"best", ranking.front()},
            {"chunks", result.best.chunks},
            {"ranking", ranking}};
}

}  // namespace pipesim::analysis
