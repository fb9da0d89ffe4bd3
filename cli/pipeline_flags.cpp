#include "pipeline_flags.hpp"

#include <fmt/format.h>

#include "schedules/schedule_file.hpp"

namespace pipesim::cli {

const char* const schedule_flags_help = R"(  -s, --schedule NAME   schedule (see 'pipesim list')
  -p, --stages P        pipeline devices (stages)
  -m, --microbatches M  microbatches per iteration
  -v, --chunks V        virtual stages per device (default: the schedule's)
  --group-size G        interleaved-1f1b: microbatches per chunk round (default P)
  --costs F,B,W         pass times of one full stage, split evenly over the V chunks
                        (default 1,1,1); or p·v triples F,B,W:F,B,W:... one per virtual stage
  --comm C              latency of every cross-device dependency (default 0)
  --mem-w-ratio R       share of a stage's activations held from B until W, 0..1 (default 1)
  --schedule-file FILE  use the schedule in FILE instead of a generated one: pipesim
                        schedule JSON (.json) or PyTorch pipelining CSV (.csv)
  --save FILE           also write the schedule to FILE (.json or .csv, by extension)
)";

const char* const model_flags_help =
    R"(model-based costs (seconds) and memory (bytes) instead of --costs/--mem-w-ratio:
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

bool read_cost_flag(const std::string& flag, ArgReader& reader, AnalyzeOptions& options) {
    if (flag == "--costs") {
        options.costs = parse_cost_triples(flag, reader.value(flag));
    } else if (flag == "--comm") {
        options.comm_latency = parse_number(flag, reader.value(flag), 0.0);
    } else if (flag == "--mem-w-ratio") {
        options.mem_w_ratio = parse_number(flag, reader.value(flag), 0.0);
        if (options.mem_w_ratio > 1.0)
            throw UsageError(
                fmt::format("{}: must be in 0..1, got {:g}", flag, options.mem_w_ratio));
    } else {
        return false;
    }
    return true;
}

bool PipelineFlags::read(const std::string& flag, ArgReader& reader) {
    if (flag == "-s" || flag == "--schedule") {
        options_.schedule = reader.value(flag);
        have_schedule_ = true;
    } else if (flag == "-p" || flag == "--stages") {
        options_.generator.devices = parse_int(flag, reader.value(flag), 1, 4096);
        have_p_ = true;
    } else if (flag == "-m" || flag == "--microbatches") {
        options_.generator.microbatches = parse_int(flag, reader.value(flag), 1, 1 << 20);
        have_m_ = true;
    } else if (flag == "-v" || flag == "--chunks") {
        options_.generator.chunks = parse_int(flag, reader.value(flag), 1, 64);
        have_shape_flag_ = true;
    } else if (flag == "--group-size") {
        options_.generator.group_size = parse_int(flag, reader.value(flag), 1, 1 << 20);
        have_shape_flag_ = true;
    } else if (read_cost_flag(flag, reader, options_)) {
        if (flag != "--comm") have_unit_costs_ = true;
    } else if (flag == "--schedule-file") {
        schedule_file_ = reader.value(flag);
    } else if (flag == "--save") {
        save_file_ = reader.value(flag);
    } else {
        return read_model_flag(flag, reader);
    }
    return true;
}

bool PipelineFlags::read_model_flag(const std::string& flag, ArgReader& reader) {
    models::Workload& w = model_.workload;
    if (flag == "--model") {
        model_.model = reader.value(flag);
        have_model_ = true;
    } else if (flag == "--gpu") {
        model_.gpu = reader.value(flag);
        have_gpu_ = true;
    } else if (flag == "--mb") {
        w.microbatch = parse_int(flag, reader.value(flag), 1, 1 << 20);
        have_mb_ = true;
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
        model_.efficiency = parse_number(flag, reader.value(flag), 0.0);
        if (model_.efficiency <= 0 || model_.efficiency > 1)
            throw UsageError(
                fmt::format("{}: must be in (0, 1], got {:g}", flag, model_.efficiency));
    } else if (flag == "--calibration") {
        model_.calibration_file = reader.value(flag);
    } else if (flag == "--dp") {
        model_.optimizer.data_parallel = parse_int(flag, reader.value(flag), 1, 1 << 20);
    } else if (flag == "--dist-opt") {
        model_.optimizer.distributed = true;
    } else if (flag == "--first-stage-layers") {
        model_.partition.first_stage_layers = parse_int(flag, reader.value(flag), 1, 1 << 20);
    } else if (flag == "--last-stage-layers") {
        model_.partition.last_stage_layers = parse_int(flag, reader.value(flag), 1, 1 << 20);
    } else {
        return false;
    }
    model_any_ = true;
    return true;
}

void PipelineFlags::finish() {
    if (model_any_) {
        if (!have_model_ || !have_gpu_ || !have_mb_)
            throw UsageError("model-based costs need all of --model NAME, --gpu NAME and --mb B");
        if (have_unit_costs_)
            throw UsageError(
                "--costs and --mem-w-ratio cannot be combined with --model (the model gives the "
                "costs and memory)");
        options_.model = model_;
    }
    if (!schedule_file_.empty() && (have_schedule_ || have_p_ || have_m_ || have_shape_flag_))
        throw UsageError(
            "--schedule-file gives the schedule and its shape: drop -s, -p, -m, -v "
            "and --group-size");
    if (schedule_file_.empty()) {
        if (!have_schedule_) throw UsageError("missing -s NAME (see 'pipesim list')");
        if (!have_p_) throw UsageError("missing -p P (number of pipeline devices)");
        if (!have_m_) throw UsageError("missing -m M (number of microbatches)");
    }
}

Schedule PipelineFlags::schedule() const {
    return schedule_file_.empty() ? generate_planned(options_) : read_schedule_file(schedule_file_);
}

Analysis PipelineFlags::analyze() const {
    return schedule_file_.empty() ? pipesim::analyze(options_)
                                  : analyze_schedule(read_schedule_file(schedule_file_), options_);
}

void PipelineFlags::save(const Schedule& schedule) const {
    if (!save_file_.empty()) write_schedule_file(schedule, save_file_);
}

}  // namespace pipesim::cli
