#include "analysis/result_json.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/published.hpp"
#include "analysis/time_budget.hpp"
#include "schedules/placement.hpp"

namespace pipesim::analysis {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

void add_model_json(nlohmann::ordered_json& j, const Analysis& a, const ModelAnalysis& model) {
    j["iteration_time"] = a.iteration_time;
    if (!a.cluster && a.grad_reduce_time > 0) {  // the analytic closed form (grad_reduce.hpp)
        j["grad_reduce_time"] = a.grad_reduce_time;
        j["grad_reduce_exposed"] =
            a.single_iteration_time - a.param_gather_exposed - a.metrics.makespan;
        j["grad_reduce_algorithm"] = "ring";
        if (a.param_gather_time > 0) {
            j["param_gather_time"] = a.param_gather_time;
            j["param_gather_exposed"] = a.param_gather_exposed;
        }
    }
    j["samples_per_second"] = model.samples_per_second;
    j["tokens_per_second"] = model.tokens_per_second;
    j["mfu"] = model.mfu;
    j["time_budget"] = time_budget_json(time_budget(a));
    j["memory_bytes"] = model.total_bytes;
    nlohmann::ordered_json memory_gib = nlohmann::ordered_json::array();
    for (double bytes : model.total_bytes)
        memory_gib.push_back(bytes / gib);
    j["memory_gib"] = memory_gib;
    nlohmann::ordered_json& m = j["model"];
    m["name"] = model.config.name;
    m["params"] = models::total_params(model.config);
    m["gpu"] = model.gpu.name;
    m["gpu_memory_bytes"] = model.gpu.memory_bytes;
    m["gpus"] = model.gpus;
    m["microbatch_size"] = model.workload.microbatch;
    m["seq_len"] = model.workload.seq(model.config);
    m["tp"] = model.workload.tp;
    m["sequence_parallel"] = model.workload.sequence_parallel;
    m["recompute"] = models::recompute_name(model.workload.recompute);
    m["attention"] = models::attention_kernel_name(model.workload.attention);
    m["grad_bytes"] = model.workload.grad_bytes;
    m["gradient_accumulation_fusion"] = model.workload.grad_accumulation_fusion;
    m["persist_layer_norm"] = model.workload.persistent_norm;
    m["cross_entropy_loss_fusion"] = model.workload.cross_entropy_fusion;
    m["costs"] = model.cost_source;
    m["message_bytes"] = model.plan.message_bytes;
    m["tp_collective_bytes"] = model.plan.tp_comm.bytes;
    m["tp_collectives_per_layer"] =
        model.plan.tp_comm.collectives_forward + model.plan.tp_comm.collectives_backward;
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const models::StagePlan& s : model.plan.stages) {
        stages.push_back({{"layers", s.layers},
                          {"forward", s.times.forward},
                          {"backward_input", s.times.backward_input},
                          {"backward_weight", s.times.backward_weight},
                          {"activation_bytes", s.memory.activation},
                          {"held_for_w_bytes", s.memory.held_for_w},
                          {"params", s.params}});
        if (model.workload.tp > 1) {  // TP collectives left exposed, analytic
            stages.back()["tp_forward"] = s.tp_comm_times.forward;
            stages.back()["tp_backward_input"] = s.tp_comm_times.backward_input;
        }
        if (model.plan.cp > 1) {  // ring attention's exposed transfers, analytic
            stages.back()["cp_ring_forward"] = s.cp_ring_times.forward;
            stages.back()["cp_ring_backward"] = s.cp_ring_times.backward_input;
        }
    }
    if (model.plan.cp > 1) m["cp_block_bytes"] = model.plan.cp_block_bytes;
    m["virtual_stages"] = stages;
    m["static_bytes"] = model.static_bytes;
    m["peak_activation_bytes"] = model.activation_bytes;
}

void add_cluster_json(nlohmann::ordered_json& j, const Analysis& a, const ClusterRun& run) {
    const simgrid::Layout& layout = run.layout;
    j["engine"] = "simgrid";
    j["cluster"] = run.cluster;
    j["dp"] = layout.dp;
    j["tp"] = layout.tp;
    j["cp"] = layout.cp;
    j["gpus"] = layout.gpus();
    j["layout_order"] = simgrid::layout_order_string(layout.order);
    j["iteration_time"] = a.iteration_time;
    j["grad_reduce_time"] = run.result.grad_reduce_time;
    if (run.result.param_gather_time > 0) {  // moved beside the first forward
        j["param_gather_time"] = run.result.param_gather_time;
        j["param_gather_exposed"] = run.result.param_gather_exposed;
    }
    // "ring", "tree", or "mixed" (see grad_reduce_algorithms); null without a reduction.
    const auto& algorithms = run.result.grad_reduce_algorithms;
    const bool one = std::all_of(algorithms.begin(), algorithms.end(),
                                 [&](simgrid::NcclAlgo x) { return x == algorithms.front(); });
    j["grad_reduce_algorithm"] = algorithms.empty() ? nlohmann::ordered_json()
                                 : one              ? to_string(algorithms.front())
                                                    : "mixed";
    nlohmann::ordered_json per_device = nlohmann::ordered_json::array();
    for (const simgrid::NcclAlgo algo : algorithms)
        per_device.push_back(to_string(algo));
    j["grad_reduce_algorithms"] = per_device;
    j["replica_makespan"] = run.result.replica_makespan;
    j["transfers"] = run.result.timeline.transfers.size();
    j["mode"] = to_string(run.result.mode);
}

}  // namespace

std::string grad_reduce_algorithm(const simgrid::SimResult& result) {
    const auto& algorithms = result.grad_reduce_algorithms;
    std::string text;
    for (const simgrid::NcclAlgo algo : {simgrid::NcclAlgo::tree, simgrid::NcclAlgo::ring}) {
        std::string devices;
        for (std::size_t d = 0; d < algorithms.size(); ++d)
            if (algorithms[d] == algo)
                devices += fmt::format("{}{}", devices.empty() ? "" : ", ", d);
        if (devices.empty()) continue;
        if (std::count(algorithms.begin(), algorithms.end(), algo) ==
            static_cast<std::ptrdiff_t>(algorithms.size()))
            return to_string(algo);
        text +=
            fmt::format("{}{} on devices {}", text.empty() ? "" : "; ", to_string(algo), devices);
    }
    return text;
}

std::pair<std::string, std::string> memory_over(double need, double limit) {
    // Each in the largest binary unit in which it is at least 1 (a GPU file's few MB read
    // "0.0 GiB" in GiB).
    const auto unit = [](double bytes) -> std::pair<double, const char*> {
        for (const auto& [size, name] :
             {std::pair{gib, "GiB"}, {gib / 1024, "MiB"}, {gib / 1024 / 1024, "KiB"}})
            if (bytes >= size) return {size, name};
        return {1, "bytes"};
    };
    int decimals = 1;
    const auto text = [&](double bytes) {
        const auto [size, name] = unit(bytes);
        return fmt::format("{:.{}f} {}", bytes / size, size > 1 ? decimals : 0, name);
    };
    while (decimals < 3 && text(need) == text(limit))
        ++decimals;
    return {text(need), text(limit)};
}

std::vector<std::string> memory_warnings(const ModelAnalysis& model) {
    std::vector<std::string> warnings;
    for (int d : model.over_capacity) {
        const auto i = static_cast<std::size_t>(d);
        const auto [need, capacity] =
            memory_over(model.total_bytes[i], model.device_gpu[i].memory_bytes);
        warnings.push_back(
            fmt::format("device {} needs {} (weights and optimizer {:.1f} GiB + peak activations "
                        "{:.1f} GiB), more than the {}'s {}",
                        d, need, model.static_bytes[i] / gib, model.activation_bytes[i] / gib,
                        model.device_gpu[i].name, capacity));
    }
    return warnings;
}

std::vector<std::string> run_warnings(const Analysis& a) {
    std::vector<std::string> warnings = a.warnings;
    if (a.model)
        for (std::string& w : memory_warnings(*a.model))
            warnings.push_back(std::move(w));
    return warnings;
}

// Efficiency, the speed-up over 1F1B, and the measured lifespans (with a block's bound).
void add_lifespan_json(nlohmann::ordered_json& j, const Analysis& a) {
    const Metrics& m = a.metrics;
    j["efficiency"] = m.efficiency;
    j["speedup_1f1b"] =
        a.speedup_1f1b > 0 ? nlohmann::ordered_json(a.speedup_1f1b) : nlohmann::ordered_json();
    j["baseline_1f1b_time"] = a.baseline_1f1b_time > 0
                                  ? nlohmann::ordered_json(a.baseline_1f1b_time)
                                  : nlohmann::ordered_json();
    j["lifespan_max"] = m.lifespan_max;
    j["lifespan_mean"] = m.lifespan_mean;
    nlohmann::ordered_json max = nlohmann::ordered_json::array();
    nlohmann::ordered_json mean = nlohmann::ordered_json::array();
    nlohmann::ordered_json in_flight = nlohmann::ordered_json::array();
    for (const StageLifespan& s : m.stage_lifespan) {
        max.push_back(s.max);
        mean.push_back(s.mean);
        in_flight.push_back(s.max_in_flight);
    }
    j["stage_lifespan_max"] = max;
    j["stage_lifespan_mean"] = mean;
    j["stage_in_flight_max"] = in_flight;
    if (!a.block) {
        j["block_lifespan"] = nullptr;
        return;
    }
    const BlockLifespans& b = *a.block;
    j["block_lifespan"] = {{"block", b.block},
                           {"interval_slots", b.interval},
                           {"interval_time", b.interval_time},
                           {"stage_lifespan_max_intervals", b.measured_max},
                           {"stage_lifespan_mean_intervals", b.measured_mean},
                           {"stage_in_flight", b.measured_in_flight},
                           {"stage_bound_intervals", b.bound_lifespan},
                           {"stage_bound_in_flight", b.bound_in_flight},
                           {"device_bound", b.device_bound},
                           {"lifespan_max_intervals", b.measured_max_intervals},
                           {"bound_max_intervals", b.bound_lifespan_max},
                           {"device_bound_max", b.max_bound}};
}

nlohmann::ordered_json analysis_json(const Analysis& a, const PipelineSpec& spec) {
    const Metrics& m = a.metrics;
    nlohmann::ordered_json j;
    j["schedule"] = a.schedule.name;
    // "stages" counts devices (the contract's historical name); "devices" and
    // "virtual_stages" say what they count (docs/units-and-metrics.md).
    j["stages"] = a.schedule.devices;
    j["devices"] = a.schedule.devices;
    j["virtual_stages"] = a.schedule.stages();
    j["microbatches"] = a.schedule.microbatches;
    j["chunks"] = a.schedule.chunks;
    j["placement"] =
        placement_name(classify_placement(a.schedule.stage_device, a.schedule.devices));
    j["time_unit"] = a.timeline.time_unit;
    // With SimGrid, latencies come from the cluster.
    j["comm_latency"] =
        a.cluster ? nlohmann::ordered_json() : nlohmann::ordered_json(spec.comm_latency);
    j["mem_w_ratio"] =
        a.model ? nlohmann::ordered_json() : nlohmann::ordered_json(spec.costs.mem_w_ratio);
    j["makespan"] = m.makespan;
    j["bubble_rate"] = m.bubble_rate;
    j["bubble_time"] = m.bubble_time;
    j["bubble_device"] = m.bubble_device;
    auto per_device = [&](auto field) {
        nlohmann::ordered_json values = nlohmann::ordered_json::array();
        for (const DeviceMetrics& d : m.devices)
            values.push_back(field(d));
        return values;
    };
    j["peak_activation"] = per_device([](const DeviceMetrics& d) { return d.peak_activation; });
    j["peak_activation_max"] = m.peak_activation_max;
    // As the table, compare and the sweep results count it: with post-validation per period.
    j["throughput"] = microbatch_throughput(a);
    if (a.post_validation) {  // iterations repeated without a pipeline-wide synchronization
        j["post_validation"] = true;
        j["period"] = a.iteration_time;
        j["single_iteration_time"] = a.single_iteration_time;
    }
    j["busy"] = per_device([](const DeviceMetrics& d) { return d.busy; });
    j["idle"] = per_device([](const DeviceMetrics& d) { return d.idle; });
    j["device_bubble_rate"] = per_device([](const DeviceMetrics& d) { return d.bubble_rate; });
    add_lifespan_json(j, a);
    j["ops"] = a.schedule.op_count();
    if (spec.step_exchange) j["step_exchange"] = true;
    if (spec.all_to_all > 0 || spec.fb_overlap > 0) {
        j["all_to_all"] = spec.all_to_all;
        j["fb_overlap"] = spec.fb_overlap;
    }
    if (const auto pb = published_bubble(a, spec))
        j["published_bubble"] = {{"formula", "(PP/2-1)(F&B+B-3W)"},
                                 {"pp", pb->pp},
                                 {"f", pb->forward},
                                 {"b", pb->backward},
                                 {"w", pb->weight},
                                 {"fb", pb->pair},
                                 {"bubble", pb->bubble}};
    if (a.model) add_model_json(j, a, *a.model);
    j["warnings"] = run_warnings(a);
    if (a.cluster) add_cluster_json(j, a, *a.cluster);
    return j;
}

}  // namespace pipesim::analysis
