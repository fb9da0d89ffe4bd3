#include <cstdio>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "report.hpp"
#include "schedules/schedule_file.hpp"
#include "viz_flags.hpp"

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

model-based costs (seconds) and memory (bytes) instead of --costs/--mem-w-ratio:
  --model NAME|FILE     a preset (see 'pipesim list') or a model JSON file
  --gpu NAME            GPU (see 'pipesim list')
  --mb B                sequences per microbatch
  --seq S               sequence length (default: the model's)
  -t, --tp T            tensor-parallel degree inside a node (default 1)
  --no-sp               no sequence parallelism with T > 1
  --recompute R         none (default), selective or full activation recomputation
  --efficiency E        achieved fraction of peak, 0..1 (default: the GPU's)
  --calibration FILE    measured layer times (docs/calibration-format.md)
  --dp D                data-parallel size (memory with --dist-opt only; default 1)
  --dist-opt            shard optimizer state over the D data-parallel ranks
  --first-stage-layers N, --last-stage-layers N   fix those stages' layer counts
)";

// The model flags, gathered while reading and checked once all are known.
struct ModelFlags {
    ModelRunOptions run;
    bool any = false, have_model = false, have_gpu = false, have_mb = false;
    bool have_unit_costs = false;  // --costs or --mem-w-ratio
};

// Reads one model flag; false if `flag` is not one.
bool read_model_flag(const std::string& flag, ArgReader& reader, ModelFlags& m) {
    models::Workload& w = m.run.workload;
    if (flag == "--model") {
        m.run.model = reader.value(flag);
        m.have_model = true;
    } else if (flag == "--gpu") {
        m.run.gpu = reader.value(flag);
        m.have_gpu = true;
    } else if (flag == "--mb") {
        w.microbatch = parse_int(flag, reader.value(flag), 1, 1 << 20);
        m.have_mb = true;
    } else if (flag == "--seq") {
        w.seq_len = parse_int(flag, reader.value(flag), 1, 1 << 24);
    } else if (flag == "-t" || flag == "--tp") {
        w.tp = parse_int(flag, reader.value(flag), 1, 1024);
    } else if (flag == "--no-sp") {
        w.sequence_parallel = false;
    } else if (flag == "--recompute") {
        const std::string r = reader.value(flag);
        if (r == "none")
            w.recompute = models::Recompute::none;
        else if (r == "selective")
            w.recompute = models::Recompute::selective;
        else if (r == "full")
            w.recompute = models::Recompute::full;
        else
            throw UsageError(
                fmt::format("{}: expected none, selective or full, got '{}'", flag, r));
    } else if (flag == "--efficiency") {
        m.run.efficiency = parse_number(flag, reader.value(flag), 0.0);
        if (m.run.efficiency <= 0 || m.run.efficiency > 1)
            throw UsageError(
                fmt::format("{}: must be in (0, 1], got {:g}", flag, m.run.efficiency));
    } else if (flag == "--calibration") {
        m.run.calibration_file = reader.value(flag);
    } else if (flag == "--dp") {
        m.run.optimizer.data_parallel = parse_int(flag, reader.value(flag), 1, 1 << 20);
    } else if (flag == "--dist-opt") {
        m.run.optimizer.distributed = true;
    } else if (flag == "--first-stage-layers") {
        m.run.partition.first_stage_layers = parse_int(flag, reader.value(flag), 1, 1 << 20);
    } else if (flag == "--last-stage-layers") {
        m.run.partition.last_stage_layers = parse_int(flag, reader.value(flag), 1, 1 << 20);
    } else {
        return false;
    }
    m.any = true;
    return true;
}

std::optional<ModelRunOptions> model_options(const ModelFlags& m) {
    if (!m.any) return std::nullopt;
    if (!m.have_model || !m.have_gpu || !m.have_mb)
        throw UsageError("model-based costs need all of --model NAME, --gpu NAME and --mb B");
    if (m.have_unit_costs)
        throw UsageError(
            "--costs and --mem-w-ratio cannot be combined with --model (the model gives the "
            "costs and memory)");
    return m.run;
}

}  // namespace

int run_analyze(const std::vector<std::string>& args) {
    AnalyzeOptions options;
    bool json = false;
    bool have_schedule = false, have_p = false, have_m = false, have_shape_flag = false;
    std::string schedule_file, save_file;
    ModelFlags model_flags;
    viz::VizOutputs viz_outputs;
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
            model_flags.have_unit_costs = true;
        } else if (flag == "--comm") {
            options.comm_latency = parse_number(flag, reader.value(flag), 0.0);
        } else if (flag == "--mem-w-ratio") {
            options.mem_w_ratio = parse_number(flag, reader.value(flag), 0.0);
            model_flags.have_unit_costs = true;
            if (options.mem_w_ratio > 1.0)
                throw UsageError(
                    fmt::format("{}: must be in 0..1, got {:g}", flag, options.mem_w_ratio));
        } else if (flag == "--schedule-file") {
            schedule_file = reader.value(flag);
        } else if (flag == "--save") {
            save_file = reader.value(flag);
        } else if (flag == "--json") {
            json = true;
        } else if (read_model_flag(flag, reader, model_flags)) {
        } else if (read_viz_flag(flag, reader, viz_outputs)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}\n{}", analyze_help, viz_flags_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option '{}' (see 'pipesim analyze --help')", flag));
        }
    }
    options.model = model_options(model_flags);
    if (!schedule_file.empty() && (have_schedule || have_p || have_m || have_shape_flag))
        throw UsageError("--schedule-file gives the schedule and its shape: drop -s, -p, -m, -v "
                         "and --group-size");
    if (schedule_file.empty()) {
        if (!have_schedule) throw UsageError("missing -s NAME (see 'pipesim list')");
        if (!have_p) throw UsageError("missing -p P (number of pipeline devices)");
        if (!have_m) throw UsageError("missing -m M (number of microbatches)");
    }
    if (json && viz_outputs.gantt) throw UsageError("--gantt prints text; it cannot go with --json");
    viz::check_outputs(viz_outputs);

    const Analysis analysis = schedule_file.empty()
                                  ? analyze(options)
                                  : analyze_schedule(read_schedule_file(schedule_file), options);
    if (!save_file.empty()) write_schedule_file(analysis.schedule, save_file);
    const std::string gantt =
        viz::write_outputs(analysis.timeline, analysis_memory(analysis, options), viz_outputs);
    if (json)
        fmt::print("{}\n", analysis_json(analysis, options).dump(2));
    else
        fmt::print("{}", analysis_table(analysis, options));
    if (!gantt.empty()) fmt::print("\n{}", gantt);
    return 0;
}

}  // namespace pipesim::cli
