#include "analysis/compare.hpp"

#include "analysis/result_json.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "schedules/schedule_file.hpp"

namespace pipesim::analysis {

GeneratorOptions comparison_shape(const std::string& name, GeneratorOptions shape) {
    const ScheduleGenerator* g = find_generator(name);
    if (!g) return shape;  // generate_schedule names the problem
    // Schedules that take any chunk count go up to what a schedule file may hold (as -v).
    const int most = g->max_chunks == 0 ? ScheduleFileLimits{}.max_chunks : g->max_chunks;
    if (shape.chunks != 0 && (shape.chunks < g->min_chunks || shape.chunks > most))
        shape.chunks = 0;
    if (!g->takes_group_size) shape.group_size = 0;
    return shape;
}

void check_comparison_shape(const PipelineSpec& spec, const std::vector<std::string>& names) {
    const GeneratorOptions& shape = spec.generator;
    const auto none_takes = [&](auto&& takes) {
        return std::none_of(names.begin(), names.end(),
                            [&](const std::string& name) { return takes(name); });
    };
    const std::string listed = fmt::format("{}", fmt::join(names, ", "));
    if (shape.chunks != 0 && none_takes([&](const std::string& name) {
            return comparison_shape(name, shape).chunks == shape.chunks;
        }))
        throw std::invalid_argument(
            fmt::format("-v {}: none of {} runs with v = {}, so it would change nothing",
                        shape.chunks, listed, shape.chunks));
    if (shape.group_size != 0 && none_takes([&](const std::string& name) {
            return comparison_shape(name, shape).group_size == shape.group_size;
        }))
        throw std::invalid_argument(fmt::format(
            "--group-size {}: none of {} runs microbatches in groups, so it would change nothing",
            shape.group_size, listed));
}

PipelineSpec comparison_spec(const std::string& name, const PipelineSpec& spec) {
    PipelineSpec one = spec;
    one.schedule = name;
    one.generator = comparison_shape(name, spec.generator);
    one.step_exchange = spec.step_exchange && name == "interleaved-1f1b";
    return one;
}

CompareRow compare_row(const std::string& name, const Analysis& a) {
    CompareRow r;
    r.schedule = name;
    r.chunks = a.schedule.chunks;
    r.makespan = a.iteration_time;
    r.bubble_rate = a.metrics.bubble_rate;
    r.efficiency = a.metrics.efficiency;
    r.speedup_1f1b = a.speedup_1f1b;
    r.lifespan_max = a.metrics.lifespan_max;
    if (a.model) {
        r.peak = *std::max_element(a.model->total_bytes.begin(), a.model->total_bytes.end());
        r.throughput = a.model->samples_per_second;
        r.step_shares = step_shares(time_budget(a));
    } else {
        r.peak = a.metrics.peak_activation_max;
        r.throughput = microbatch_throughput(a);
    }
    return r;
}

void add_to_comparison(Comparison& comparison, const std::string& name, const Analysis& a) {
    CompareRow r = compare_row(name, a);
    if (comparison.rows.empty()) {
        comparison.devices = a.schedule.devices;
        comparison.microbatches = a.schedule.microbatches;
        comparison.time_unit = a.timeline.time_unit;
        comparison.model = a.model.has_value();
        comparison.post_validation = a.post_validation;
    }
    r.speedup =
        (comparison.rows.empty() ? r.makespan : comparison.rows.front().makespan) / r.makespan;
    comparison.rows.push_back(std::move(r));
    for (const std::string& w : run_warnings(a))
        comparison.warnings.push_back(fmt::format("{}: {}", name, w));
}

Comparison compare(const PipelineSpec& spec, const std::vector<std::string>& names,
                   bool post_validation) {
    check_comparison_shape(spec, names);
    Comparison comparison;
    for (const std::string& name : names) {
        try {
            add_to_comparison(
                comparison, name,
                run_with_baseline(comparison_spec(name, spec),
                                  AnalyticEngine{.record_transfers = false,
                                                 .record_ops = false,
                                                 .post_validation = post_validation}));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("{}: {}", name, e.what()));
        }
    }
    return comparison;
}

nlohmann::ordered_json comparison_json(const Comparison& c) {
    nlohmann::ordered_json j;
    j["devices"] = c.devices;
    j["microbatches"] = c.microbatches;
    j["time_unit"] = c.time_unit;
    j["engine"] = c.engine;
    if (!c.cluster.empty()) j["cluster"] = c.cluster;
    if (!c.command.empty()) j["command"] = c.command;
    if (!c.inputs.empty()) {
        nlohmann::ordered_json& inputs = j["inputs"];
        for (const auto& [label, value] : c.inputs)
            inputs[label] = value;
    }
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const CompareRow& r : c.rows) {
        nlohmann::ordered_json row = {
            {"schedule", r.schedule},
            {"chunks", r.chunks},
            {time_field(c.model, c.post_validation), r.makespan},
            {"bubble_rate", r.bubble_rate},
            {"efficiency", r.efficiency},
            {c.model ? "peak_memory_bytes" : "peak_activation_max", r.peak},
            {c.model ? "samples_per_second" : "throughput", r.throughput},
            {"speedup", r.speedup},
            {"speedup_1f1b", r.speedup_1f1b > 0 ? nlohmann::ordered_json(r.speedup_1f1b)
                                                : nlohmann::ordered_json()},
            {"lifespan_max", r.lifespan_max}};
        if (!r.step_shares.empty()) {
            nlohmann::ordered_json& shares = row["step_shares"];
            for (const StepShare& share : r.step_shares)
                shares[share.key] = share.share;
        }
        list.push_back(std::move(row));
    }
    j["schedules"] = list;
    j["warnings"] = c.warnings;
    return j;
}

}  // namespace pipesim::analysis
