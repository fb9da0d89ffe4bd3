#include "html_output.hpp"

#include <algorithm>
#include <cctype>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/child_run.hpp"
#include "analysis/result_json.hpp"
#include "fileio/files.hpp"
#include "models/presets.hpp"
#include "report.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/simulate.hpp"
#include "viz/timeline_file.hpp"

namespace pipesim::cli {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// An argument as a POSIX shell reads it back.
std::string shell_quote(const std::string& arg) {
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("-_.,:=/+@%").find(c) != std::string_view::npos;
    });
    if (plain) return arg;
    std::string out = "'";
    for (char c : arg)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string costs_text(const analysis::PipelineSpec& spec) {
    const std::vector<PassCosts>& passes = spec.costs.passes;
    if (passes.size() != 1) return fmt::format("{} triples, one per virtual stage", passes.size());
    return fmt::format("F,B,W = {:g},{:g},{:g} per full stage; M_W = {:g} M_B", passes[0].forward,
                       passes[0].backward_input, passes[0].backward_weight, spec.costs.mem_w_ratio);
}

ReportRun report_run(const std::string& name, const analysis::Analysis& a, bool picture) {
    ReportRun r{analysis::compared_run(name, a), std::nullopt};
    if (picture) r.picture = html_schedule(name, a);
    return r;
}

// A ReportRun across the pipe from the child that ran it: the comparison's, and the picture.
std::string report_run_json(const ReportRun& r) {
    nlohmann::json j = analysis::compared_run_json(r);
    if (r.picture) {
        j["timeline"] = viz::timeline_json(r.picture->timeline, &r.picture->memory);
        j["iteration_time"] = r.picture->iteration_time;
        j["iteration_is_period"] = r.picture->iteration_is_period;
    }
    return analysis::json_text(j);
}

ReportRun parse_report_run(const std::string& name, const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    ReportRun r{analysis::parse_compared_run(name, j), std::nullopt};
    if (j.contains("timeline")) {
        viz::SavedTimeline saved =
            viz::parse_timeline_json(j.at("timeline").get<std::string>(), name);
        viz::HtmlSchedule picture;
        picture.name = name;
        picture.timeline = std::move(saved.timeline);
        picture.memory = std::move(saved.memory.value());
        picture.iteration_time = j.at("iteration_time").get<double>();
        picture.iteration_is_period = j.at("iteration_is_period").get<bool>();
        if (r.model) {
            picture.memory_scale = gib;
            picture.memory_unit = "GiB";
        }
        r.picture = std::move(picture);
    }
    return r;
}

// Shares as a bar: each part's share, a rounding-level negative as 0.
std::vector<double> bar_of(const std::vector<analysis::StepShare>& shares) {
    std::vector<double> bar;
    for (const analysis::StepShare& share : shares)
        bar.push_back(std::max(0.0, share.share));
    return bar;
}

std::vector<std::string> part_labels(const std::vector<analysis::StepShare>& shares) {
    std::vector<std::string> parts;
    for (const analysis::StepShare& share : shares)
        parts.push_back(analysis::step_share_label(share.key));
    return parts;
}

}  // namespace

viz::HtmlSection time_budget_section(const TableCells& cells, viz::HtmlBars bars) {
    viz::HtmlSection s;
    s.id = "time-budget";
    s.heading = "Where the step goes";
    s.caption = cells.title + ".";
    s.notes = cells.notes;
    s.table = {cells.columns, cells.rows};
    s.bars = std::move(bars);
    return s;
}

viz::HtmlBars time_budget_bars(const analysis::TimeBudget& b) {
    viz::HtmlBars bars;
    bars.parts = part_labels(analysis::step_shares(b));
    for (std::size_t d = 0; d < b.devices.size(); ++d) {
        bars.labels.push_back(fmt::format("device {}", d));
        bars.shares.push_back(
            bar_of(analysis::step_shares(b.devices[d], b.step_time, b.kernel_shares)));
    }
    if (b.devices.size() > 1) {
        bars.labels.emplace_back("all devices");
        bars.shares.push_back(bar_of(analysis::step_shares(b)));
    }
    return bars;
}

viz::HtmlBars step_shares_bars(const std::vector<SummaryRow>& rows) {
    viz::HtmlBars bars;
    if (rows.empty() || rows.front().step_shares.empty()) return bars;
    bars.parts = part_labels(rows.front().step_shares);
    for (const SummaryRow& r : rows) {
        bars.labels.push_back(r.schedule);
        bars.shares.push_back(bar_of(r.step_shares));
    }
    return bars;
}

analysis::SimGridEngine simgrid_engine(const simgrid::ClusterSpec& cluster) {
    analysis::SimGridEngine engine;
    engine.cluster = cluster;
    engine.options.record_transfers = false;
    return engine;
}

ReportRun run_for_report(const std::string& name, const analysis::PipelineSpec& spec,
                         const analysis::Engine& engine, bool picture,
                         const std::function<bool()>& interrupted) {
    if (const auto* analytic = std::get_if<analysis::AnalyticEngine>(&engine)) {
        analysis::AnalyticEngine replay = *analytic;
        replay.record_transfers = false;
        replay.record_ops = picture;
        return report_run(name, analysis::run_with_baseline(spec, replay), picture);
    }
    simgrid::load_engine();  // here: the children share it, and a missing one is exit code 3
    const std::string text = analysis::run_in_child(
        [&] {
            return report_run_json(
                report_run(name, analysis::run_with_baseline(spec, engine), picture));
        },
        interrupted);
    return parse_report_run(name, text);
}

viz::HtmlReport compare_html_report(std::string call, const analysis::PipelineSpec& spec,
                                    const std::string& cluster, const std::vector<SummaryRow>& rows,
                                    bool model, const std::string& unit, bool period,
                                    std::vector<viz::HtmlSchedule> pictures) {
    viz::HtmlReport report = html_report_for("compare", std::move(call), spec, cluster);
    report.title = fmt::format("pipesim compare: {} schedules, p={} m={}", rows.size(),
                               spec.generator.devices, spec.generator.microbatches);
    report.table = summary_table(rows, model, unit, /*speedup=*/true, period);
    report.schedules = std::move(pictures);
    if (model)
        report.sections.push_back(
            time_budget_section(step_shares_cells(rows), step_shares_bars(rows)));
    return report;
}

ComparisonReport compare_for_report(const analysis::PipelineSpec& spec,
                                    const std::vector<std::string>& names,
                                    const analysis::Engine& engine,
                                    const std::function<bool()>& interrupted) {
    ComparisonReport out;
    out.comparison = analysis::compare_each(
        spec, names, [&](const std::string& name, const analysis::PipelineSpec& one) {
            ReportRun run = run_for_report(name, one, engine, /*picture=*/true, interrupted);
            out.pictures.push_back(std::move(*run.picture));
            return analysis::ComparedRun(std::move(run));
        });
    if (const auto* simgrid = std::get_if<analysis::SimGridEngine>(&engine)) {
        out.comparison.engine = "simgrid";
        out.comparison.cluster = simgrid->cluster.name;
    }
    return out;
}

SummaryRow summary_row(const std::string& name, const analysis::Analysis& a) {
    return analysis::compare_row(name, a);
}

const char* time_column_name(bool model, bool period) {
    return period ? "period" : model ? "iteration" : "makespan";
}

std::string speedup_1f1b_cell(double speedup_1f1b) {
    // 1F1B may not run with these inputs (one stage of no layers).
    return speedup_1f1b > 0 ? fmt::format("{:.3f}x", speedup_1f1b) : "—";
}

viz::HtmlTable summary_table(const std::vector<SummaryRow>& rows, bool model,
                             const std::string& unit, bool speedup, bool period) {
    viz::HtmlTable t;
    t.columns = {"schedule",
                 "v",
                 fmt::format("{} ({})", time_column_name(model, period), unit),
                 "bubble",
                 "efficiency",
                 model ? "peak memory (GiB)" : "peak activation (M_B)",
                 model ? "samples/s" : fmt::format("microbatches / {}", unit)};
    if (model) t.columns.push_back("MFU");
    // The terminal table's columns, each naming its baseline.
    if (speedup && !rows.empty())
        t.columns.push_back(fmt::format("speed-up over {}", rows.front().schedule));
    t.columns.push_back("vs 1F1B");
    for (const SummaryRow& r : rows) {
        std::vector<std::string> cells = {r.schedule,
                                          std::to_string(r.chunks),
                                          fmt::format("{:.6g}", r.makespan),
                                          fmt::format("{:.2f} %", 100 * r.bubble_rate),
                                          fmt::format("{:.2f} %", 100 * r.efficiency),
                                          fmt::format("{:.4g}", model ? r.peak / gib : r.peak),
                                          fmt::format("{:.6g}", r.throughput)};
        if (model) cells.push_back(fmt::format("{:.2f} %", 100 * r.mfu));
        if (speedup) cells.push_back(fmt::format("{:.3f}x", r.speedup));
        cells.push_back(speedup_1f1b_cell(r.speedup_1f1b));
        t.rows.push_back(std::move(cells));
    }
    return t;
}

std::string command_line(std::string_view command, const std::vector<std::string>& args) {
    std::string out = fmt::format("pipesim {}", command);
    for (const std::string& a : args)
        out += " " + shell_quote(a);
    return out;
}

std::vector<std::pair<std::string, std::string>> run_inputs(const analysis::PipelineSpec& spec,
                                                            const std::string& cluster,
                                                            int chunks_run) {
    std::vector<std::pair<std::string, std::string>> inputs;
    auto input = [&](std::string label, std::string value) {
        inputs.emplace_back(std::move(label), std::move(value));
    };
    if (spec.given) {
        input("schedule", fmt::format("{} (from a file)", spec.given->name));
        input("p, m, v", fmt::format("{}, {}, {}", spec.given->devices, spec.given->microbatches,
                                     spec.given->chunks));
    } else {
        input("p (stages)", std::to_string(spec.generator.devices));
        input("m (microbatches)", std::to_string(spec.generator.microbatches));
        // v as given, or as the one schedule run chose it (zb-v's 2: the title gives it).
        if (spec.generator.chunks != 0)
            input("v (chunks)", std::to_string(spec.generator.chunks));
        else if (chunks_run > 1)
            input("v (chunks)", fmt::format("{} (the schedule's)", chunks_run));
        if (spec.generator.group_size != 0)
            input("group size", std::to_string(spec.generator.group_size));
    }
    if (spec.costs.model) {
        const analysis::ModelSpec& m = *spec.costs.model;
        // A model file by its name, as the text report gives it, and the file.
        const std::string model =
            fileio::names_a_file(m.model)
                ? fmt::format("{} ({})", models::resolve_model(m.model).name, m.model)
                : m.model;
        input("model", fmt::format("{} on {}, {} sequence(s) per microbatch{}", model, m.gpu,
                                   m.workload.microbatch,
                                   m.calibration_file.empty()
                                       ? std::string()
                                       : fmt::format(", calibration {}", m.calibration_file)));
    } else {
        input("costs", costs_text(spec));
    }
    if (cluster.empty()) {
        input("engine", "analytic replay");
        input("comm latency", fmt::format("{:g}", spec.comm_latency));
        // What changes the passes' times besides the costs (a DualPipe run's page named
        // neither).
        if (spec.all_to_all > 0)
            input("all-to-all (--a2a)",
                  fmt::format("{:g} per full stage's F and per its backward", spec.all_to_all));
        if (spec.fb_overlap > 0)
            input("F&B overlap (--overlap-fb)",
                  fmt::format("{:g} % of an F&B pair's all-to-all hidden", 100 * spec.fb_overlap));
    } else {
        input("engine", "SimGrid");
        input("cluster", cluster);
    }
    if (spec.dp != 1 || spec.tp != 1) input("dp, tp", fmt::format("{}, {}", spec.dp, spec.tp));
    return inputs;
}

viz::HtmlReport html_report_for(std::string_view command, std::string call,
                                const analysis::PipelineSpec& spec, const std::string& cluster,
                                int chunks_run) {
    viz::HtmlReport report;
    report.title = fmt::format("pipesim {}", command);
    report.command_line = std::move(call);
    report.inputs = run_inputs(spec, cluster, chunks_run);
    return report;
}

viz::HtmlSchedule html_schedule(std::string name, const analysis::Analysis& a) {
    viz::HtmlSchedule s;
    s.name = std::move(name);
    s.timeline = a.timeline;
    s.memory = a.memory;
    s.iteration_time = a.iteration_time;
    s.iteration_is_period = a.post_validation;
    if (a.model) {
        s.memory_scale = gib;
        s.memory_unit = "GiB";
    }
    return s;
}

void check_picture_ops(const analysis::PipelineSpec& spec, bool picture, std::size_t max_ops) {
    if (!picture) return;
    if (spec.given) {
        if (spec.given->op_count() > max_ops)
            throw viz::too_many_ops(
                fmt::format("schedule '{}' has {} ops,", spec.given->name, spec.given->op_count()),
                max_ops);
        return;
    }
    // Every registered schedule but DualPipe's has exactly max_op_count() ops: an F and a
    // backward (split into B and W where the schedule splits it) per microbatch on each of the
    // p·v stages. DualPipe's microbatches pass through half of them, and an F&B pair is one
    // op: about 2·p·m ops (2.06·p·m at p 8, m 64), the bound taken for them.
    const ScheduleGenerator* generator = find_generator(spec.schedule);
    if (!generator) return;  // prepare() names the unknown schedule
    const GeneratorOptions& g = spec.generator;
    const int v = g.chunks > 0 ? g.chunks : generator->default_chunks;
    const bool every_stage = generator->ops_per_microbatch_stage >= 2;
    const double least = every_stage ? max_op_count(*generator, g.devices, v, g.microbatches)
                                     : 2.0 * g.devices * g.microbatches;
    if (least > static_cast<double>(max_ops))
        throw viz::too_many_ops(
            every_stage
                ? fmt::format("{}'s p·v·m = {}·{}·{} makes {:.0f} ops ({} per "
                              "microbatch on every stage),",
                              spec.schedule, g.devices, v, g.microbatches, least,
                              generator->ops_per_microbatch_stage < 3 ? "an F and a backward"
                                                                      : "an F, a B and a W")
                : fmt::format("{}'s p·m = {}·{} makes at least {:.0f} ops (an F and a "
                              "backward per microbatch on every device),",
                              spec.schedule, g.devices, g.microbatches, least),
            max_ops);
}

std::string single_html(std::string_view command, std::string call,
                        const analysis::PipelineSpec& spec, const analysis::Analysis& a) {
    // A cluster as it was run, with its nodes (its name alone dropped "dgx-h100:4"'s 4).
    viz::HtmlReport report = html_report_for(
        command, std::move(call), spec,
        a.cluster ? fmt::format("{}: {}", a.cluster->cluster, a.cluster->description) : "",
        a.schedule.chunks);
    report.title = fmt::format("pipesim {}: {}, p={} m={} v={}", command, a.schedule.name,
                               a.schedule.devices, a.schedule.microbatches, a.schedule.chunks);
    report.table = summary_table({summary_row(a.schedule.name, a)}, a.model.has_value(),
                                 a.timeline.time_unit, /*speedup=*/false, a.post_validation);
    if (!spec.given) report.inputs.insert(report.inputs.begin(), {"schedule", a.schedule.name});
    report.schedules.push_back(html_schedule(a.schedule.name, a));
    if (a.model) {
        const analysis::TimeBudget budget = analysis::time_budget(a);
        report.sections.push_back(
            time_budget_section(time_budget_cells(budget), time_budget_bars(budget)));
    }
    if (a.model && a.model->operator_model) {
        // What a layer's pass times are made of, then the first and last stage's extra kernels.
        const analysis::LayerKernels layer = analysis::layer_kernels(*a.model);
        auto section = [&](const char* id, const char* heading, const TableCells& cells,
                           const std::string& caption) {
            viz::HtmlSection s;
            s.id = id;
            s.heading = heading;
            s.caption = caption;
            s.notes = cells.notes;
            s.table = {cells.columns, cells.rows};
            report.sections.push_back(std::move(s));
        };
        const TableCells cells = kernel_cells(layer, *a.model);
        section("kernels", "Kernels", cells,
                cells.title +
                    " (operator rooflines; rate: share of the peak or of the HBM bandwidth).");
        const std::vector<TableCells> stages = stage_kernel_cells(layer);
        section("embedding-kernels", "Embedding kernels", stages.at(0), stages.at(0).title + ".");
        section("head-kernels", "Head kernels", stages.at(1), stages.at(1).title + ".");
    }
    return viz::html_report_text(report);
}

}  // namespace pipesim::cli
