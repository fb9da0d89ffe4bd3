// pipesim simulate: a schedule on the SimGrid model of a GPU cluster.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "analysis/cluster_workload.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "html_flag.hpp"
#include "html_output.hpp"
#include "pipeline_flags.hpp"
#include "progress_flag.hpp"
#include "report.hpp"
#include "viz/chrome_trace.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* simulate_usage =
    R"(usage: pipesim simulate -s NAME -p P -m M --cluster NAME|FILE [options]

Times are seconds: give --costs in seconds, or a model (--model, --gpu, --mb).

)";

std::pair<int, double> parse_straggler(const std::string& flag, const std::string& text) {
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        throw UsageError(fmt::format("{}: expected GPU:FACTOR, got {}", flag, quote_arg(text)));
    const int gpu = parse_int(flag, text.substr(0, colon), 0, bounds::max_gpu_index);
    const double factor = parse_positive(flag, text.substr(colon + 1));
    return {gpu, factor};
}

// What the cluster and what-if flags set.
struct SimulateFlags {
    analysis::SimGridEngine engine;
    std::string cluster_name;
    bool json = false;
    sweep::ProgressStyle progress = sweep::ProgressStyle::automatic;
};

using SimFlag = FlagSpec<SimulateFlags>;

const std::array cluster_flags = {
    SimFlag{"", "--cluster", "NAME|NAME:N|FILE",
            "a preset (see 'pipesim list'; :N resizes it to N nodes) or a\n"
            "cluster JSON file (docs/cluster-format.md)",
            [](SimulateFlags& s, const std::string&, const std::string& v) { s.cluster_name = v; }},
    SimFlag{"", "--layout-order", "O",
            "rank order, fastest-varying first (default tp,cp,dp,pp;\n"
            "without cp, cp goes right after tp)",
            [](SimulateFlags& s, const std::string&, const std::string& v) {
                s.engine.layout.order = simgrid::parse_layout_order(v);
            }},
    SimFlag{"", "--message-bytes", "N",
            "bytes a stage sends the next per microbatch without a model, a 1/T\n"
            "of them from each of a device's -t T GPUs (default 0)",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.engine.message_bytes = parse_number(f, v, 0.0, simgrid::max_workload_bytes);
            }},
    SimFlag{"", "--grad-bytes", "N",
            "gradient bytes per GPU to all-reduce without a model (default 0)",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.engine.grad_bytes = parse_number(f, v, 0.0, simgrid::max_workload_bytes);
            }},
    SimFlag{"", "--nccl-algo", "A",
            "the gradient all-reduce as NCCL_ALGO runs it: ring, tree (a chain\n"
            "in each node, a double binary tree across nodes) or auto (per device\n"
            "the faster by NCCL's tuning model); default: the cluster's, else auto",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.engine.options.nccl_algo = parse_flag_value(f, v, simgrid::parse_nccl_algo);
            }},
};

const std::array what_if_flags = {
    SimFlag{"", "--bw-scale", "X", "multiply every link bandwidth by X (> 0)",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.engine.options.bandwidth_scale = parse_positive(f, v);
            }},
    SimFlag{"", "--lat-scale", "X", "multiply every link latency by X (≥ 0)",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.engine.options.latency_scale = parse_number(f, v, 0.0);
            }},
    SimFlag{"", "--straggler", "G:K", "GPU G (global index) runs K ≥ 1 times slower; repeatable",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.engine.options.stragglers.push_back(parse_straggler(f, v));
            },
            /*repeatable=*/true},
    SimFlag{"", "--json", "", "print one JSON object instead of the table",
            [](SimulateFlags& s, const std::string&, const std::string&) { s.json = true; }},
    SimFlag{"", "--progress", "MODE",
            "on stderr: auto (a redrawn line on a terminal without --json,\n"
            "nothing otherwise), bar (that line), lines (a line every 10 s, for\n"
            "logs), none",
            [](SimulateFlags& s, const std::string& f, const std::string& v) {
                s.progress = parse_progress(f, v);
            }},
};

// The progress callback for `style`: the simulated time against the estimate, the ops done
// and, after two seconds, the time left at the pace so far (a run in full mode at a large
// dp can take minutes: docs/cluster-format.md). None for no progress.
std::function<void(const simgrid::SimProgress&)> progress_printer(sweep::ProgressStyle style,
                                                                  bool json) {
    using sweep::ProgressStyle;
    const bool terminal = ::isatty(STDERR_FILENO);
    if (style == ProgressStyle::none || (style == ProgressStyle::automatic && (json || !terminal)))
        return {};
    const bool lines = style == ProgressStyle::lines;
    using clock = std::chrono::steady_clock;
    // The time left at the pace of the last 10 s: the ops do not all cost alike (the last
    // ones run beside the gradient reductions, whose flows SimGrid settles more slowly), and
    // the pace since the start said "about 1 s left" for the 43 s such a tail took.
    struct Sample {
        clock::time_point when;
        std::size_t ops_done;
    };
    return [lines, started = clock::now(), last_line = clock::time_point(),
            last_note = clock::time_point(),
            recent = std::deque<Sample>{}](const simgrid::SimProgress& at) mutable {
        const clock::time_point now = clock::now();
        // A large collective: SimGrid says nothing until its flows end, which takes long
        // enough to look like a hang. Said as its own line, at most every 10 s.
        if (at.collective_flows > 0) {
            if (now - last_note < std::chrono::seconds(10)) return;
            last_note = now;
            fmt::print(stderr,
                       "{}  simulated {:.4g} of ~{:.4g} s: a data-parallel collective of {} "
                       "flows at once starts; SimGrid settles them with no report until they "
                       "end (docs/cluster-format.md, Limits){}\n",
                       lines ? "" : "\r", at.simulated_time, at.expected_time, at.collective_flows,
                       lines ? "" : "\033[K");
            return;
        }
        recent.push_back({now, at.ops_done});
        while (recent.size() > 2 && now - recent[1].when >= std::chrono::seconds(10))
            recent.pop_front();
        if (lines && now - last_line < std::chrono::seconds(10)) return;
        last_line = now;
        const double elapsed = std::chrono::duration<double>(now - started).count();
        const Sample& from = recent.front();
        const double window = std::chrono::duration<double>(now - from.when).count();
        std::string left;
        if (elapsed >= 2 && at.ops_done > from.ops_done && at.ops_done < at.ops_total && window > 0)
            left = fmt::format(", about {:.0f} s left",
                               window * static_cast<double>(at.ops_total - at.ops_done) /
                                   static_cast<double>(at.ops_done - from.ops_done));
        fmt::print(stderr, "{}  simulated {:.4g} of ~{:.4g} s, {} of {} ops{}{}", lines ? "" : "\r",
                   at.simulated_time, at.expected_time, at.ops_done, at.ops_total, left,
                   lines ? "\n" : "\033[K");
    };
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
    PipelineFlags pipeline(/*layout_without_model=*/true);
    SimulateFlags flags;
    GradReduceFlags grad_reduce;
    viz::VizOutputs viz_outputs;
    std::string html;
    ArgReader reader(args);
    reader.allow_repeats({"--straggler"});
    std::string flag;
    while (reader.next(flag)) {
        if (replay_only_flag(flag)) {
            throw UsageError(flag == "--comm"
                                 ? std::string("--comm is the analytic replay's latency; simulate "
                                               "takes latencies from the cluster (see --lat-scale)")
                                 : fmt::format("{} is an option of the analytic replay (analyze, "
                                               "compare, search, block, render); the cluster "
                                               "simulation runs F&B pairs back to back, hiding "
                                               "nothing",
                                               flag));
        } else if (read_flag(cluster_flags, flag, reader, flags) ||
                   read_grad_reduce_flag(flag, reader, grad_reduce) ||
                   read_flag(what_if_flags, flag, reader, flags) || pipeline.read(flag, reader) ||
                   read_viz_flag(flag, reader, viz_outputs) || read_html_flag(flag, reader, html)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}\ncluster and layout:\n{}what-if:\n{}\n{}\n{}{}", simulate_usage,
                       schedule_flags_help(/*with_replay_options=*/false),
                       flags_help(cluster_flags) + grad_reduce_flags_help(),
                       flags_help(what_if_flags), model_flags_help(), viz_flags_help,
                       html_flag_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim simulate --help')", quote_arg(flag)));
        }
    }
    analysis::SimGridEngine& engine = flags.engine;
    const bool json = flags.json;
    if (flags.cluster_name.empty())
        throw UsageError("missing --cluster NAME|FILE (see 'pipesim list' for presets)");
    pipeline.finish();
    // The cluster file too: SimGrid runs before any output is written.
    std::vector<std::string> inputs = pipeline.input_files();
    inputs.push_back(flags.cluster_name);
    const bool report = check_run_outputs(viz_outputs, json, pipeline.save_file(), inputs);
    check_html_flag(html, viz_outputs, pipeline.save_file(), inputs);
    pipeline.check_save(viz_outputs.format_without_extension);
    check_picture_ops(pipeline.spec(), !viz_outputs.timeline_picture.empty() || !html.empty(),
                      viz_outputs.picture.max_ops);

    const analysis::PipelineSpec& spec = pipeline.spec();
    const int cp = spec.costs.model ? spec.costs.model->workload.cp : 1;
    check_grad_reduce_flag(grad_reduce, spec);
    // Without a model the gradients are --grad-bytes: none to move, and the flag changed nothing.
    if (!grad_reduce.overlap && !spec.costs.model && !(engine.grad_bytes > 0))
        throw UsageError(
            fmt::format("{} moves the gradient reduction: give --grad-bytes N (or "
                        "--model, --gpu, --mb); without them there is none",
                        grad_reduce.given));
    engine.options.overlap_grad_reduce = grad_reduce.overlap;
    engine.options.overlap_param_gather = grad_reduce.overlap_param_gather;
    engine.options.post_validation = grad_reduce.post_validation;
    if (!viz_outputs.trace.empty())
        engine.output_bytes_per_op = viz::chrome_trace_bytes_per_op(viz_outputs.trace_options);
    engine.output_bytes_per_op += pipeline.save_bytes_per_op();
    engine.cluster = analysis::load_checked_cluster(flags.cluster_name);
    analysis::Pipeline prepared = analysis::prepare(spec, engine);
    simgrid::load_engine();  // before the report starts: one that cannot load is exit code 3
    // The saved schedule's text before the run: a schedule its format cannot hold is refused
    // before SimGrid runs; the file is written once everything else has worked.
    const auto saved =
        pipeline.prepare_save(prepared.schedule, viz_outputs.format_without_extension);
    const simgrid::ClusterSpec& cluster = engine.cluster;
    engine.options.progress = progress_printer(flags.progress, json);
    const bool bar = engine.options.progress && flags.progress != sweep::ProgressStyle::lines;
    // What the simulation would refuse is refused before the report starts: a layout the
    // cluster cannot hold, a straggler's GPU, a scaled link out of bounds, passes too short.
    analysis::check_cluster_run(prepared, engine);
    // The report's first line, shown while SimGrid runs; on stdout, so that stderr holds only
    // warnings, errors and the terminal's progress line.
    if (!json && report) {
        // Replicas and ops apart: symmetric mode runs replica 0's ops alone (the mode line).
        const int gpus = spec.dp * prepared.schedule.devices * spec.tp * cp;
        fmt::print("simulating {}{} ops on {} GPU{} of '{}' with SimGrid...\n",
                   spec.dp > 1 ? fmt::format("{} replicas × ", spec.dp) : std::string(),
                   prepared.schedule.op_count(), gpus, gpus == 1 ? "" : "s", cluster.name);
        std::fflush(stdout);
    }
    const analysis::Analysis result = analysis::run_with_baseline(std::move(prepared), engine);
    if (bar) fmt::print(stderr, "\r\033[K");
    // The outputs' phases on a terminal: drawing a large timeline takes seconds.
    std::optional<PhaseLine> phases(
        std::in_place, "simulate", spec, true,
        viz_outputs.any() || !html.empty() || !pipeline.save_file().empty());
    describe_run(viz_outputs.picture, result);
    const analysis::ClusterRun& run = *result.cluster;
    const simgrid::Layout& layout = run.layout;
    // The pictures first: they may still refuse (a dependency graph too large to draw).
    const std::string html_text =
        html.empty() ? std::string()
                     : single_html("simulate", command_line("simulate", args), spec, result);
    const std::string gantt = viz::write_outputs(result.timeline, result.memory, viz_outputs);
    if (!html.empty()) fileio::write_file_atomically(html, html_text);
    phases.reset();
    PipelineFlags::write_save(saved, "simulate");
    // Warnings once every output is written: an output that fails is then the one line.
    print_warnings(result, "simulate");
    if (!report) return 0;  // a file went to standard output

    if (json) {
        fmt::print("{}\n", analysis::json_text(analysis_json(result, spec), 2));
    } else {
        fmt::print("{}", analysis_table(result, spec));
        fmt::print("\n  {:<22}{}{}, dp={} × pp={} × tp={}{} = {} GPUs, order {}\n", "cluster",
                   run.cluster,
                   run.description.empty() ? std::string() : " (" + run.description + ")",
                   layout.dp, layout.pp, layout.tp,
                   layout.cp > 1 ? fmt::format(" × cp={}", layout.cp) : std::string(),
                   layout.gpus(), simgrid::layout_order_string(layout.order));
        // With a sharded optimizer the reduction is a reduce-scatter, followed by the
        // parameter all-gather unless that runs beside the first forward.
        const int sharding = spec.costs.model ? spec.costs.model->optimizer.sharding() : 0;
        const char* reduction = sharding == 0 ? "gradient all-reduce"
                                : sharding < 3 && !grad_reduce.overlap_param_gather
                                    ? "gradient reduce-scatter and parameter all-gather"
                                    : "gradient reduce-scatter";
        // A slower replica (a straggler's) holds every replica's reduction back: named, as
        // the table above is replica 0's.
        const std::vector<double>& makespans = run.result.replica_makespan;
        const auto slowest = static_cast<std::size_t>(
            std::max_element(makespans.begin(), makespans.end()) - makespans.begin());
        const std::string slower =
            makespans[slowest] > makespans.front()
                ? fmt::format("; the slowest, replica {}'s: {:.6g} s", slowest, makespans[slowest])
                : std::string();
        fmt::print("  {:<22}{:.6g} s ({}replica 0's pipeline: {:.6g} s{}; {} {:.6g} s{})\n",
                   "iteration time", result.iteration_time,
                   result.post_validation ? "the post-validation period; " : "", makespans.front(),
                   slower, reduction, run.result.grad_reduce_time,
                   run.result.grad_reduce_algorithms.empty()
                       ? std::string()
                       : ", " + analysis::grad_reduce_algorithm(run.result));
        fmt::print(
            "  {:<22}{}{}\n", "mode", to_string(run.result.mode),
            run.result.mode == simgrid::SimMode::full
                ? " (" + run.result.full_reason + ")"
                : fmt::format(
                      " (replica 0's {} ops simulated, with the collectives of all {} replicas)",
                      run.result.ops_simulated, layout.dp));
    }
    if (!gantt.empty()) fmt::print("\n{}", gantt);
    return 0;
}

}  // namespace pipesim::cli
