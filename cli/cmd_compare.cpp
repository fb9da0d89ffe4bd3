// pipesim compare: several schedules on the same pipeline, one table.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/run.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "pipeline_flags.hpp"
#include "schedules/registry.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* compare_usage =
    R"(usage: pipesim compare -s NAME,NAME,... -p P -m M [options]

Runs each schedule on the same pipeline (shape, costs or model, latency) with the analytic
replay and prints one table: makespan (iteration time with a model), bubble rate of the
worst device, whole-pipeline efficiency busy / (p × makespan), peak activation (or peak
memory with a model), throughput, the speed-up over the first schedule listed and over
1F1B with the same inputs.

  -s, --schedule LIST   schedules, comma-separated (see 'pipesim list'); -v and --group-size
                        apply to the schedules that take them, the others keep their own
  --json                one JSON object: the inputs and one entry per schedule
  --csv                 one CSV row per schedule, with a header
)";

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// One schedule's figures.
struct Row {
    std::string schedule;
    int chunks = 0;
    double makespan = 0;  ///< or iteration time with a model
    double bubble_rate = 0;
    double efficiency = 0;
    double peak = 0;          ///< activation units, or bytes (weights + activations) with a model
    double throughput = 0;    ///< microbatches per unit, or samples/s with a model
    double speedup = 0;       ///< over the first row
    double speedup_1f1b = 0;  ///< over 1F1B with the same inputs
    double lifespan_max = 0;  ///< longest activation lifespan (F start to W end)
};

// "a,b,c" → {"a", "b", "c"}; empty names refused.
std::vector<std::string> split_names(const std::string& flag, const std::string& text) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (true) {
        const auto comma = text.find(',', start);
        std::string name =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
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

// The shape `name` runs with: -v and --group-size where the schedule takes them, else its
// own defaults.
GeneratorOptions shape_for(const std::string& name, GeneratorOptions shape) {
    const ScheduleGenerator* g = find_generator(name);
    if (!g) return shape;  // generate_schedule names the problem
    const int max_chunks = g->max_chunks == 0 ? bounds::max_chunks : g->max_chunks;
    if (shape.chunks != 0 && (shape.chunks < g->min_chunks || shape.chunks > max_chunks))
        shape.chunks = 0;
    if (!g->takes_group_size) shape.group_size = 0;
    return shape;
}

Row row_of(const std::string& name, const analysis::Analysis& a) {
    Row r;
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
    } else {
        r.peak = a.metrics.peak_activation_max;
        r.throughput = a.metrics.throughput;
    }
    return r;
}

std::string table(const std::vector<Row>& rows, bool model, const std::string& unit) {
    std::string out = fmt::format("{:<18} {:>3} {:>14} {:>9} {:>11} {:>13} {:>14} {:>9} {:>9}\n",
                                  "schedule", "v", model ? "iteration s" : "makespan " + unit,
                                  "bubble", "efficiency", model ? "peak GiB" : "peak act M_B",
                                  model ? "samples/s" : "mb / " + unit, "speed-up", "vs 1F1B");
    for (const Row& r : rows)
        out += fmt::format(
            "{:<18} {:>3} {:>14.6g} {:>8.2f}% {:>10.2f}% {:>13.4g} {:>14.6g} "
            "{:>8.3f}x {:>8.3f}x\n",
            r.schedule, r.chunks, r.makespan, 100 * r.bubble_rate, 100 * r.efficiency,
            model ? r.peak / gib : r.peak, r.throughput, r.speedup, r.speedup_1f1b);
    return out;
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
    // The schedule list is read here; every other flag is a pipeline flag, and the pipeline
    // is checked with the first schedule standing in for all.
    std::vector<std::string> names;
    bool json = false, csv = false;
    ArgReader reader(args);
    std::string flag;
    PipelineFlags pipeline(/*layout_without_model=*/false);
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
        } else if (flag == "--schedule-file" || flag == "--save") {
            throw UsageError(fmt::format("{}: compare runs registered schedules (-s LIST)", flag));
        } else if (pipeline.read(flag, reader)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}\n{}\n{}", compare_usage, schedule_flags_help(), model_flags_help());
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim compare --help')", quote_arg(flag)));
        }
    }
    pipeline.finish();
    if (json && csv) throw UsageError("--json and --csv are alternatives: give one of them");

    std::vector<Row> rows;
    std::vector<std::string> warnings;
    analysis::PipelineSpec spec = pipeline.spec();
    bool model = false;
    std::string unit;
    for (const std::string& name : names) {
        spec.schedule = name;
        spec.generator = shape_for(name, pipeline.spec().generator);
        analysis::Analysis a;
        try {
            a = analysis::run_with_baseline(
                spec, analysis::AnalyticEngine{.record_transfers = false, .record_ops = false});
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(fmt::format("{}: {}", name, e.what()));
        }
        model = a.model.has_value();
        unit = a.timeline.time_unit;
        rows.push_back(row_of(name, a));
        warnings.insert(warnings.end(), a.warnings.begin(), a.warnings.end());
    }
    // Only once every schedule has run: a failure is then the one line on stderr.
    for (const std::string& w : warnings)
        fmt::print(stderr, "pipesim compare: warning: {}\n", w);
    for (Row& r : rows)
        r.speedup = rows.front().makespan / r.makespan;

    if (json) {
        nlohmann::ordered_json j;
        j["devices"] = spec.generator.devices;
        j["microbatches"] = spec.generator.microbatches;
        j["time_unit"] = unit;
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const Row& r : rows)
            list.push_back({{"schedule", r.schedule},
                            {"chunks", r.chunks},
                            {model ? "iteration_time" : "makespan", r.makespan},
                            {"bubble_rate", r.bubble_rate},
                            {"efficiency", r.efficiency},
                            {model ? "peak_memory_bytes" : "peak_activation_max", r.peak},
                            {model ? "samples_per_second" : "throughput", r.throughput},
                            {"speedup", r.speedup},
                            {"speedup_1f1b", r.speedup_1f1b},
                            {"lifespan_max", r.lifespan_max}});
        j["schedules"] = list;
        fmt::print("{}\n", j.dump(2));
    } else if (csv) {
        fmt::print(
            "schedule,chunks,{},bubble_rate,efficiency,{},{},speedup,speedup_1f1b,"
            "lifespan_max\n",
            model ? "iteration_time" : "makespan",
            model ? "peak_memory_bytes" : "peak_activation_max",
            model ? "samples_per_second" : "throughput");
        for (const Row& r : rows)
            fmt::print("{},{},{},{},{},{},{},{},{},{}\n", r.schedule, r.chunks, r.makespan,
                       r.bubble_rate, r.efficiency, r.peak, r.throughput, r.speedup, r.speedup_1f1b,
                       r.lifespan_max);
    } else {
        fmt::print("p={} m={}; speed-up over {}\n\n{}", spec.generator.devices,
                   spec.generator.microbatches, rows.front().schedule, table(rows, model, unit));
    }
    return 0;
}

}  // namespace pipesim::cli
