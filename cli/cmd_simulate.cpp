// pipesim simulate: a schedule on the SimGrid model of a GPU cluster.
#include <cstdio>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "sim/simgrid/simulate_job.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* simulate_usage =
    R"(usage: pipesim simulate -s NAME -p P -m M --cluster NAME|FILE [options]

Times are seconds: give --costs in seconds, or a model (--model, --gpu, --mb).

)";

constexpr const char* simulate_flags_help = R"(cluster and layout:
  --cluster NAME|NAME:N|FILE   a preset (see 'pipesim list'; :N resizes it to N nodes) or a
                        cluster JSON file (docs/cluster-format.md)
  --dp D                data-parallel replicas (default 1)
  -t, --tp T            tensor-parallel GPUs per pipeline device, inside a node (default 1)
  --layout-order O      rank order, fastest-varying first (default tp,dp,pp)
  --message-bytes N     bytes between stages per microbatch without a model (default 0)
  --grad-bytes N        gradient bytes per device to all-reduce without a model (default 0)
  --no-overlap-grad-reduce   all-reduce gradients only after the whole pipeline
what-if:
  --bw-scale X          multiply every link bandwidth by X
  --lat-scale X         multiply every link latency by X
  --straggler G:K       GPU G (global index) runs K times slower; repeatable
  --json                print one JSON object instead of the table
)";

std::pair<int, double> parse_straggler(const std::string& flag, const std::string& text) {
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        throw UsageError(fmt::format("{}: expected GPU:FACTOR, got '{}'", flag, text));
    const int gpu = parse_int(flag, text.substr(0, colon), 0, 1 << 24);
    const double factor = parse_number(flag, text.substr(colon + 1), 0.0);
    if (factor <= 0) throw UsageError(fmt::format("{}: factor must be > 0, got '{}'", flag, text));
    return {gpu, factor};
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
    PipelineFlags pipeline;
    SimOptions sim;
    Layout layout;
    std::string cluster_name;
    double message_bytes = 0, grad_bytes = 0;
    bool json = false;
    viz::VizOutputs viz_outputs;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "--cluster") {
            cluster_name = reader.value(flag);
        } else if (flag == "--dp") {
            layout.dp = parse_int(flag, reader.value(flag), 1, 1 << 16);
        } else if (flag == "-t" || flag == "--tp") {
            layout.tp = parse_int(flag, reader.value(flag), 1, 64);
        } else if (flag == "--layout-order") {
            layout.order = parse_layout_order(reader.value(flag));
        } else if (flag == "--message-bytes") {
            message_bytes = parse_number(flag, reader.value(flag), 0.0);
        } else if (flag == "--grad-bytes") {
            grad_bytes = parse_number(flag, reader.value(flag), 0.0);
        } else if (flag == "--no-overlap-grad-reduce") {
            sim.overlap_grad_reduce = false;
        } else if (flag == "--bw-scale") {
            sim.bandwidth_scale = parse_number(flag, reader.value(flag), 0.0);
            if (sim.bandwidth_scale <= 0) throw UsageError(fmt::format("{}: must be > 0", flag));
        } else if (flag == "--lat-scale") {
            sim.latency_scale = parse_number(flag, reader.value(flag), 0.0);
        } else if (flag == "--straggler") {
            sim.stragglers.push_back(parse_straggler(flag, reader.value(flag)));
        } else if (flag == "--json") {
            json = true;
        } else if (flag == "--comm") {
            throw UsageError(
                "--comm is the analytic replay's latency; simulate takes latencies "
                "from the cluster (see --lat-scale)");
        } else if (pipeline.read(flag, reader)) {
        } else if (read_viz_flag(flag, reader, viz_outputs)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}\n{}\n{}\n{}", simulate_usage, schedule_flags_help, simulate_flags_help,
                       model_flags_help, viz_flags_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option '{}' (see 'pipesim simulate --help')", flag));
        }
    }
    if (cluster_name.empty())
        throw UsageError("missing --cluster NAME|FILE (see 'pipesim list' for presets)");
    pipeline.finish();
    if (json && viz_outputs.gantt)
        throw UsageError("--gantt prints text; it cannot go with --json");
    viz::check_outputs(viz_outputs);

    AnalyzeOptions& options = pipeline.options();
    if (options.model) {  // the layout's TP and DP are the model's (as run_simulate_job sets)
        options.model->workload.tp = layout.tp;
        options.model->optimizer.data_parallel = layout.dp;
    }
    SimulateJob job;
    job.schedule = pipeline.schedule();
    job.options = options;
    job.cluster = load_cluster(cluster_name);
    job.layout = layout;
    job.message_bytes = message_bytes;
    job.grad_bytes = grad_bytes;
    job.sim = sim;
    pipeline.save(job.schedule);
    const ClusterSpec& cluster = job.cluster;
    if (!json)
        fmt::print(stderr, "simulating {} ops on {} GPUs of '{}' with SimGrid...\n",
                   job.schedule.op_count() * static_cast<std::size_t>(layout.dp),
                   layout.dp * job.schedule.devices * layout.tp, cluster.name);
    const SimulateRun run = run_simulate_job(job);
    const Analysis& analysis = run.analysis;
    const SimResult& result = run.result;
    layout = run.layout;
    const std::string gantt = viz::write_outputs(analysis.timeline, run.memory, viz_outputs);

    if (json) {
        nlohmann::ordered_json j = analysis_json(analysis, options);
        j["engine"] = "simgrid";
        j["cluster"] = cluster.name;
        j["dp"] = layout.dp;
        j["tp"] = layout.tp;
        j["gpus"] = layout.gpus();
        j["layout_order"] = layout_order_string(layout.order);
        j["iteration_time"] = result.iteration_time;
        j["grad_reduce_time"] = result.grad_reduce_time;
        j["replica_makespan"] = result.replica_makespan;
        j["transfers"] = result.timeline.transfers.size();
        fmt::print("{}\n", j.dump(2));
    } else {
        fmt::print("{}", analysis_table(analysis, options));
        fmt::print("\n  {:<22}{} ({}), dp={} × pp={} × tp={} = {} GPUs, order {}\n", "cluster",
                   cluster.name, cluster.description, layout.dp, layout.pp, layout.tp,
                   layout.gpus(), layout_order_string(layout.order));
        fmt::print(
            "  {:<22}{:.6g} s (replica 0's pipeline: {:.6g} s; gradient all-reduce {:.6g} s)\n",
            "iteration time", result.iteration_time, result.replica_makespan.front(),
            result.grad_reduce_time);
    }
    if (!gantt.empty()) fmt::print("\n{}", gantt);
    return 0;
}

}  // namespace pipesim::cli
