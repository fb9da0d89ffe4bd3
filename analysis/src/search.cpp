#include "analysis/search.hpp"

#include "analysis/result_json.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "analysis/run.hpp"
#include "schedules/registry.hpp"
#include "sim/memory_budget.hpp"

namespace pipesim::analysis {

SearchResult search(const SearchOptions& options) {
    PipelineSpec spec;
    spec.costs.passes = {options.costs};
    spec.costs.mem_w_ratio = options.mem_w_ratio;
    spec.comm_latency = options.comm_latency;
    return search(options, spec, nullptr);
}

SearchResult search(const SearchOptions& given, const PipelineSpec& spec, const DeviceCap* cap,
                    bool post_validation) {
    SearchOptions options = given;
    // With a model the registered schedules are planned as analyze plans them, with each
    // stage's own times (the first and last stages hold the embedding and the head); the mean
    // triple gave "zb-v" another order than `analyze -s zb-v` (14.81 % against 15.32 %).
    if (spec.costs.model)
        options.registered = [&spec, &options](const ScheduleGenerator& g) {
            PipelineSpec one = spec;
            one.given.reset();
            one.schedule = std::string(g.name);
            one.generator = GeneratorOptions{options.devices, options.microbatches};
            return prepare(one, AnalyticEngine{.record_transfers = false, .record_ops = false})
                .schedule;
        };
    return search_schedules(options, [&](const Schedule& s) {
        PipelineSpec candidate = spec;
        candidate.given = s;
        const Analysis a = run(candidate, AnalyticEngine{.record_transfers = false,
                                                         .record_ops = false,
                                                         .post_validation = post_validation});
        const Metrics& m = a.metrics;
        return SearchEvaluation{m.bubble_rate, a.iteration_time,
                                cap && a.model ? cap->units_of(*a.model) : m.peak_activation_max,
                                m.efficiency};
    });
}

double SearchReport::efficiency(const SearchEntry& e) const {
    // The candidate's own busy time, as its run measured it: F&B pairs hide all-to-all
    // (--overlap-fb), and the iteration time with a model or post-validation is not the
    // makespan the rate is of, so one work over each candidate's time is not it.
    return e.evaluation.efficiency;
}

double SearchReport::speedup_1f1b(const SearchEntry& e) const {
    return baseline.iteration_time / e.evaluation.makespan;
}

double SearchReport::peak(const SearchEntry& e) const {
    return cap ? cap->bytes_of(e.evaluation.peak_activation_max) : e.evaluation.peak_activation_max;
}

SearchReport search_report(SearchOptions options, const PipelineSpec& spec, double cap_bytes,
                           bool post_validation) {
    const AnalyticEngine bare{
        .record_transfers = false, .record_ops = false, .post_validation = post_validation};
    SearchReport report;
    report.post_validation = post_validation;
    // The largest candidates before any runs: the automatic scheduler with v = 3 chunks, an F,
    // B and W per microbatch on each of 3p stages, replayed, and a V-shape building block laid
    // out for every microbatch (v = 2: its repeated timeline and a second order while it is
    // made). A search at p 1024, m 4096 ran 28 s before running out of memory at its
    // eleventh candidate; the 1F1B baseline's own check below counts a ninth of the ops.
    const double pairs = static_cast<double>(options.devices) * options.microbatches;
    const double most_ops = 9 * pairs, block_ops = 6 * pairs;
    sim::check_memory(
        sim::replay_peak_bytes(most_ops, 3 * pairs,
                               sim::ReplayOptions{.record_transfers = false, .record_ops = false}) +
            block_ops * static_cast<double>(sizeof(TimedOp) + 2 * sizeof(Op)),
        sim::memory_budget(),
        fmt::format("search at p·m = {}·{} (candidates of up to {:.0f} ops: v = 3 with split "
                    "backwards)",
                    options.devices, options.microbatches, most_ops));
    // 1F1B with the same inputs: the speed-up's reference and, with a model, the memory of
    // one full stage to convert a cap in bytes into the search's unit.
    PipelineSpec one = spec;
    one.given.reset();
    one.schedule = "1f1b";
    one.generator = GeneratorOptions{options.devices, options.microbatches};
    report.baseline = run(one, bare);
    if (cap_bytes > 0) {
        report.cap = device_cap(report.baseline, cap_bytes);
        options.memory_limit = report.cap->units;
        options.costs = mean_stage_costs(report.baseline.costs);
        options.mem_w_ratio = largest_w_share(report.baseline.memory);
    }
    // A model splits the layers anew for each chunk count: rank by time (SearchOptions).
    options.rank_by_time = spec.costs.model.has_value();
    report.options = options;
    try {
        report.result = search(options, spec, report.cap ? &*report.cap : nullptr, post_validation);
    } catch (const std::invalid_argument&) {
        if (!report.cap) throw;
        constexpr double gib = 1024.0 * 1024.0 * 1024.0;
        const DeviceCap& cap = *report.cap;
        throw std::invalid_argument(fmt::format(
            "no schedule fits {:.4g} GiB per device for p={} m={}: weights and optimizer state "
            "take {:.4g} GiB, one full-stage microbatch's activations {:.4g} GiB ({:.3g} fit)",
            cap.bytes / gib, options.devices, options.microbatches, cap.static_bytes / gib,
            cap.stage_bytes / gib, cap.units));
    }
    PipelineSpec best = spec;
    best.given = report.result.best;
    report.best = run(best, bare);
    report.best.baseline_1f1b_time = report.baseline.iteration_time;
    report.best.speedup_1f1b = report.baseline.iteration_time / report.best.iteration_time;
    return report;
}

nlohmann::ordered_json search_json(const SearchReport& r) {
    const bool bytes = r.cap.has_value();
    nlohmann::ordered_json ranking = nlohmann::ordered_json::array();
    for (const SearchEntry& e : r.result.ranking)
        ranking.push_back({{"label", e.label},
                           {"kind", e.kind},
                           {"bubble_rate", e.evaluation.bubble_rate},
                           {time_field(bytes, r.post_validation), e.evaluation.makespan},
                           {"efficiency", r.efficiency(e)},
                           {"speedup_1f1b", r.speedup_1f1b(e)},
                           {bytes ? "peak_memory_bytes" : "peak_activation_max", r.peak(e)},
                           {"fits", e.fits}});
    nlohmann::ordered_json front = nlohmann::ordered_json::array();
    for (std::size_t k : r.result.front)
        front.push_back(ranking[k]);
    nlohmann::ordered_json j = {{"stages", r.options.devices},
                                {"devices", r.options.devices},
                                {"microbatches", r.options.microbatches},
                                {"memory_limit", r.options.memory_limit},
                                {"best", ranking.front()},
                                {"chunks", r.result.best.chunks},
                                {"lifespan_max", r.best.metrics.lifespan_max},
                                {"lifespan_mean", r.best.metrics.lifespan_mean},
                                {"baseline_1f1b_time", r.baseline.iteration_time}};
    if (bytes) {
        const ModelAnalysis& model = *r.best.model;
        j["memory_limit_bytes"] = r.cap->bytes;
        j["static_bytes_max"] = r.cap->static_bytes;
        j["stage_activation_bytes"] = r.cap->stage_bytes;
        j["iteration_time"] = r.best.iteration_time;
        j["step_time"] = model.step_time;
        j["samples_per_second"] = model.samples_per_second;
        j["tokens_per_second"] = model.tokens_per_second;
        j["memory_bytes"] = model.total_bytes;
    }
    if (r.post_validation) j["post_validation"] = true;
    j["front"] = front;
    j["ranking"] = ranking;
    j["warnings"] = run_warnings(r.best);
    return j;
}

}  // namespace pipesim::analysis
