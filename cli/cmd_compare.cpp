// pipesim compare: several schedules on the same pipeline, one table.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "pipeline_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* compare_usage =
    R"(usage: pipesim compare -s NAME,NAME,... -p P -m M [options]

Runs each schedule on the same pipeline (shape, costs or model, latency) with the analytic
replay and prints one table: makespan (iteration time with a model), bubble rate of the
worst device, whole-pipeline efficiency busy / (p × makespan), peak activation (or peak
memory with a model), throughput, and the speed-up over the first schedule listed.

  -s, --schedule LIST   schedules, comma-separated (see 'pipesim list'); -v and --group-size
                        apply to the schedules that take them, the others keep their own
  --json                one JSON object: the inputs and one entry per schedule
  --csv                 one CSV row per schedule, with a header
)";

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

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

std::string table(const std::vector<analysis::CompareRow>& rows, bool model,
                  const std::string& unit) {
    std::string out = fmt::format("{:<18} {:>3} {:>14} {:>9} {:>11} {:>13} {:>14} {:>9}\n",
                                  "schedule", "v", model ? "iteration s" : "makespan " + unit,
                                  "bubble", "efficiency", model ? "peak GiB" : "peak act M_B",
                                  model ? "samples/s" : "mb / " + unit, "speed-up");
    for (const analysis::CompareRow& r : rows)
        out += fmt::format(
            "{:<18} {:>3} {:>14.6g} {:>8.2f}% {:>10.2f}% {:>13.4g} {:>14.6g} "
            "{:>8.3f}x\n",
            r.schedule, r.chunks, r.makespan, 100 * r.bubble_rate, 100 * r.efficiency,
            model ? r.peak / gib : r.peak, r.throughput, r.speedup);
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

    const analysis::Comparison comparison = analysis::compare(pipeline.spec(), names);
    // Only once every schedule has run: a failure is then the one line on stderr.
    for (const std::string& w : comparison.warnings)
        fmt::print(stderr, "pipesim compare: warning: {}\n", w);
    const std::vector<analysis::CompareRow>& rows = comparison.rows;
    const bool model = comparison.model;

    if (json) {
        fmt::print("{}\n", analysis::comparison_json(comparison).dump(2));
    } else if (csv) {
        fmt::print("schedule,chunks,{},bubble_rate,efficiency,{},{},speedup\n",
                   model ? "iteration_time" : "makespan",
                   model ? "peak_memory_bytes" : "peak_activation_max",
                   model ? "samples_per_second" : "throughput");
        for (const analysis::CompareRow& r : rows)
            fmt::print("{},{},{},{},{},{},{},{}\n", r.schedule, r.chunks, r.makespan, r.bubble_rate,
                       r.efficiency, r.peak, r.throughput, r.speedup);
    } else {
        fmt::print("p={} m={}; speed-up over {}\n\n{}", comparison.devices, comparison.microbatches,
                   rows.front().schedule, table(rows, model, comparison.time_unit));
    }
    return 0;
}

}  // namespace pipesim::cli
