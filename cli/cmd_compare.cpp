// pipesim compare: several schedules on the same pipeline, one table.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/cluster_workload.hpp"
#include "analysis/compare.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "html_flag.hpp"
#include "html_output.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "schedules/registry.hpp"
#include "viz/html_report.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* compare_usage =
    R"(usage: pipesim compare -s NAME,NAME,... -p P -m M [options]

Runs each schedule on the same pipeline (shape, costs or model, latency) with the analytic
replay, or on a SimGrid cluster, and prints one table: makespan (iteration time with a model),
bubble rate of the worst device, whole-pipeline efficiency busy / (p × makespan; the period
with --post-validation), peak
activation (or peak memory with a model), throughput (with a model samples/s and MFU; --json
and --csv add tokens/s), the speed-up over the first schedule listed and over 1F1B with the
same inputs.

  -s, --schedule LIST   schedules, comma-separated (see 'pipesim list'); -v and --group-size
                        apply to the schedules that take them, the others keep their own
  --cluster NAME|NAME:N|FILE  run each schedule on the SimGrid model of this cluster instead (a
                        process each; give --costs in seconds or a model; --dp replicas)
  --json                one JSON object: the inputs and one entry per schedule
  --csv                 one CSV row per schedule, with a header
  --post-validation     every schedule's optimizer stepped without a pipeline-wide sync:
                        iterations compared by their period, the longest device window
                        (docs/models.md, "Optimizer post-validation")
)";

// "a,b,c" (or "a, b, c") → {"a", "b", "c"}; empty names refused.
std::vector<std::string> split_names(const std::string& flag, const std::string& text) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (true) {
        const auto comma = text.find(',', start);
        std::string name =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        // Spaces around a name, as in a list typed "1f1b, zb-v", are not part of it.
        const auto first = name.find_first_not_of(' ');
        name = first == std::string::npos
                   ? std::string()
                   : name.substr(first, name.find_last_not_of(' ') - first + 1);
        if (name.empty())
            throw UsageError(fmt::format("{}: expected schedule names separated by ',', got {}",
                                         flag, quote_arg(text)));
        if (std::find(names.begin(), names.end(), name) != names.end())
            throw UsageError(fmt::format("{}: {} is listed twice", flag, quote_arg(name)));
        names.push_back(std::move(name));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return names;
}

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

std::string table(const std::vector<SummaryRow>& rows, bool model, const std::string& unit,
                  bool period) {
    // With a model, an MFU column follows samples/s.
    std::string out = fmt::format(
        "{:<18} {:>3} {:>14} {:>9} {:>11} {:>13} {:>14}{} {:>9} {:>9}\n", "schedule", "v",
        fmt::format("{} {}", time_column_name(model, period), unit), "bubble", "efficiency",
        model ? "peak GiB" : "peak act M_B", model ? "samples/s" : "mb / " + unit,
        model ? "      MFU" : "", "speed-up", "vs 1F1B");
    // 1F1B may not run with these inputs (one stage of no layers): no speed-up over it.
    for (const SummaryRow& r : rows)
        out += fmt::format(
            "{:<18} {:>3} {:>14.6g} {:>8.2f}% {:>10.2f}% {:>13.4g} {:>14.6g}{} "
            "{:>8.3f}x {:>9}\n",
            r.schedule, r.chunks, r.makespan, 100 * r.bubble_rate, 100 * r.efficiency,
            model ? r.peak / gib : r.peak, r.throughput,
            model ? fmt::format(" {:>7.2f}%", 100 * r.mfu) : "", r.speedup,
            r.speedup_1f1b > 0 ? fmt::format("{:.3f}x", r.speedup_1f1b) : "—");
    return out;
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
    // The schedule list is read here; every other flag is a pipeline flag, and the pipeline
    // is checked with the first schedule standing in for all.
    std::vector<std::string> names;
    bool json = false, csv = false, post_validation = false;
    std::string cluster_name, html;
    // With a cluster, --dp and -t lay out the pipeline without a model too.
    const bool on_cluster = std::any_of(args.begin(), args.end(), [](const std::string& a) {
        return a == "--cluster" || a.starts_with("--cluster=");
    });
    ArgReader reader(args);
    std::string flag;
    PipelineFlags pipeline(/*layout_without_model=*/on_cluster);
    while (reader.next(flag)) {
        if (flag == "-s" || flag == "--schedule") {
            reader.claim_once("--schedule", flag);
            names = split_names(flag, reader.value(flag));
            pipeline.set_schedule(names.front());
        } else if (flag == "--json") {
            reader.claim_once("--json", flag);
            json = true;
        } else if (flag == "--csv") {
            reader.claim_once("--csv", flag);
            csv = true;
        } else if (flag == "--cluster") {
            reader.claim_once("--cluster", flag);
            cluster_name = reader.value(flag);
        } else if (flag == "--post-validation") {
            post_validation = true;
        } else if (read_html_flag(flag, reader, html)) {
        } else if (flag == "--schedule-file" || flag == "--save") {
            throw UsageError(fmt::format("{}: compare runs registered schedules (-s LIST)", flag));
        } else if (flag == "--comm" && on_cluster) {
            throw UsageError(
                "--comm is the analytic replay's latency; with --cluster latencies come from "
                "the cluster");
        } else if (pipeline.read(flag, reader)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}\n{}\n{}", compare_usage, html_flag_help, compare_schedule_flags_help(),
                       model_flags_help());
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim compare --help')", quote_arg(flag)));
        }
    }
    pipeline.finish();
    if (json && csv) throw UsageError("--json and --csv are alternatives: give one of them");
    analysis::check_comparison_shape(pipeline.spec(), names);
    if (!html.empty()) {
        viz::check_html_report("--html", html);
        check_output_files({{"--html", html}});
    }
    // Every schedule's timeline before the first runs: v = 2 and split backwards have more ops.
    for (const std::string& name : names)
        check_picture_ops(analysis::comparison_spec(name, pipeline.spec()), !html.empty(),
                          viz::TimelinePictureOptions{}.max_ops);
    simgrid::ClusterSpec cluster;
    if (on_cluster) cluster = analysis::load_checked_cluster(cluster_name);

    std::vector<ReportRun> runs;
    const analysis::PipelineSpec& spec = pipeline.spec();
    const bool show_progress = on_cluster && ::isatty(STDERR_FILENO);
    analysis::Engine engine;
    if (on_cluster) {
        analysis::SimGridEngine simgrid = simgrid_engine(cluster);
        simgrid.options.post_validation = post_validation;
        engine = std::move(simgrid);
    } else {
        engine = analysis::AnalyticEngine{.post_validation = post_validation};
        analysis::check_analytic_layout(spec);  // no one schedule's fault: before any is named
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        const analysis::PipelineSpec one = analysis::comparison_spec(name, spec);
        if (show_progress)
            fmt::print(stderr, "\r\033[K  simulating {} ({} of {}) on '{}'...", name, i + 1,
                       names.size(), cluster.name);
        try {
            // The analytic runs' phases, where a run is large (the cluster's show above).
            const PhaseLine phases("compare", one, !on_cluster);
            runs.push_back(run_for_report(name, one, engine, !html.empty()));
        } catch (const std::invalid_argument& e) {
            if (show_progress) fmt::print(stderr, "\r\033[K");
            throw std::invalid_argument(analysis::schedule_failed(name, e.what()));
        }
    }
    if (show_progress) fmt::print(stderr, "\r\033[K");
    // Each warning once, with the schedules that gave it ("1f1b, zb-h1: ...").
    std::vector<std::string> warnings, warning_texts;
    for (const ReportRun& r : runs)
        for (const std::string& w : r.warnings)
            analysis::add_schedule_warning(warnings, warning_texts, r.row.schedule, w);
    // Only once every schedule has run: a failure is then the one line on stderr.
    for (const std::string& w : warnings)
        fmt::print(stderr, "pipesim compare: warning: {}\n", w);
    std::vector<SummaryRow> rows;
    for (const ReportRun& r : runs) {
        rows.push_back(r.row);
        rows.back().speedup = runs.front().row.makespan / r.row.makespan;
    }
    const bool model = runs.front().model;
    const std::string unit = runs.front().unit;

    if (!html.empty()) {
        std::vector<viz::HtmlSchedule> pictures;
        for (ReportRun& r : runs)
            pictures.push_back(std::move(*r.picture));
        viz::write_html_report(
            html, compare_html_report(command_line("compare", args), spec, cluster_name, rows,
                                      model, unit, post_validation, std::move(pictures)));
    }
    if (json) {
        analysis::Comparison comparison;
        comparison.devices = spec.generator.devices;
        comparison.microbatches = spec.generator.microbatches;
        comparison.time_unit = unit;
        comparison.model = model;
        comparison.post_validation = post_validation;
        comparison.rows = rows;
        comparison.warnings = warnings;
        comparison.warning_texts = warning_texts;
        if (on_cluster) {
            comparison.engine = "simgrid";
            comparison.cluster = cluster.name;
        }
        // What tells one comparison file from another: the costs, latency, model, cluster
        // (with its node count) and layout, as the HTML report lists them.
        comparison.command = command_line("compare", args);
        comparison.inputs = run_inputs(spec, cluster_name);
        const nlohmann::ordered_json j = analysis::comparison_json(comparison);
        fmt::print("{}\n", analysis::json_text(j, 2));
    } else if (csv) {
        // With a model, tokens per second and MFU follow samples per second, as in --json.
        fmt::print(
            "schedule,chunks,{},bubble_rate,efficiency,{},{},speedup,speedup_1f1b,"
            "lifespan_max\n",
            analysis::time_field(model, post_validation),
            model ? "peak_memory_bytes" : "peak_activation_max",
            model ? "samples_per_second,tokens_per_second,mfu" : "throughput");
        for (const SummaryRow& r : rows)
            fmt::print("{},{},{},{},{},{},{},{},{},{}\n", r.schedule, r.chunks, r.makespan,
                       r.bubble_rate, r.efficiency, r.peak,
                       model ? fmt::format("{},{},{}", r.throughput, r.tokens_per_second, r.mfu)
                             : fmt::format("{}", r.throughput),
                       r.speedup, r.speedup_1f1b > 0 ? fmt::format("{}", r.speedup_1f1b) : "",
                       r.lifespan_max);
    } else {
        fmt::print("p={} m={}{}; speed-up over {}\n\n{}", spec.generator.devices,
                   spec.generator.microbatches,
                   on_cluster ? fmt::format(" on '{}' (SimGrid)", cluster.name) : std::string(),
                   rows.front().schedule, table(rows, model, unit, post_validation));
        if (model) fmt::print("{}", aligned_table(step_shares_cells(rows)));
        if (!html.empty()) fmt::print("\nreport written to {}\n", html);
    }
    return 0;
}

}  // namespace pipesim::cli
