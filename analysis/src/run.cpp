#include "analysis/run.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "analysis/cluster_workload.hpp"
#include "analysis/device_cap.hpp"
#include "analysis/grad_reduce.hpp"
#include "analysis/phases.hpp"
#include "schedules/placement.hpp"
#include "schedules/validate.hpp"
#include "sim/memory_budget.hpp"
#include "sim/replay.hpp"
#include "sim/simgrid/cluster.hpp"

namespace pipesim::analysis {

StageCosts stage_costs_from_passes(const std::vector<PassCosts>& passes, int devices, int chunks,
                                   int split) {
    const auto stages = static_cast<std::size_t>(devices * chunks);
    if (passes.size() == 1)
        return uniform_stage_costs(devices, chunks, passes[0].forward, passes[0].backward_input,
                                   passes[0].backward_weight, split);
    if (passes.size() != stages)
        throw std::invalid_argument(
            fmt::format("costs list {} triples; give one (a full stage) or p·v = {} (one per "
                        "virtual stage)",
                        passes.size(), stages));
    StageCosts costs;
    for (const PassCosts& t : passes) {
        costs.forward.push_back(t.forward);
        costs.backward_input.push_back(t.backward_input);
        costs.backward_weight.push_back(t.backward_weight);
    }
    check_stage_costs(costs, static_cast<int>(stages));
    return costs;
}

namespace {

// The shortest pass the cluster simulation takes, in seconds (run_simgrid).
constexpr double min_simulated_pass = 1e-6;

// The most GPUs a layout may have (D·P·T·C): far above any cluster, far below 2³¹.
constexpr double max_layout_gpus = 1 << 24;

constexpr const char* no_time =
    "every pass takes no time, so the iteration does too and its throughput is undefined: "
    "give pass times > 0";

// The model spec as run: its TP and DP degrees are the spec's; the optimizer is sharded over
// the dp·C GPUs that hold the same weights (Megatron-LM's distributed optimizer spans the
// context-parallel ranks too).
ModelSpec model_as_run(const PipelineSpec& spec) {
    ModelSpec model = *spec.costs.model;
    model.workload.tp = spec.tp;
    model.optimizer.data_parallel = spec.dp * std::max(model.workload.cp, 1);
    return model;
}

// Whether some device of `stage_device` holds more than one stage.
bool devices_share(const std::vector<int>& stage_device) {
    std::vector<bool> seen;
    for (int d : stage_device) {
        const auto i = static_cast<std::size_t>(d);
        if (i >= seen.size()) seen.resize(i + 1, false);
        if (seen[i]) return true;
        seen[i] = true;
    }
    return false;
}

bool same_split(const models::PipelinePlan& a, const models::PipelinePlan& b) {
    return std::equal(a.stages.begin(), a.stages.end(), b.stages.begin(), b.stages.end(),
                      [](const auto& x, const auto& y) { return x.layers == y.layers; });
}

// What the analytic replay of a split gives: the makespan, and the most memory a device
// holds (its stages' weights, gradients and optimizer state and its peak activations).
struct SplitOutcome {
    double makespan = std::numeric_limits<double>::infinity();
    double fullest_device_bytes = std::numeric_limits<double>::infinity();

    // A shorter makespan wins; at the same one (to rounding: the middle stages' orders often
    // tie, their sums added in another order) less memory on the fullest device does. Without
    // that, the order a tie left decided where the heavier stage sat: llama3-8b with 1F1B at
    // p = 16 (`-t 8`, h100-sxm) put its three-layer stage second with `--recompute selective`
    // and ninth without, and the selective run's peak rose from 6.3 to 7.3 GiB although every
    // placement from the second to the ninth ran as fast.
    bool beats(const SplitOutcome& other) const {
        constexpr double rounding = 1e-9;  // relative: far above a sum's reordering, far below
                                           // any difference a schedule makes
        if (makespan < other.makespan * (1 - rounding)) return true;
        if (makespan > other.makespan * (1 + rounding)) return false;
        return fullest_device_bytes < other.fullest_device_bytes;
    }
};

// The analytic replay of `schedule` with `plan`'s pass times, as run_analytic replays it but
// recording nothing; an infinite makespan for a schedule that cannot run (the run then says
// why).
SplitOutcome planned_outcome(const Schedule& schedule, const models::PipelinePlan& plan,
                             const PipelineSpec& spec, bool validated) {
    sim::ReplayOptions options;
    options.comm_latency = spec.comm_latency;
    if (spec.all_to_all > 0)
        options.all_to_all.assign(static_cast<std::size_t>(schedule.stages()),
                                  spec.all_to_all / schedule.microbatch_chunks());
    options.fb_overlap = spec.fb_overlap;
    options.record_transfers = false;
    options.record_ops = false;
    options.validated = validated;
    try {
        const Metrics metrics = sim::replay_with_metrics(schedule, stage_costs_from_plan(plan),
                                                         memory_model_from_plan(plan), options)
                                    .metrics;
        std::vector<double> device_bytes(static_cast<std::size_t>(schedule.devices), 0.0);
        for (std::size_t s = 0; s < plan.stages.size(); ++s)
            device_bytes[static_cast<std::size_t>(schedule.stage_device[s])] +=
                plan.stages[s].static_bytes;
        for (std::size_t d = 0; d < device_bytes.size(); ++d)
            device_bytes[d] += metrics.devices[d].peak_activation;
        return {metrics.makespan, *std::max_element(device_bytes.begin(), device_bytes.end())};
    } catch (const InvalidSchedule&) {
        return {};
    }
}

// The stage split's middle stages (between the embedding's and the head's, whose counts
// stay) in other orders. The model's layers are equal, so every order has the same slowest
// stage and the same evenness, and the partitioner's pick among them is a tie that rounding
// breaks: on a GPU 2 % faster, llama3-8b's five-layer stages moved from the second chunk to the
// first and interleaved 1F1B ran 2.1 % longer. Every distinct order where there are at most
// `max_orders` of them (llama3-8b's 4,4,4,4,5,5 in the middle: 15) and the replays stay within
// `max_op_replays` ops (an op of a schedule planned anew for each order counts `op_cost`
// replayed ones); else the heavier last and the heavier first, if those two stay within it.
// The split's own order is left out.
std::vector<std::vector<int>> rearranged_splits(const std::vector<int>& counts,
                                                std::size_t schedule_ops, double op_cost = 1) {
    constexpr std::size_t max_orders = 64;
    constexpr double max_op_replays = 5e7;  // a second or two of replays
    std::vector<std::vector<int>> orders;
    const double replays = static_cast<double>(schedule_ops) * op_cost;
    if (counts.size() < 4 || 2 * replays > max_op_replays) return orders;
    std::vector<int> order = counts;
    std::sort(order.begin() + 1, order.end() - 1);
    std::vector<std::vector<int>> all;
    do {
        all.push_back(order);
    } while (all.size() <= max_orders && std::next_permutation(order.begin() + 1, order.end() - 1));
    if (all.size() > max_orders || static_cast<double>(all.size()) * replays > max_op_replays) {
        all.assign(1, all.front());  // the heavier last
        std::vector<int> heavier_first = counts;
        std::sort(heavier_first.begin() + 1, heavier_first.end() - 1, std::greater<>());
        all.push_back(std::move(heavier_first));
    }
    for (std::vector<int>& candidate : all)
        if (candidate != counts &&
            std::find(orders.begin(), orders.end(), candidate) == orders.end())
            orders.push_back(std::move(candidate));
    return orders;
}

// The layers of each stage of one copy of the model: every stage's, or where microbatches
// pass through stage ranges (DualPipe's two copies), the first range's, whose split the others
// repeat.
std::vector<int> copy_split(const models::PipelinePlan& plan, const Schedule& schedule) {
    std::size_t first = 0, last = plan.stages.size();
    if (!schedule.microbatch_stages.empty()) {
        first = static_cast<std::size_t>(schedule.microbatch_stages.front().first);
        last = static_cast<std::size_t>(schedule.microbatch_stages.front().last) + 1;
    }
    std::vector<int> counts;
    for (std::size_t s = first; s < last; ++s)
        counts.push_back(plan.stages[s].layers);
    return counts;
}

// The model as run, its layers split as `counts` says instead of as the partitioner would.
ModelSpec with_split(const PipelineSpec& spec, std::vector<int> counts) {
    ModelSpec model = model_as_run(spec);
    model.partition.stage_layers = std::move(counts);
    return model;
}

// The splits of the layers worth replaying: the one that balances the stages (the slowest
// stage bounds the warm-up and the drain), the same in other orders of its middle stages
// (rearranged_splits: where the heavier stages sit moves the fill and drain of any schedule,
// 1F1B's too), and where a device holds several stages the one that balances the devices'
// sums (the slowest device bounds the steady state). Any can be the faster, so each is
// replayed and the fastest kept; at the same makespan the one whose fullest device holds
// less, and the stage split on a tie of both.
ModelAnalysis plan_for_schedule(const PipelineSpec& spec, const Schedule& schedule,
                                bool validated) {
    ModelAnalysis by_stage = plan_model(model_as_run(spec), schedule);
    std::vector<ModelAnalysis> others;
    for (std::vector<int>& order :
         rearranged_splits(copy_split(by_stage.plan, schedule), schedule.op_count()))
        others.push_back(plan_model(with_split(spec, std::move(order)), schedule));
    if (schedule.microbatch_stages.empty() && devices_share(schedule.stage_device))
        others.push_back(plan_model(model_as_run(spec), schedule.stages(), schedule.stage_device));
    ModelAnalysis best = std::move(by_stage);
    SplitOutcome best_outcome = planned_outcome(schedule, best.plan, spec, validated);
    for (ModelAnalysis& other : others) {
        if (same_split(other.plan, best.plan)) continue;
        const SplitOutcome outcome = planned_outcome(schedule, other.plan, spec, validated);
        if (outcome.beats(best_outcome)) {
            best_outcome = outcome;
            best = std::move(other);
        }
    }
    return best;
}

// Costs and memory of `pipeline.schedule` from the plan (planning it now unless done) or
// from the unit triples.
void derive_costs(Pipeline& pipeline) {
    const PipelineSpec& spec = pipeline.spec;
    const Schedule& schedule = pipeline.schedule;
    if (spec.costs.model) {
        if (!pipeline.model) pipeline.model = plan_for_schedule(spec, schedule, pipeline.validated);
        pipeline.costs = stage_costs_from_plan(pipeline.model->plan);
        pipeline.memory = memory_model_from_plan(pipeline.model->plan);
    } else {
        // A full stage is the chunks one microbatch passes through on a device: all v, or
        // one for DualPipe (each chunk a full stage of one of the two model copies).
        const int split = schedule.microbatch_chunks();
        pipeline.costs =
            stage_costs_from_passes(spec.costs.passes, schedule.devices, schedule.chunks, split);
        pipeline.memory =
            unit_memory_model(schedule.devices, schedule.chunks, spec.costs.mem_w_ratio, split);
    }
}

// Generates a schedule whose order depends on the pass times: its shape is known before it
// is generated (p·v stages, every microbatch through all of them: the registry's contract
// for such generators), so the costs are derived first. With a model whose layers can be
// split by stage or by device (plan_for_schedule), it is planned with each and the faster
// kept. The split it then runs with is chosen anew for the order kept (derive_costs), from the
// same splits: an order planned with one split can run faster with another (V-Min at p 4, m 5,
// llama3-8b, a100-80gb, `-t 4 --mb 2`: 2.188 s with the split it was planned with, 2.165 s and
// 0.4 GiB less on its fullest device with another), and a schedule handed over as a file is
// split that way, so `search`'s registered V-Min and `analyze -s v-min` are one run.
Schedule generate_with_costs(const PipelineSpec& spec, const ScheduleGenerator& generator,
                             GeneratedCheck check) {
    const int p = spec.generator.devices;
    const int v = spec.generator.chunks > 0 ? spec.generator.chunks : generator.default_chunks;
    // Such generators place one stage per device (v = 1) or two in a V (checked below).
    const std::vector<int> stage_device = v == 1 ? looped_placement(p, 1) : vshape_placement(p, v);
    const auto generate = [&](StageCosts costs, double w_share) {
        GeneratorOptions planned = spec.generator;
        planned.planning = PlanningCosts{std::move(costs), spec.comm_latency, w_share};
        Schedule schedule = generate_schedule(spec.schedule, planned, check);
        if (schedule.stages() != p * v || !schedule.microbatch_stages.empty())
            throw std::logic_error(
                fmt::format("{} plans with pass times but its schedule is not p·v stages for every "
                            "microbatch",
                            spec.schedule));
        if (schedule.stage_device != stage_device)
            throw std::logic_error(fmt::format(
                "{} plans with pass times but does not place its stages one per device or in "
                "a V",
                spec.schedule));
        return schedule;
    };
    if (!spec.costs.model)
        return generate(stage_costs_from_passes(spec.costs.passes, p, v), spec.costs.mem_w_ratio);
    const auto generate_for = [&](const ModelAnalysis& model) {
        return generate(stage_costs_from_plan(model.plan),
                        largest_w_share(memory_model_from_plan(model.plan)));
    };
    ModelAnalysis by_stage = plan_model(model_as_run(spec), p * v);
    Schedule schedule = generate_for(by_stage);
    // The stage split's middle stages in other orders, each planned anew (rearranged_splits):
    // without them a GPU 2 % faster lengthened V-Min by up to 3 % and ZB-2P by up to 6 %
    // (llama3-8b, 0.8–1.6 times an A100's or H100's peak), as the partitioner's tie moved; with
    // the heavier stages last and first alone, V-Min still by up to 1.5 %. A planned op costs
    // about 1,000 replayed ones: ZB-V plans llama3-8b's 768 ops at p = 8, m = 16 in 35 ms,
    // 46 µs an op, where 1F1B's replay of a million ops takes 0.14 s.
    constexpr double planned_op_cost = 1000;
    std::vector<std::vector<int>> orders = rearranged_splits(copy_split(by_stage.plan, schedule),
                                                             schedule.op_count(), planned_op_cost);
    SplitOutcome best =
        orders.empty() ? SplitOutcome{} : planned_outcome(schedule, by_stage.plan, spec, true);
    for (std::vector<int>& order : orders) {
        ModelAnalysis other = plan_model(with_split(spec, std::move(order)), p * v);
        Schedule candidate = generate_for(other);
        const SplitOutcome outcome = planned_outcome(candidate, other.plan, spec, true);
        if (outcome.beats(best)) {
            best = outcome;
            by_stage = std::move(other);
            schedule = std::move(candidate);
        }
    }
    if (devices_share(stage_device)) {
        ModelAnalysis by_device = plan_model(model_as_run(spec), p * v, stage_device);
        if (!same_split(by_stage.plan, by_device.plan)) {
            const SplitOutcome stage_split = planned_outcome(schedule, by_stage.plan, spec, true);
            // A large schedule (12 bytes per op) is not held twice: the memory check before
            // the run counted one. It is generated again if it stays the faster.
            const bool large = static_cast<double>(schedule.op_count()) > 1e7;
            if (large) schedule = Schedule{};
            Schedule other = generate_for(by_device);
            if (planned_outcome(other, by_device.plan, spec, true).beats(stage_split)) return other;
            if (large) {
                other = Schedule{};
                schedule = generate_for(by_stage);
            }
        }
    }
    return schedule;
}

// Shapes the schedules run but Megatron-LM refuses. Its interleaved schedule
// (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving)
// takes microbatch groups of g (microbatch_group_size_per_vp_stage, default p; before November
// 2024 always p) with p ≤ g ≤ m, and m mod g either 0 or at least p: a last group of fewer than
// p would add bubbles. Without p2p overlap its arguments.py asks for p > 2, so that no batched
// exchange holds two sends between the same two ranks.
std::vector<std::string> shape_warnings(const PipelineSpec& spec) {
    std::vector<std::string> warnings;
    const ScheduleGenerator* generator = find_generator(spec.schedule);
    if (spec.given || !generator || !generator->takes_group_size) return warnings;
    const GeneratorOptions& g = spec.generator;
    const int p = g.devices, m = g.microbatches;
    const int group = g.group_size > 0 ? g.group_size : p;
    const std::string refused = "Megatron-LM refuses this shape";
    if (group < p)
        warnings.push_back(fmt::format(
            "{} with microbatch groups of {}, fewer than p = {}: {} (its group size runs "
            "from p to m)",
            spec.schedule, group, p, refused));
    else if (group > m)
        warnings.push_back(fmt::format(
            "{} with a group size of {}, more than m = {}: {} (its group size runs from p "
            "to m)",
            spec.schedule, group, m, refused));
    else if (m % group != 0 && m % group < p)
        warnings.push_back(fmt::format(
            "{} with m = {} in groups of {}: the last group holds {}, fewer than p = {}, and "
            "idles more; {} (m not a multiple of the group size needs a last group of at "
            "least p)",
            spec.schedule, m, group, m % group, p, refused));
    if (spec.step_exchange && p <= 2)
        warnings.push_back(fmt::format(
            "--no-overlap-p2p-communication with p = {}: {} (without p2p overlap it needs "
            "p > 2, so that no batched exchange sends twice between the same two devices)",
            p, refused));
    return warnings;
}

void check_spec(const PipelineSpec& spec) {
    if (spec.step_exchange) {
        if (spec.given || spec.schedule != "interleaved-1f1b")
            throw std::invalid_argument(fmt::format(
                "--no-overlap-p2p-communication applies to interleaved-1f1b, not to {}: other "
                "schedules send each output as its pass ends",
                spec.given ? "a schedule file" : spec.schedule));
        // pipesim's model of that exchange (pair_steps) pairs each step's F with its
        // backward. Below 2p microbatches, or off the group, a step's pair would wait for an
        // input that only the device's next step produces; Megatron-LM's own code runs some
        // of those shapes (with m = p, every forward first), which pipesim does not model.
        const GeneratorOptions& g = spec.generator;
        const int group = g.group_size > 0 ? g.group_size : g.devices;
        if (g.microbatches % group != 0 || g.microbatches < 2 * g.devices)
            throw std::invalid_argument(fmt::format(
                "--no-overlap-p2p-communication needs m a multiple of the group size {} and at "
                "least 2p = {}, the shapes whose steps pipesim can pair; got m = {}",
                group, 2 * g.devices, g.microbatches));
        if (spec.all_to_all > 0 || spec.fb_overlap > 0)
            throw std::invalid_argument(
                "--no-overlap-p2p-communication runs each step's F and backward back to back: "
                "--a2a and --overlap-fb do not apply");
    }
    if (spec.dp < 1) throw std::invalid_argument(fmt::format("dp must be ≥ 1, got {}", spec.dp));
    if (spec.tp < 1) throw std::invalid_argument(fmt::format("tp must be ≥ 1, got {}", spec.tp));
    // Each bound alone let their product pass 2³¹ GPUs, which counted as -2147483648 (and a
    // negative MFU).
    const int devices = spec.given ? spec.given->devices : spec.generator.devices;
    const int cp = spec.costs.model ? spec.costs.model->workload.cp : 1;
    if (const double gpus = static_cast<double>(spec.dp) * devices * spec.tp * cp;
        gpus > max_layout_gpus)
        throw std::invalid_argument(fmt::format(
            "the layout's D·P·T·C = {}·{}·{}·{} = {:.0f} GPUs is more than the {} a layout may "
            "have",
            spec.dp, devices, spec.tp, cp, gpus, max_layout_gpus));
    if (!(spec.costs.mem_w_ratio >= 0 && spec.costs.mem_w_ratio <= 1))
        throw std::invalid_argument(
            fmt::format("the share of activations held until W must be in 0..1, got {}",
                        spec.costs.mem_w_ratio));
    // Given pass times all 0: refused here for every engine (a cluster's latencies would
    // otherwise give the iteration a length, and an efficiency of 0).
    if (!spec.costs.model && !(spec.all_to_all > 0) &&
        std::all_of(spec.costs.passes.begin(), spec.costs.passes.end(), [](const PassCosts& c) {
            return c.forward == 0 && c.backward_input == 0 && c.backward_weight == 0;
        }))
        throw std::invalid_argument(no_time);
}

}  // namespace

double microbatch_throughput(const Analysis& a) {
    return a.iteration_time > 0 ? a.schedule.microbatches / a.iteration_time : a.metrics.throughput;
}

const char* time_field(bool model, bool post_validation) {
    return model ? "iteration_time" : post_validation ? "period" : "makespan";
}

namespace {

// With optimizer post-validation, per device: from its first op's start until it is done with
// the iteration, which is its last op's end or, if later, `done_at[d]` (its gradient
// reduction's end; absolute), plus `added[d]` (a parameter gather it exposes before its next
// first forward). Either vector may be empty (nothing of the kind).
std::vector<double> device_windows(const Metrics& metrics, const std::vector<double>& done_at,
                                   const std::vector<double>& added) {
    std::vector<double> windows(metrics.devices.size(), 0.0);
    for (std::size_t d = 0; d < windows.size(); ++d) {
        const DeviceMetrics& dm = metrics.devices[d];
        const double done = std::max(dm.last_end(), d < done_at.size() ? done_at[d] : 0.0);
        windows[d] = done - dm.first_start + (d < added.size() ? added[d] : 0.0);
    }
    return windows;
}

// Model figures of a run with metrics whose iteration took `iteration_time` (< 0: the
// makespan). With `windows` (optimizer post-validation, device_windows()) the iterations
// repeat with the longest window as their period instead. Throws std::invalid_argument when
// the run took no time or an infinite one: its rates would be meaningless.
void finish(Analysis& a, double iteration_time, const std::vector<double>* windows = nullptr) {
    a.single_iteration_time = iteration_time < 0 ? a.metrics.makespan : iteration_time;
    a.post_validation = windows != nullptr;
    a.iteration_time = a.single_iteration_time;
    if (windows != nullptr && !windows->empty()) {
        a.iteration_time = *std::max_element(windows->begin(), windows->end());
        a.device_windows = *windows;
    }
    if (!std::isfinite(a.iteration_time))
        throw std::invalid_argument(fmt::format(
            "the iteration time is not a finite number ({}): pass times or latencies too large",
            a.iteration_time));
    if (!(a.iteration_time > 0)) throw std::invalid_argument(no_time);
    if (!a.model) return;
    summarize_model(*a.model, a.schedule, a.metrics, a.dp, a.iteration_time,
                    windows != nullptr ? *windows : std::vector<double>{},
                    a.cluster ? a.cluster->result.mean_gpu_speed : 1.0);
    // Model FLOPs count the whole s×s attention; a causal fused kernel computes about half of
    // it, so with rates near the peak and long sequences the ratio passes 1.
    if (a.model->mfu > 1)
        a.warnings.push_back(fmt::format(
            "MFU {:.1f} % is above 100 %: model FLOPs count the whole s×s attention "
            "(Megatron-LM's convention, docs/models.md), while a causal fused attention computes "
            "about half of it; with the GPU's rates near its peak the ratio passes 1",
            100 * a.model->mfu));
}

// The makespan, or with dp·C > 1 the end of the last gradient reduction if later (the closed
// form of grad_reduce.hpp on the bytes the SimGrid engine reduces); sets a.grad_reduce_time.
// With post-validation, also each device's window (device_windows()): its reduction starts
// at its own last op's end when not overlapped, as no device waits for the whole pipeline.
double reduced_iteration_time(Analysis& a, const PipelineSpec& spec, const AnalyticEngine& engine,
                              const sim::ReplayResult& replayed, std::vector<double>& windows) {
    const ModelAnalysis& model = *a.model;
    const int ranks = spec.dp * std::max(model.workload.cp, 1);
    if (ranks < 2) return -1;
    const GradientBytes bytes =
        gradient_bytes(model.plan, a.schedule, spec.costs.model->optimizer.sharding());
    const GradientReduction r = gradient_reduction(
        model.gpu, gradient_rail(spec.tp, ranks), bytes.gradient, bytes.param_gather,
        replayed.last_gradient_start, a.metrics.makespan, engine.overlap_grad_reduce,
        replayed.first_forward_end, engine.overlap_param_gather);
    a.grad_reduce_time = r.longest;
    // The closed form has no link latency. A ring of n members takes 2(n − 1) steps (an
    // all-reduce, or a reduce-scatter and an all-gather), each waiting for the network's
    // latency besides: a few microseconds on InfiniBand or RoCE, negligible until n is in the
    // thousands. Said where the cluster presets' NIC latency a step would add a tenth.
    const Rail rail = gradient_rail(spec.tp, ranks);
    const double latency = 2.0 * (rail.members - 1) * simgrid::preset_nic_latency;
    if (rail.members > rail.per_node && latency > 0.1 * r.longest)
        a.warnings.push_back(fmt::format(
            "the gradient reduction's ring of {} GPUs is timed without link latency ({:.3g} "
            "s): its {} steps at {:g} µs each would add {:.3g} s; simulate --cluster times "
            "latencies, and NCCL's trees (--nccl-algo tree)",
            rail.members, r.longest, 2 * (rail.members - 1), simgrid::preset_nic_latency * 1e6,
            latency));
    a.param_gather_time = r.gather_seconds;
    a.param_gather_exposed = r.gather_exposed;
    // Where device d's reduction starts: as gradient_reduction() times it, or with
    // post-validation at the device's own last op, as no device waits for the whole pipeline.
    const auto reduction_start = [&](std::size_t d) {
        return engine.overlap_grad_reduce ? replayed.last_gradient_start[d]
               : engine.post_validation   ? a.metrics.devices[d].last_end()
                                          : a.metrics.makespan;
    };
    // In the timeline, as the SimGrid engine records them: each device's reduction (its
    // reduce-scatter and all-gather where sharded), and a gather moved beside the first
    // forward from the iteration's start. Pictures, traces and saved timelines then show what
    // the iteration time counts past the makespan. A few records per device: kept wherever
    // the timeline keeps its ops, transfers between devices or not.
    if (engine.record_ops)
        for (std::size_t d = 0; d < r.seconds.size() && d < a.metrics.devices.size(); ++d) {
            const int device = static_cast<int>(d);
            const auto collective = [&](double moved, double start, double end) {
                a.timeline.transfers.push_back(Transfer{device, device, Op{}, Op{}, moved, start,
                                                        end, TransferKind::data_parallel});
            };
            if (!r.gather_seconds_by_device.empty() && r.gather_seconds_by_device[d] > 0)
                collective(bytes.param_gather[d], 0, r.gather_seconds_by_device[d]);
            if (r.seconds[d] > 0)
                collective(bytes.gradient[d], reduction_start(d),
                           reduction_start(d) + r.seconds[d]);
        }
    if (engine.post_validation) {
        std::vector<double> done_at(r.seconds.size(), 0.0);
        for (std::size_t d = 0; d < done_at.size() && d < a.metrics.devices.size(); ++d)
            if (r.seconds[d] > 0) done_at[d] = reduction_start(d) + r.seconds[d];
        windows = device_windows(a.metrics, done_at, r.gather_exposed_by_device);
    }
    return r.iteration_time;
}

void run_analytic(Analysis& a, const PipelineSpec& spec, const AnalyticEngine& engine,
                  const Pipeline& pipeline) {
    sim::ReplayOptions replay_options;
    replay_options.comm_latency = spec.comm_latency;
    if (spec.all_to_all > 0)
        replay_options.all_to_all.assign(static_cast<std::size_t>(a.schedule.stages()),
                                         spec.all_to_all / a.schedule.microbatch_chunks());
    replay_options.fb_overlap = spec.fb_overlap;
    replay_options.record_transfers = engine.record_transfers;
    replay_options.record_ops = engine.record_ops;
    replay_options.validated = pipeline.validated;
    if (a.model) replay_options.message_bytes = a.model->plan.message_bytes;
    sim::ReplayResult replayed;
    try {
        replayed = sim::replay_with_metrics(a.schedule, a.costs, a.memory, replay_options);
    } catch (const InvalidSchedule&) {
        if (!pipeline.validated || pipeline.order_checked) throw;
        // The generator's schedule cannot run: say so as generate_schedule() does.
        const auto issue = validate(a.schedule);
        throw unrunnable_schedule(spec.schedule, spec.generator,
                                  issue ? issue->message : "it cannot run to completion");
    }
    a.timeline = std::move(replayed.timeline);
    a.metrics = std::move(replayed.metrics);
    if (a.model) a.timeline.time_unit = "s";
    std::vector<double> windows;
    const double iteration_time =
        a.model ? reduced_iteration_time(a, spec, engine, replayed, windows) : -1;
    if (engine.post_validation && windows.empty()) windows = device_windows(a.metrics, {}, {});
    finish(a, iteration_time, engine.post_validation ? &windows : nullptr);
}

// What the cluster simulation refuses of its pipeline, before SimGrid starts.
void check_cluster_inputs(const PipelineSpec& spec, const StageCosts& costs, bool model,
                          const SimGridEngine& engine) {
    if (spec.all_to_all > 0 || spec.fb_overlap > 0)
        throw std::invalid_argument(fmt::format(
            "{} of the analytic replay (analyze, compare); the cluster simulation runs F&B "
            "pairs back to back, hiding nothing",
            spec.all_to_all > 0 && spec.fb_overlap > 0 ? "--a2a and --overlap-fb are options"
            : spec.all_to_all > 0                      ? "--a2a is an option"
                                                       : "--overlap-fb is an option"));
    // SimGrid steps its clock by 1 ns (its surf/precision), which distorts shorter passes:
    // at 1e-12 s every device came out busy 1.5e-8 s instead of 2.4e-11, at 1e-9 by 15 %.
    // From a microsecond on the step is at most 0.1 % of a pass.
    if (!model)
        for (std::size_t s = 0; s < costs.stages(); ++s)
            for (const auto& [pass, time] :
                 {std::pair{"F", costs.forward[s]}, std::pair{"B", costs.backward_input[s]},
                  std::pair{"W", costs.backward_weight[s]}})
                if (time > 0 && time < min_simulated_pass)
                    throw std::invalid_argument(fmt::format(
                        "stage {}'s {} takes {:g} s, under the {:g} s the cluster simulation "
                        "times to 0.1 % (SimGrid steps its clock by 1 ns): give --costs in "
                        "seconds, or use analyze, which takes any unit",
                        s, pass, time, min_simulated_pass));
    if (model && (engine.message_bytes > 0 || engine.grad_bytes > 0))
        throw std::invalid_argument(
            "--message-bytes and --grad-bytes give the bytes of a run without a model; with "
            "--model, the model gives those between stages and the gradients");
    // Without replicas there is no reduction: the bytes were ignored without a word.
    if (engine.grad_bytes > 0 && spec.dp < 2)
        throw std::invalid_argument(
            "--grad-bytes needs data parallelism (--dp D above 1): there is no gradient "
            "reduction");
}

// The engine's layout with the spec's dp and tp, the schedule's devices and the model's cp.
simgrid::Layout cluster_layout(const SimGridEngine& engine, const PipelineSpec& spec, int devices,
                               const std::optional<ModelAnalysis>& model) {
    simgrid::Layout layout = engine.layout;
    layout.dp = spec.dp;
    layout.tp = spec.tp;
    layout.pp = devices;
    layout.cp = model ? model->workload.cp : 1;
    return layout;
}

// What the engine moves and computes: the model's plan, or the costs with the engine's
// message and gradient bytes; each node group's speed relative to the costs' GPU.
simgrid::SimWorkload sim_workload(const Schedule& schedule, const StageCosts& costs,
                                  const std::optional<ModelAnalysis>& model,
                                  const PipelineSpec& spec, const SimGridEngine& engine) {
    simgrid::SimWorkload workload =
        model ? workload_from_plan(model->plan, schedule, spec.tp,
                                   spec.costs.model->optimizer.sharding())
              // The stage's message, which the T GPUs of a device send a 1/T each, as a
              // model's: per GPU, -t 2 had moved twice --message-bytes.
              : simgrid::simple_workload(costs, schedule.devices,
                                         engine.message_bytes / std::max(spec.tp, 1),
                                         engine.grad_bytes);
    workload.group_speeds = model ? node_group_speeds(engine.cluster, model->gpu)
                                  : node_group_speeds(engine.cluster, std::string());
    return workload;
}

void check_time_range(const Schedule& schedule, const StageCosts& c, const PipelineSpec& spec,
                      const SimGridEngine* simgrid, bool cluster_latencies);

void run_simgrid(Analysis& a, const PipelineSpec& spec, const SimGridEngine& engine) {
    check_cluster_inputs(spec, a.costs, a.model.has_value(), engine);
    check_time_range(a.schedule, a.costs, spec, &engine, true);

    ClusterRun run;
    run.cluster = engine.cluster.name;
    run.description = engine.cluster.description;
    run.layout = cluster_layout(engine, spec, a.schedule.devices, a.model);
    const simgrid::SimWorkload workload = sim_workload(a.schedule, a.costs, a.model, spec, engine);
    run.result =
        simgrid::simulate(a.schedule, workload, engine.cluster, run.layout, engine.options);
    a.timeline = run.result.timeline;
    const double iteration_time = run.result.iteration_time;
    a.grad_reduce_time = run.result.grad_reduce_time;
    a.param_gather_time = run.result.param_gather_time;
    a.param_gather_exposed = run.result.param_gather_exposed;
    // Bytes move between stages (p > 1), in the gradient reduction (dp·C > 1) and in
    // tensor-parallel collectives (t > 1): a model has them all, --costs what the flags give.
    const simgrid::Layout& l = run.layout;
    const bool bytes_move =
        a.model ? l.pp > 1 || l.dp * l.cp > 1 || l.tp > 1
                : (engine.message_bytes > 0 && l.pp > 1) || (engine.grad_bytes > 0 && l.dp > 1);
    if (!bytes_move && engine.options.bandwidth_scale != 1)
        a.warnings.push_back(fmt::format(
            "--bw-scale scales the links' bandwidth, and no bytes move here ({}): it changes "
            "nothing",
            a.model ? "one stage, one replica, no tensor or context parallelism"
                    : "no --model, --message-bytes or --grad-bytes"));
    if (a.model) {
        a.model->device_gpu = device_gpus(engine.cluster, run.layout, a.model->gpu);
        a.model->ran_on = layout_gpus(engine.cluster, run.layout, a.model->gpu);
        // The single-efficiency model's times are FLOPs over a peak: a peak ratio scales them
        // exactly (plan_model refuses it beside a calibration file).
        const bool single_efficiency = spec.costs.model->efficiency > 0;
        if (const auto warning =
                foreign_gpu_warning(engine.cluster, run.layout, a.model->gpu, !single_efficiency))
            a.warnings.push_back(*warning);
    }
    a.cluster = std::move(run);
    a.metrics = compute_metrics(a.timeline, a.memory);
    // Post-validation: each device's longest window over the replicas simulated, until the
    // later of its last op and its gradient reduction.
    std::vector<double> windows;
    if (engine.options.post_validation) windows = a.cluster->result.device_window;
    finish(a, iteration_time, engine.options.post_validation ? &windows : nullptr);
}

// Refuses pass times so far apart that the short ones round away where the run takes place:
// times near T are spaced T·2^-52 apart, so an op of length d far into the run ends about
// T·2^-52/d off, relatively. T is taken as a device's ops all at the longest time (a
// straggler's factor included); more than 0.1 % off is refused. A stage of 1e30 beside
// unit ones left the other devices' ops 0 long: busy 0, bubble 100 %.
// `simgrid`: the cluster run's engine, or null; with `cluster_latencies` its links' latencies
// count too (checked once the cluster's own refusals, more to the point, have passed).
void check_time_range(const Schedule& schedule, const StageCosts& c, const PipelineSpec& spec,
                      const SimGridEngine* simgrid, bool cluster_latencies) {
    double longest = 0, shortest = std::numeric_limits<double>::infinity();
    const auto take = [&](double t) {
        if (t > 0) longest = std::max(longest, t), shortest = std::min(shortest, t);
    };
    for (std::size_t s = 0; s < c.stages(); ++s) {
        take(c.forward[s]);
        take(c.backward_input[s]);
        take(c.backward_weight[s]);
    }
    take(spec.comm_latency);
    take(spec.all_to_all);
    double slowest = 1;
    if (simgrid) {
        for (const auto& [gpu, factor] : simgrid->options.stragglers)
            slowest = std::max(slowest, factor);
    }
    if (simgrid && cluster_latencies) {
        // The cluster's latencies, as --comm's in the replay (1e30 s passes on a cluster of
        // microsecond links lost the links without a word): those of the links the run's
        // GPUs use, inside a node once it has two, the NICs once it spans nodes.
        const double scale = simgrid->options.latency_scale;
        const double gpus = static_cast<double>(schedule.devices) * spec.tp * spec.dp *
                            (spec.costs.model ? spec.costs.model->workload.cp : 1);
        if (gpus > 1) take(simgrid->cluster.intra_node.latency * scale);
        if (gpus > simgrid->cluster.gpus_per_node) take(simgrid->cluster.nic.latency * scale);
    }
    if (!(longest > 0)) return;
    std::size_t most_ops = 0;
    for (const auto& ops : schedule.device_ops)
        most_ops = std::max(most_ops, ops.size());
    // As ratios, which stay finite where the times themselves are near the largest double.
    constexpr double kept = 1e-3;  // the largest relative error of the shortest op
    if (static_cast<double>(most_ops) * slowest * 0x1p-52 > kept * (shortest / longest))
        throw std::invalid_argument(fmt::format(
            "the times are too far apart to compute with: the shortest pass time, latency "
            "(--comm or the cluster's) or all-to-all, "
            "{:g}, would round away beside {} ops of {:g}{} on one device (doubles keep about "
            "16 digits); keep the longest within about {:.3g} times the shortest",
            shortest, most_ops, longest * slowest, slowest > 1 ? " (a straggler's)" : "",
            kept * 0x1p52 / static_cast<double>(most_ops)));
}

// Refuses, before anything is allocated, a run that will not fit in memory: the schedule and
// what the engine records per op (the SimGrid engine records every op of replica 0, and
// estimates its own simulation state again before it starts).
void check_run_memory(const PipelineSpec& spec, const Engine& engine) {
    sim::ReplayOptions records;
    double output_per_op = 0;
    if (const auto* analytic = std::get_if<AnalyticEngine>(&engine)) {
        records.record_ops = analytic->record_ops;
        records.record_transfers = analytic->record_transfers;
        output_per_op = analytic->output_bytes_per_op;
    } else {
        records.record_ops = true;
        records.record_transfers = std::get<SimGridEngine>(engine).options.record_transfers;
        output_per_op = std::get<SimGridEngine>(engine).output_bytes_per_op;
    }
    double ops = 0, pairs = 0, generation_bytes = 0;
    std::string what;
    if (spec.given) {
        ops = static_cast<double>(spec.given->op_count());
        pairs = static_cast<double>(spec.given->stages()) * spec.given->microbatches;
        what = fmt::format("schedule '{}' ({:.0f} ops)", spec.given->name, ops);
    } else {
        // An unknown name or a p, m or v out of range is named as such, not sized.
        const GeneratorOptions g = checked_generator_options(spec.schedule, spec.generator);
        const ScheduleGenerator* generator = find_generator(spec.schedule);
        ops = max_op_count(*generator, g.devices, g.chunks, g.microbatches);
        pairs = static_cast<double>(g.devices) * g.chunks * g.microbatches;
        // A second schedule's timeline and order, held while the schedule is made (v-zb at
        // p 512, m 2048 peaked at 527 MiB against 200 estimated without them; zb-2p at p 256,
        // m 4096 at 157 MB against 100).
        if (generator->times_a_second_schedule)
            generation_bytes = ops * static_cast<double>(sizeof(TimedOp) + 2 * sizeof(Op));
        what = fmt::format("{} with p·v·m = {}·{}·{} ({:.0f} ops)", spec.schedule, g.devices,
                           g.chunks, g.microbatches, ops);
    }
    sim::check_memory(
        sim::replay_peak_bytes(ops, pairs, records) + generation_bytes + ops * output_per_op,
        sim::memory_budget(), what);
}

}  // namespace

void check_cluster_run(const Pipeline& pipeline, const SimGridEngine& engine) {
    const simgrid::Layout layout =
        cluster_layout(engine, pipeline.spec, pipeline.schedule.devices, pipeline.model);
    simgrid::check_layout(layout, engine.cluster);
    simgrid::check_options(engine.options, engine.cluster, layout);
    check_cluster_inputs(pipeline.spec, pipeline.costs, pipeline.model.has_value(), engine);
    const simgrid::SimWorkload w =
        sim_workload(pipeline.schedule, pipeline.costs, pipeline.model, pipeline.spec, engine);
    // Messages and collectives as the engine will move them: SimGrid's transfers stop at
    // max_workload_bytes (an activation of b = 4096 sequences of a wide model was refused only
    // once the run had been announced, in the engine's words). Without a model the flags'
    // bytes are bounded where they are read, and the advice below would not fit.
    const char* activations = "give a smaller --mb, a larger -t or --cp, or a smaller model";
    const char* weights = "give more stages, a larger -t, or a smaller model";
    const std::tuple<const char*, const std::vector<double>*, const char*> moved[] = {
        {"a stage's message (its activations of one microbatch)", &w.message_bytes, activations},
        {"a tensor-parallel all-reduce", &w.tp_allreduce_bytes, activations},
        {"a device's gradients", &w.gradient_bytes, weights},
        {"a device's parameter all-gather", &w.param_gather_bytes, weights},
        {"a stage's parameter fetch", &w.param_fetch_bytes, weights}};
    for (const auto& [what, bytes, advice] : moved)
        for (const double b : *bytes)
            if (b > simgrid::max_workload_bytes)
                throw std::invalid_argument(
                    fmt::format("{} would be {:.3g} bytes, more than the {:g} the cluster "
                                "simulation moves at once: {}",
                                what, b, simgrid::max_workload_bytes, advice));
    check_time_range(pipeline.schedule, pipeline.costs, pipeline.spec, &engine, true);
    // Then the engine's own checks, its memory and the kernel's mappings among them, without
    // simulating: a run refused there was refused after its first line had been printed.
    simgrid::SimOptions check = engine.options;
    check.check_only = true;
    check.progress = nullptr;
    (void)simgrid::simulate(pipeline.schedule, w, engine.cluster, layout, check);
}

void check_analytic_layout(const PipelineSpec& spec) {
    // The operator model times tensor-parallel collectives at the NVLink bus bandwidth of one
    // node: -t 16 was taken, and its collectives across two nodes came out twice as fast as
    // -t 8's. A cluster's nodes (simulate) say how many GPUs share NVLink.
    if (spec.costs.model && spec.tp > models::reference_gpus_per_node)
        throw std::invalid_argument(fmt::format(
            "-t {}: the analytic replay runs a tensor-parallel group inside one node of {} GPUs "
            "behind NVLink (NVIDIA DGX/HGX), which {} GPUs do not fit; give -t {} or less, or lay "
            "it out on a cluster whose nodes hold the group ('pipesim simulate')",
            spec.tp, models::reference_gpus_per_node, spec.tp, models::reference_gpus_per_node));
}

Pipeline prepare(const PipelineSpec& spec, const Engine& engine) {
    if (std::holds_alternative<AnalyticEngine>(engine)) check_analytic_layout(spec);
    check_spec(spec);
    check_run_memory(spec, engine);
    Pipeline pipeline;
    pipeline.spec = spec;
    if (spec.given) {
        pipeline.schedule = *spec.given;  // validated by the engine
    } else {
        const ScheduleGenerator* generator = find_generator(spec.schedule);
        report_phase(fmt::format("generating {} p·v·m = {}·{}·{}", spec.schedule,
                                 spec.generator.devices,
                                 spec.generator.chunks > 0 ? spec.generator.chunks
                                 : generator               ? generator->default_chunks
                                                           : 0,
                                 spec.generator.microbatches));
        // The analytic replay's own walk makes validate()'s order and deadlock checks; with
        // steps paired, the order checked is the paired schedule's, once it is paired.
        const bool analytic = std::holds_alternative<AnalyticEngine>(engine);
        const GeneratedCheck check =
            analytic || spec.step_exchange ? GeneratedCheck::structure : GeneratedCheck::all;
        pipeline.schedule =
            generator && generator->plans_with_costs && spec.generator.planning.empty()
                ? generate_with_costs(spec, *generator, check)
                : generate_schedule(spec.schedule, spec.generator, check);
        if (spec.step_exchange) {
            pair_steps(pipeline.schedule);
            if (!analytic) require_valid(pipeline.schedule);
        }
        pipeline.validated = true;
        pipeline.order_checked = !analytic;
    }
    pipeline.spec.given.reset();  // the schedule is pipeline.schedule now
    pipeline.warnings = shape_warnings(spec);
    // A flag that changes nothing for this schedule: said, not refused (compare gives one
    // flag to schedules with and without F&B pairs).
    if (spec.fb_overlap > 0) {
        const auto& pairs = pipeline.schedule.fb_pairs;
        if (std::all_of(pairs.begin(), pairs.end(), [](const auto& d) { return d.empty(); }))
            pipeline.warnings.push_back(fmt::format(
                "--overlap-fb hides all-to-all inside F&B pairs (dualpipe, dualpipe-v), which "
                "{} has none of: it changes nothing",
                pipeline.schedule.name));
        else if (!(spec.all_to_all > 0))
            pipeline.warnings.push_back(
                "--overlap-fb hides part of the all-to-all time, and --a2a is 0: it changes "
                "nothing");
    }
    derive_costs(pipeline);
    // What the memory model cannot hold (docs/models.md, "Caveats"): a B that grows memory.
    const auto split_backward = [&] {
        for (const std::vector<Op>& ops : pipeline.schedule.device_ops)
            for (const Op& op : ops)
                if (op.pass == Pass::W) return true;
        return false;
    };
    if (pipeline.model && pipeline.model->workload.recompute == models::Recompute::full &&
        split_backward())
        pipeline.warnings.push_back(fmt::format(
            "with --recompute full each B of {} re-creates the activations its W needs, which "
            "the memory figures cap at the layer inputs it keeps: its peak memory is a lower "
            "bound (fused-backward schedules such as 1f1b are counted in full)",
            pipeline.schedule.name));
    check_time_range(pipeline.schedule, pipeline.costs, pipeline.spec,
                     std::get_if<SimGridEngine>(&engine), false);
    return pipeline;
}

Analysis run(Pipeline pipeline, const Engine& engine) {
    Analysis a;
    a.schedule = std::move(pipeline.schedule);
    a.costs = std::move(pipeline.costs);
    a.memory = std::move(pipeline.memory);
    a.model = std::move(pipeline.model);
    a.warnings = std::move(pipeline.warnings);
    a.dp = pipeline.spec.dp;
    const bool generated = pipeline.validated;
    report_phase(
        fmt::format("{} {} ({} ops)",
                    std::holds_alternative<AnalyticEngine>(engine) ? "replaying" : "simulating",
                    a.schedule.name, a.schedule.op_count()));
    if (const auto* analytic = std::get_if<AnalyticEngine>(&engine))
        run_analytic(a, pipeline.spec, *analytic, pipeline);
    else
        run_simgrid(a, pipeline.spec, std::get<SimGridEngine>(engine));
    if (generated)
        if (const auto block = catalog_block(a.schedule)) {
            a.block = block_lifespans(*block, a.metrics, a.memory, a.schedule.microbatches);
            // The block's bound is the bound of its repetition. v-min and v-half pick their
            // order among several candidates, and the one they pick may keep more
            // microbatches alive on a stage than the catalog block does: then the block
            // says nothing of this run and is not reported. Where every stage stays within
            // the block's in-flight counts, each device's peak is within its bound too.
            if (!block_bound_holds(*a.block)) a.block.reset();
        }
    // Times so small (or so far apart) that a ratio of them overflows: the figures would be
    // infinite, and JSON cannot even hold them.
    if (!std::isfinite(a.metrics.throughput) ||
        (a.block && !std::isfinite(a.block->measured_max_intervals)))
        throw std::invalid_argument(fmt::format(
            "the pass times and latencies are too small, or too far apart, to compute with: the "
            "iteration takes {:g} and its throughput or lifespans in intervals overflow; give "
            "times in a larger unit",
            a.iteration_time));
    return a;
}

Analysis run(const PipelineSpec& spec, const Engine& engine) {
    return run(prepare(spec, engine), engine);
}

}  // namespace pipesim::analysis
