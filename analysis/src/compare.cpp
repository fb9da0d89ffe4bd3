#include "analysis/compare.hpp"

#include "analysis/result_json.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/child_run.hpp"
#include "fileio/parse_error.hpp"
#include "schedules/schedule_file.hpp"
#include "sim/simgrid/simulate.hpp"

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
    if (spec.step_exchange &&
        none_takes([](const std::string& name) { return name == "interleaved-1f1b"; }))
        throw std::invalid_argument(fmt::format(
            "--no-overlap-p2p-communication: none of {} is interleaved-1f1b, the schedule it "
            "applies to, so it would change nothing",
            listed));
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
    // Over the time the row shows: with post-validation the period, which the makespan of one
    // iteration alone, then left out of the row, exceeds (zb-v at p 4, m 8: 94 % beside a
    // period of 24 in which every device is busy).
    r.efficiency = a.post_validation && a.iteration_time > 0
                       ? a.metrics.efficiency * a.metrics.makespan / a.iteration_time
                       : a.metrics.efficiency;
    r.speedup_1f1b = a.speedup_1f1b;
    r.lifespan_max = a.metrics.lifespan_max;
    if (a.model) {
        r.peak = *std::max_element(a.model->total_bytes.begin(), a.model->total_bytes.end());
        r.throughput = a.model->samples_per_second;
        r.tokens_per_second = a.model->tokens_per_second;
        r.mfu = a.model->mfu;
        r.step_shares = step_shares(time_budget(a));
    } else {
        r.peak = a.metrics.peak_activation_max;
        r.throughput = microbatch_throughput(a);
    }
    return r;
}

ComparedRun compared_run(const std::string& name, const Analysis& a) {
    return ComparedRun{compare_row(name, a), a.schedule.devices,  a.schedule.microbatches,
                       a.timeline.time_unit, a.model.has_value(), a.post_validation,
                       run_warnings(a)};
}

nlohmann::json compared_run_json(const ComparedRun& run) {
    const CompareRow& r = run.row;
    nlohmann::json j = {{"chunks", r.chunks},
                        {"makespan", r.makespan},
                        {"bubble_rate", r.bubble_rate},
                        {"efficiency", r.efficiency},
                        {"peak", r.peak},
                        {"throughput", r.throughput},
                        {"tokens_per_second", r.tokens_per_second},
                        {"mfu", r.mfu},
                        {"speedup_1f1b", r.speedup_1f1b},
                        {"lifespan_max", r.lifespan_max},
                        {"step_shares", nlohmann::json::array()},
                        {"devices", run.devices},
                        {"microbatches", run.microbatches},
                        {"unit", run.unit},
                        {"model", run.model},
                        {"post_validation", run.post_validation},
                        {"warnings", run.warnings}};
    for (const StepShare& share : r.step_shares)  // in order: an array of pairs
        j["step_shares"].push_back({share.key, share.share});
    return j;
}

ComparedRun parse_compared_run(const std::string& name, const nlohmann::json& j) {
    ComparedRun run;
    CompareRow& r = run.row;
    r.schedule = name;
    r.chunks = j.at("chunks").get<int>();
    r.makespan = j.at("makespan").get<double>();
    r.bubble_rate = j.at("bubble_rate").get<double>();
    r.efficiency = j.at("efficiency").get<double>();
    r.peak = j.at("peak").get<double>();
    r.throughput = j.at("throughput").get<double>();
    r.tokens_per_second = j.at("tokens_per_second").get<double>();
    r.mfu = j.at("mfu").get<double>();
    r.speedup_1f1b = j.at("speedup_1f1b").get<double>();
    r.lifespan_max = j.at("lifespan_max").get<double>();
    for (const nlohmann::json& share : j.at("step_shares"))
        r.step_shares.push_back({share.at(0).get<std::string>(), share.at(1).get<double>()});
    run.devices = j.at("devices").get<int>();
    run.microbatches = j.at("microbatches").get<int>();
    run.unit = j.at("unit").get<std::string>();
    run.model = j.at("model").get<bool>();
    run.post_validation = j.at("post_validation").get<bool>();
    run.warnings = j.at("warnings").get<std::vector<std::string>>();
    return run;
}

void add_to_comparison(Comparison& comparison, ComparedRun run) {
    if (comparison.rows.empty()) {
        comparison.devices = run.devices;
        comparison.microbatches = run.microbatches;
        comparison.time_unit = run.unit;
        comparison.model = run.model;
        comparison.post_validation = run.post_validation;
    }
    CompareRow& r = run.row;
    r.speedup =
        (comparison.rows.empty() ? r.makespan : comparison.rows.front().makespan) / r.makespan;
    for (const std::string& w : run.warnings)
        add_schedule_warning(comparison.warnings, comparison.warning_texts, r.schedule, w);
    comparison.rows.push_back(std::move(r));
}

namespace {

// Whether `text` begins with the schedule's name as a word of its own ("1f1b: p·v·m = ...",
// "interleaved-1f1b with m = 7 ..."): then it is not prefixed with the name a second time.
bool names_schedule(std::string_view text, std::string_view name) {
    return text.size() > name.size() && text.starts_with(name) &&
           (text[name.size()] == ' ' || text[name.size()] == ':');
}

}  // namespace

void add_schedule_warning(std::vector<std::string>& warnings, std::vector<std::string>& texts,
                          const std::string& schedule, const std::string& warning) {
    if (names_schedule(warning, schedule)) {
        warnings.push_back(warning);
        texts.emplace_back();  // another schedule's warning is never this one
        return;
    }
    for (std::size_t k = 0; k < texts.size(); ++k)
        if (texts[k] == warning) {
            // "A: text" becomes "A, B: text": the names end where the text begins.
            const std::size_t names = warnings[k].size() - warning.size() - 2;
            warnings[k].insert(names, ", " + schedule);
            return;
        }
    warnings.push_back(fmt::format("{}: {}", schedule, warning));
    texts.push_back(warning);
}

std::string schedule_failed(const std::string& name, std::string_view reason) {
    // As it is where quoting would show it so; quoted where it is long or holds a character
    // that quote_excerpt escapes (a tab was printed raw before the reason, in Python).
    const std::string quoted = fileio::quote_excerpt(name);
    if (quoted == "'" + name + "'" && names_schedule(reason, name)) return std::string(reason);
    return fmt::format("{}: {}", quoted == "'" + name + "'" ? name : quoted, reason);
}

Comparison compare_each(
    const PipelineSpec& spec, const std::vector<std::string>& names,
    const std::function<ComparedRun(const std::string&, const PipelineSpec&)>& run_one) {
    check_comparison_shape(spec, names);
    Comparison comparison;
    for (const std::string& name : names) {
        try {
            add_to_comparison(comparison, run_one(name, comparison_spec(name, spec)));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(schedule_failed(name, e.what()));
        }
    }
    return comparison;
}

Comparison compare(const PipelineSpec& spec, const std::vector<std::string>& names,
                   bool post_validation) {
    check_analytic_layout(spec);  // no one schedule's fault: before any is named
    return compare_each(spec, names, [&](const std::string& name, const PipelineSpec& one) {
        return compared_run(
            name, run_with_baseline(one, AnalyticEngine{.record_transfers = false,
                                                        .record_ops = false,
                                                        .post_validation = post_validation}));
    });
}

Comparison compare_on_cluster(const PipelineSpec& spec, const std::vector<std::string>& names,
                              const SimGridEngine& engine,
                              const std::function<bool()>& interrupted) {
    simgrid::load_engine();  // here: the children share it
    SimGridEngine rows_only = engine;
    rows_only.options.record_transfers = false;
    Comparison comparison =
        compare_each(spec, names, [&](const std::string& name, const PipelineSpec& one) {
            const std::string text = run_in_child(
                [&] {
                    return json_text(
                        compared_run_json(compared_run(name, run_with_baseline(one, rows_only))));
                },
                interrupted);
            return parse_compared_run(name, nlohmann::json::parse(text));
        });
    comparison.engine = "simgrid";
    comparison.cluster = engine.cluster.name;
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
            {c.model ? "samples_per_second" : "throughput", r.throughput}};
        if (c.model) {
            row["tokens_per_second"] = r.tokens_per_second;
            row["mfu"] = r.mfu;
        }
        row["speedup"] = r.speedup;
        row["speedup_1f1b"] =
            r.speedup_1f1b > 0 ? nlohmann::ordered_json(r.speedup_1f1b) : nlohmann::ordered_json();
        row["lifespan_max"] = r.lifespan_max;
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
