#include "pipeline_flags.hpp"

#include <array>

#include <fmt/format.h>

#include "bounds.hpp"
#include "fileio/files.hpp"
#include "fileio/memory_budget.hpp"
#include "flag_table.hpp"
#include "models/cost_model.hpp"
#include "schedules/phases.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim::cli {

namespace {

using State = PipelineFlags::State;
using Flag = FlagSpec<State>;

const std::array schedule_flags = {
    Flag{"-s", "--schedule", "NAME", "schedule (see 'pipesim list')",
         [](State& s, const std::string&, const std::string& v) {
             s.spec.schedule = v;
             s.have_schedule = true;
         }},
    Flag{"-p", "--stages", "P", "pipeline devices (stages)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.generator.devices = parse_int(f, v, 1, bounds::max_devices);
             s.have_p = true;
         }},
    Flag{"-m", "--microbatches", "M", "microbatches per iteration",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.generator.microbatches = parse_int(f, v, 1, bounds::max_microbatches);
             s.have_m = true;
         }},
    Flag{"-v", "--chunks", "V", "virtual stages per device (default: the schedule's)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.generator.chunks = parse_int(f, v, 1, bounds::max_chunks);
             s.have_shape_flag = true;
         }},
    Flag{"", "--group-size", "G", "interleaved-1f1b: microbatches per chunk round (default P)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.generator.group_size = parse_int(f, v, 1, bounds::max_microbatches);
             s.have_shape_flag = true;
         }},
    Flag{"", "--no-overlap-p2p-communication", "",
         "interleaved-1f1b: each step sends its F's output with its\n"
         "backward's, after both (Megatron-LM's flag; its only mode before 2023)",
         [](State& s, const std::string&, const std::string&) { s.spec.step_exchange = true; }},
};

const std::array cost_flags = {
    Flag{"", "--costs", "F,B,W",
         "pass times of one full stage, split evenly over the V chunks\n"
         "(default 1,1,1); or p·v triples F,B,W:F,B,W:... one per virtual stage",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.costs.passes.clear();
             for (const std::vector<double>& t : parse_cost_triples(f, v))
                 s.spec.costs.passes.push_back(PassCosts{t[0], t[1], t[2]});
             s.have_unit_costs = true;
         }},
    Flag{"", "--comm", "C", "latency of every cross-device dependency (default 0)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.comm_latency = parse_number(f, v, 0.0);
         }},
    Flag{"", "--a2a", "T",
         "expert-parallel all-to-all time of a full stage's F and of its\n"
         "backward, split over chunks like --costs (default 0; docs/dualpipe.md)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.all_to_all = parse_number(f, v, 0.0);
         }},
    Flag{"", "--overlap-fb", "X",
         "share 0..1 of an F&B pair's all-to-all hidden behind the other\n"
         "op's compute (dualpipe, dualpipe-v; default 0)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.fb_overlap = parse_number(f, v, 0.0);
             if (s.spec.fb_overlap > 1.0)
                 throw UsageError(
                     fmt::format("{}: must be in 0..1, got {:g}", f, s.spec.fb_overlap));
         }},
    Flag{"", "--mem-w-ratio", "R",
         "share of a stage's activations held from B until W, 0..1 (default 1)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.costs.mem_w_ratio = parse_number(f, v, 0.0);
             if (s.spec.costs.mem_w_ratio > 1.0)
                 throw UsageError(
                     fmt::format("{}: must be in 0..1, got {:g}", f, s.spec.costs.mem_w_ratio));
             s.have_unit_costs = true;
         }},
};

const std::array file_flags = {
    Flag{"", "--schedule-file", "FILE",
         "use the schedule in FILE instead of a generated one: pipesim\n"
         "schedule JSON (.json) or PyTorch pipelining CSV (.csv)",
         [](State& s, const std::string&, const std::string& v) { s.schedule_file = v; }},
    Flag{"", "--save", "FILE",
         "also write the schedule to FILE (.json or .csv, by extension; '-' or a\n"
         "name without one takes --format json|csv)",
         [](State& s, const std::string&, const std::string& v) { s.save_file = v; }},
};

const std::array model_flags = {
    Flag{"", "--model", "NAME|FILE", "a preset (see 'pipesim list') or a model JSON file",
         [](State& s, const std::string&, const std::string& v) {
             s.model.model = v;
             s.have_model = true;
         }},
    Flag{"", "--gpu", "NAME|FILE", "a GPU (see 'pipesim list') or a GPU JSON file",
         [](State& s, const std::string&, const std::string& v) {
             s.model.gpu = v;
             s.have_gpu = true;
         }},
    Flag{"", "--mb", "B", "sequences per microbatch",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.workload.microbatch = parse_int(f, v, 1, bounds::max_microbatch_size);
             s.have_mb = true;
         }},
    Flag{"", "--seq", "S", "sequence length (default: the model's)",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.workload.seq_len = parse_int(f, v, 1, bounds::max_seq_len);
         }},
    Flag{"", "--no-sp", "", "no sequence parallelism with T > 1",
         [](State& s, const std::string&, const std::string&) {
             s.model.workload.sequence_parallel = false;
         }},
    Flag{"", "--recompute", "R", "none (default), selective or full activation recomputation",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.workload.recompute = parse_flag_value(f, v, models::parse_recompute);
         }},
    Flag{"", "--attention", "KIND",
         "the attention core: fused (flash-style, the default) or unfused\n"
         "(batched GEMMs and softmax/dropout kernels over s×s scores in memory)",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.workload.attention = parse_flag_value(f, v, models::parse_attention_kernel);
         }},
    Flag{"", "--grad-dtype", "T",
         "the gradients: fp32 (default) or 16-bit fp16/bf16, as they are\n"
         "accumulated, reduced across replicas and held",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.optimizer.grad_bytes = parse_flag_value(f, v, models::parse_grad_dtype);
         }},
    Flag{"", "--no-gradient-accumulation-fusion", "",
         "W's GEMMs write a 16-bit dW that a kernel\n"
         "of its own adds to the gradients (Megatron-LM before 2022)",
         [](State& s, const std::string&, const std::string&) {
             s.model.workload.grad_accumulation_fusion = false;
         }},
    Flag{"", "--no-persist-layer-norm", "",
         "the norms run apex's non-persistent kernels\n"
         "(Megatron-LM's flag; all it had before October 2021)",
         [](State& s, const std::string&, const std::string&) {
             s.model.workload.persistent_norm = false;
         }},
    Flag{"", "--cross-entropy-loss-fusion", "",
         "the loss is one fused kernel per pass over\n"
         "the logits (Megatron-LM's flag; default: its eight separate kernels)",
         [](State& s, const std::string&, const std::string&) {
             s.model.workload.cross_entropy_fusion = true;
         }},
    Flag{"", "--efficiency", "E",
         "time each layer as FLOPs / (peak × E), 1e-6 ≤ E ≤ 1, instead of\n"
         "the operator rooflines (the older single-efficiency model;\n"
         "'pipesim list' gives a typical E per GPU)",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.efficiency = parse_number(f, v, 0.0);
             if (!(s.model.efficiency >= models::least_efficiency && s.model.efficiency <= 1))
                 throw UsageError(fmt::format("{}: must be in {:g}..1, got {}", f,
                                              models::least_efficiency, quote_arg(v)));
         }},
    Flag{"", "--calibration", "FILE", "measured layer times (docs/calibration-format.md)",
         [](State& s, const std::string&, const std::string& v) { s.model.calibration_file = v; }},
    Flag{"", "--dist-opt", "",
         "shard optimizer state over the D·C data- and context-parallel\n"
         "ranks (ZeRO-1)",
         [](State& s, const std::string&, const std::string&) {
             s.model.optimizer.distributed = true;
         }},
    Flag{"", "--zero", "N",
         "ZeRO stage over the D·C data- and context-parallel ranks: 1\n"
         "optimizer state, 2 also gradients, 3 also weights (FSDP); needs D·C > 1",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.optimizer.zero_stage = parse_int(f, v, 1, 3);
         }},
    Flag{"", "--cp", "C",
         "context parallelism: ring attention over C GPUs, each holding\n"
         "s/C of every sequence (2·C must divide s, which Megatron-LM\n"
         "cuts into 2·C chunks for balance; the heads need not divide)",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.workload.cp = parse_int(f, v, 1, bounds::max_tp);
         }},
    Flag{"", "--tp-comm-overlap", "",
         "overlap tensor-parallel collectives with the GEMMs (needs -t T > 1)",
         [](State& s, const std::string&, const std::string&) {
             s.model.workload.tp_comm_overlap = true;
         }},
    Flag{"", "--first-stage-layers", "N",
         "fix the first stage's layer count (0: only the embedding)",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.partition.first_stage_layers = parse_int(f, v, 0, bounds::max_layers);
         }},
    Flag{"", "--last-stage-layers", "N", "fix the last stage's layer count (0: only the head)",
         [](State& s, const std::string& f, const std::string& v) {
             s.model.partition.last_stage_layers = parse_int(f, v, 0, bounds::max_layers);
         }},
};

const std::array layout_flags = {
    Flag{"", "--dp", "D", "data-parallel replicas (default 1)",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.dp = parse_int(f, v, 1, bounds::max_dp);
             s.have_layout = true;
         }},
    Flag{"-t", "--tp", "T",
         "tensor-parallel GPUs per pipeline device (default 1), inside one\n"
         "node: at most 8 for analyze, the cluster's node for simulate",
         [](State& s, const std::string& f, const std::string& v) {
             s.spec.tp = parse_int(f, v, 1, bounds::max_tp);
             s.have_layout = true;
         }},
};

}  // namespace

// --zero and --tp-comm-overlap need the parallelism they act on (sharding: the dp·C GPUs that
// hold the same weights); --dist-opt is ZeRO-1.
void check_sharding_flags(const analysis::ModelSpec& model, const analysis::PipelineSpec& spec,
                          bool with_dp) {
    // search plans one data-parallel replica: it has no --dp.
    const char* give = with_dp ? "give --dp D or --cp C above 1" : "give --cp C above 1";
    const int zero = model.optimizer.zero_stage;
    const bool one_rank = spec.dp * model.workload.cp < 2;
    if (zero > 0 && one_rank)
        throw UsageError(
            fmt::format("--zero {} shards over data- and context-parallel ranks: {}", zero, give));
    if (model.optimizer.distributed && one_rank)
        throw UsageError(fmt::format(
            "--dist-opt shards over data- and context-parallel ranks: {} (with one rank nothing "
            "is sharded)",
            give));
    if (zero > 1 && model.optimizer.distributed)
        throw UsageError(fmt::format(
            "--dist-opt is ZeRO-1 (the optimizer state sharded): drop it or --zero {}", zero));
    if (model.workload.tp_comm_overlap && spec.tp < 2)
        throw UsageError(
            "--tp-comm-overlap overlaps tensor-parallel collectives: give -t T with T > 1");
    // It changed nothing at T = 1, where there is no sequence parallelism to turn off.
    if (!model.workload.sequence_parallel && spec.tp < 2)
        throw UsageError(
            "--no-sp turns off tensor-parallel sequence parallelism: give -t T with T > 1");
}

std::string schedule_flags_help(bool with_replay_options) {
    return flags_help(schedule_flags) + cost_flags_help(with_replay_options) +
           flags_help(file_flags);
}

std::string compare_schedule_flags_help() {
    std::string out;
    for (const Flag& f : schedule_flags)
        if (f.long_name != "--schedule")
            out += flag_help(f.short_name, f.long_name, f.value_name, f.help);
    return out + cost_flags_help(true);
}

bool replay_only_flag(std::string_view flag) {
    return flag == "--comm" || flag == "--a2a" || flag == "--overlap-fb";
}

std::string cost_flags_help(bool with_replay_options, bool one_triple) {
    std::string out;
    for (const Flag& f : cost_flags) {
        if (!with_replay_options && replay_only_flag(f.long_name)) continue;
        if (one_triple && std::string_view(f.long_name) == "--costs")
            out += flag_help(f.short_name, f.long_name, f.value_name,
                             "pass times of one full stage, split evenly over each candidate's\n"
                             "chunks (default 1,1,1); one triple, the same for every stage");
        else
            out += flag_help(f.short_name, f.long_name, f.value_name, f.help);
    }
    return out;
}

std::string model_flags_help(bool with_dp) {
    std::string layout;
    for (const Flag& f : layout_flags)
        if (with_dp || f.long_name != "--dp")
            layout += flag_help(f.short_name, f.long_name, f.value_name, f.help);
    std::string model = flags_help(model_flags);
    // Without --dp (search plans one replica) the optimizer shards over the C ranks alone.
    if (!with_dp)
        for (const auto& [from, to] : {std::pair<std::string_view, std::string_view>{
                                           "D·C data- and context-parallel", "C context-parallel"},
                                       {"D·C > 1", "C > 1"}})
            for (std::size_t at = model.find(from); at != std::string::npos;
                 at = model.find(from, at + to.size()))
                model.replace(at, from.size(), to);
    return "model-based costs (seconds) and memory (bytes) instead of --costs/--mem-w-ratio:\n" +
           model + "parallel layout:\n" + layout;
}

bool read_cost_flag(const std::string& flag, ArgReader& reader, analysis::PipelineSpec& spec) {
    State state;
    state.spec = spec;
    if (!read_flag(cost_flags, flag, reader, state)) return false;
    spec = std::move(state.spec);
    return true;
}

bool PipelineFlags::read(const std::string& flag, ArgReader& reader) {
    if (read_flag(schedule_flags, flag, reader, state_) ||
        read_flag(cost_flags, flag, reader, state_) ||
        read_flag(file_flags, flag, reader, state_) ||
        read_flag(layout_flags, flag, reader, state_))
        return true;
    return read_model_flag(flag, reader, state_);
}

bool PipelineFlags::read_model_flag(const std::string& flag, ArgReader& reader, State& state) {
    if (flag == "-t" || flag == "--tp") return read_flag(layout_flags, flag, reader, state);
    if (!read_flag(model_flags, flag, reader, state)) return false;
    state.model_any = true;
    if (state.first_model_flag.empty()) state.first_model_flag = flag;
    return true;
}

std::optional<analysis::ModelSpec> PipelineFlags::model_of(const State& s) {
    if (!s.model_any && !s.have_model && !s.have_gpu && !s.have_mb) return std::nullopt;
    if (!s.have_model || !s.have_gpu || !s.have_mb) {
        // Named when no --model, --gpu or --mb came: "--cp" alone said nothing of itself.
        const std::string given =
            !s.have_model && !s.have_gpu && !s.have_mb && !s.first_model_flag.empty()
                ? fmt::format("{} is an option of model-based costs, which ", s.first_model_flag)
                : "model-based costs ";
        throw UsageError(given + "need all of --model NAME, --gpu NAME and --mb B");
    }
    return s.model;
}

void PipelineFlags::set_schedule(const std::string& name) {
    state_.spec.schedule = name;
    state_.have_schedule = true;
}

std::vector<std::string> PipelineFlags::input_files() const {
    std::vector<std::string> files;
    for (const std::string& file : {state_.schedule_file, state_.model.model, state_.model.gpu,
                                    state_.model.calibration_file})
        if (!file.empty()) files.push_back(file);
    return files;
}

void PipelineFlags::finish() {
    State& s = state_;
    if (const std::optional<analysis::ModelSpec> model = model_of(s)) {
        if (s.have_unit_costs)
            throw UsageError(
                "--costs and --mem-w-ratio cannot be combined with --model (the model gives the "
                "costs and memory)");
        check_sharding_flags(*model, s.spec, /*with_dp=*/true);
        s.spec.costs.model = model;
    } else if (s.have_layout && !layout_without_model_) {
        throw UsageError(
            "--dp and -t set the model's layout: give --model NAME, --gpu NAME and --mb B "
            "(or lay the pipeline out on a cluster: 'pipesim simulate', or 'pipesim compare "
            "--cluster')");
    }
    if (!s.schedule_file.empty() && (s.have_schedule || s.have_p || s.have_m || s.have_shape_flag))
        throw UsageError(
            "--schedule-file gives the schedule and its shape: drop -s, -p, -m, -v "
            "and --group-size");
    if (s.schedule_file.empty()) {
        if (!s.have_schedule) throw UsageError("missing -s NAME (see 'pipesim list')");
        if (!s.have_p) throw UsageError("missing -p P (number of pipeline devices)");
        if (!s.have_m) throw UsageError("missing -m M (number of microbatches)");
    }
    spec_ = s.spec;
    if (!s.schedule_file.empty()) spec_.given = read_schedule_file(s.schedule_file);
}

namespace {

// --format applies to a --save file without an extension only.
std::string save_format(const std::string& path, const std::string& format_without_extension) {
    return fileio::file_extension(path).empty() ? format_without_extension : std::string();
}

}  // namespace

void PipelineFlags::check_save(const std::string& format_without_extension) const {
    if (state_.save_file.empty()) return;
    check_schedule_file_name(state_.save_file,
                             save_format(state_.save_file, format_without_extension));
}

double PipelineFlags::save_bytes_per_op() const {
    if (state_.save_file.empty()) return 0;
    const analysis::PipelineSpec& spec = spec_;
    if (spec.given)
        return schedule_file_bytes_per_op(spec.given->microbatches, spec.given->stages());
    const ScheduleGenerator* generator = find_generator(spec.schedule);
    const int chunks = spec.generator.chunks > 0 ? spec.generator.chunks
                       : generator               ? generator->default_chunks
                                                 : 1;
    return schedule_file_bytes_per_op(spec.generator.microbatches, spec.generator.devices * chunks);
}

PipelineFlags::PendingSave prepare_schedule_save(const Schedule& schedule, const std::string& path,
                                                 const std::string& format) {
    const std::string what = fmt::format(
        "composing the schedule file {} ({} ops)",
        fileio::is_standard_stream(path) ? "for standard output" : path, schedule.op_count());
    report_phase(what);
    // Checked again here, for what reads a schedule instead of running one (convert).
    fileio::check_memory(schedule_file_bytes_per_op(schedule.microbatches, schedule.stages()) *
                             static_cast<double>(schedule.op_count()),
                         fileio::memory_budget(), what);
    return {path, schedule_file_text(schedule, path, format),
            schedule_file_loss(schedule, path, format)};
}

std::optional<PipelineFlags::PendingSave> PipelineFlags::prepare_save(
    const Schedule& schedule, const std::string& format_without_extension) const {
    if (state_.save_file.empty()) return std::nullopt;
    const std::string& path = state_.save_file;
    return prepare_schedule_save(schedule, path, save_format(path, format_without_extension));
}

void PipelineFlags::write_save(const std::optional<PendingSave>& pending,
                               std::string_view command) {
    if (!pending) return;
    fileio::write_file_atomically(pending->path, pending->text);
    if (!pending->loss.empty())
        fmt::print(stderr, "pipesim {}: warning: {}\n", command, pending->loss);
}

void save_schedule(std::string_view command, const Schedule& schedule, const std::string& path,
                   const std::string& format) {
    PipelineFlags::write_save(prepare_schedule_save(schedule, path, format), command);
}

namespace {

// --overlap-grad-reduce and --no-overlap-grad-reduce together: the last one won, silently.
void refuse_both(const GradReduceFlags& g, const std::string& flag) {
    if (!g.given.empty() && g.given != flag)
        throw UsageError(fmt::format("{} and {} contradict each other: give one", g.given, flag));
}

const std::array grad_reduce_flags = {
    FlagSpec<GradReduceFlags>{
        "", "--overlap-grad-reduce", "",
        "reduce a device's gradients during its last backward (default; needs\n"
        "--dp > 1 or --cp > 1)",
        [](GradReduceFlags& g, const std::string& f, const std::string&) {
            refuse_both(g, f);
            g.overlap = true;
            g.given = f;
        }},
    FlagSpec<GradReduceFlags>{"", "--no-overlap-grad-reduce", "",
                              "reduce gradients only after the whole pipeline (needs --dp > 1 or\n"
                              "--cp > 1)",
                              [](GradReduceFlags& g, const std::string& f, const std::string&) {
                                  refuse_both(g, f);
                                  g.overlap = false;
                                  g.given = f;
                              }},
    FlagSpec<GradReduceFlags>{
        "", "--overlap-param-gather", "",
        "all-gather the sharded optimizer's updated parameters beside the\n"
        "first forward instead of after the reduce-scatter (needs --dist-opt\n"
        "or --zero 1|2 with --dp or --cp above 1)",
        [](GradReduceFlags& g, const std::string&, const std::string&) {
            g.overlap_param_gather = true;
        }},
    FlagSpec<GradReduceFlags>{"", "--post-validation", "",
                              "optimizer post-validation (Zero Bubble's): no pipeline-wide sync\n"
                              "before the step, each device steps and starts the next iteration\n"
                              "when its own work is done; the iteration time is then the period\n"
                              "of repeated iterations, the longest device window",
                              [](GradReduceFlags& g, const std::string&, const std::string&) {
                                  g.post_validation = true;
                              }},
};

}  // namespace

bool read_grad_reduce_flag(const std::string& flag, ArgReader& reader, GradReduceFlags& into) {
    return read_flag(grad_reduce_flags, flag, reader, into);
}

std::string grad_reduce_flags_help() {
    return flags_help(grad_reduce_flags);
}

void check_grad_reduce_flag(const GradReduceFlags& flags, const analysis::PipelineSpec& spec) {
    // Context-parallel ranks hold the same weights: they reduce gradients like replicas.
    const int cp = spec.costs.model ? spec.costs.model->workload.cp : 1;
    if (!flags.given.empty() && spec.dp * cp < 2)
        throw UsageError(fmt::format(
            "{} needs data or context parallelism (--dp D or --cp C above 1): there is no "
            "gradient reduction",
            flags.given));
    if (!flags.overlap_param_gather) return;
    const int sharding = spec.costs.model ? spec.costs.model->optimizer.sharding() : 0;
    if (sharding < 1 || sharding > 2)
        throw UsageError(
            sharding == 3
                ? "--overlap-param-gather: ZeRO-3 gathers the parameters before every pass "
                  "already; there is no all-gather after the step to move"
                : "--overlap-param-gather moves the sharded optimizer's parameter all-gather: "
                  "give --dist-opt or --zero 1|2 (with --model, --gpu, --mb)");
}

}  // namespace pipesim::cli
