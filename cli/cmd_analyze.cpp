#include <cstdio>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "report.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* analyze_help = R"(usage: pipesim analyze -s NAME -p P -m M [options]
       pipesim analyze --schedule-file FILE [options]

  -s, --schedule NAME   schedule (see 'pipesim list')
  -p, --stages P        pipeline devices (stages)
  -m, --microbatches M  microbatches per iteration
  -v, --chunks V        virtual stages per device (default: the schedule's)
  --group-size G        interleaved-1f1b: microbatches per chunk round (default P)
  --costs F,B,W         pass times of one full stage, split evenly over the V chunks
                        (default 1,1,1); or p·v triples F,B,W:F,B,W:... one per virtual stage
  --comm C              latency of every cross-device dependency (default 0)
  --mem-w-ratio R       share of a stage's activations held from B until W, 0..1 (default 1)
  --schedule-file FILE  analyze the schedule in FILE instead of a generated one: pipesim
                        schedule JSON (.json) or PyTorch pipelining CSV (.csv)
  --save FILE           also write the schedule to FILE (.json or .csv, by extension)
  --json                print one JSON object instead of the table
)";

}  // namespace

int run_analyze(const std::vector<std::string>& args) {
    AnalyzeOptions options;
    bool json = false;
    bool have_schedule = false, have_p = false, have_m = false, have_shape_flag = false;
    std::string schedule_file, save_file;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "-s" || flag == "--schedule") {
            options.schedule = reader.value(flag);
            have_schedule = true;
        } else if (flag == "-p" || flag == "--stages") {
            options.generator.devices = parse_int(flag, reader.value(flag), 1, 4096);
            have_p = true;
        } else if (flag == "-m" || flag == "--microbatches") {
            options.generator.microbatches = parse_int(flag, reader.value(flag), 1, 1 << 20);
            have_m = true;
        } else if (flag == "-v" || flag == "--chunks") {
            options.generator.chunks = parse_int(flag, reader.value(flag), 1, 64);
            have_shape_flag = true;
        } else if (flag == "--group-size") {
            options.generator.group_size = parse_int(flag, reader.value(flag), 1, 1 << 20);
            have_shape_flag = true;
        } else if (flag == "--costs") {
            options.costs = parse_cost_triples(flag, reader.value(flag));
        } else if (flag == "--comm") {
            options.comm_latency = parse_number(flag, reader.value(flag), 0.0);
        } else if (flag == "--mem-w-ratio") {
            options.mem_w_ratio = parse_number(flag, reader.value(flag), 0.0);
            if (options.mem_w_ratio > 1.0)
                throw UsageError(
                    fmt::format("{}: must be in 0..1, got {:g}", flag, options.mem_w_ratio));
        } else if (flag == "--schedule-file") {
            schedule_file = reader.value(flag);
        } else if (flag == "--save") {
            save_file = reader.value(flag);
        } else if (flag == "--json") {
            json = true;
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}", analyze_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option '{}' (see 'pipesim analyze --help')", flag));
        }
    }
    if (!schedule_file.empty() && (have_schedule || have_p || have_m || have_shape_flag))
        throw UsageError("--schedule-file gives the schedule and its shape: drop -s, -p, -m, -v "
                         "and --group-size");
    if (schedule_file.empty()) {
        if (!have_schedule) throw UsageError("missing -s NAME (see 'pipesim list')");
        if (!have_p) throw UsageError("missing -p P (number of pipeline devices)");
        if (!have_m) throw UsageError("missing -m M (number of microbatches)");
    }

    const Analysis analysis = schedule_file.empty()
                                  ? analyze(options)
                                  : analyze_schedule(read_schedule_file(schedule_file), options);
    if (!save_file.empty()) write_schedule_file(analysis.schedule, save_file);
    if (json)
        fmt::print("{}\n", analysis_json(analysis, options).dump(2));
    else
        fmt::print("{}", analysis_table(analysis, options));
    return 0;
}

}  // namespace pipesim::cli
