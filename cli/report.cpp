#include "report.hpp"

#include <fmt/format.h>

#include "analysis/published.hpp"
#include "schedules/placement.hpp"

namespace pipesim::cli {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

using analysis::Analysis;
using analysis::ModelAnalysis;

// One line per device whose weights, optimizer state and peak activations exceed its GPU.
std::vector<std::string> memory_warnings(const ModelAnalysis& model) {
    std::vector<std::string> warnings;
    for (int d : model.over_capacity) {
        const auto i = static_cast<std::size_t>(d);
        warnings.push_back(fmt::format(
            "device {} needs {:.1f} GiB (weights and optimizer {:.1f} GiB + peak activations "
            "{:.1f} GiB), more than the {:.1f} GiB of a {}",
            d, model.total_bytes[i] / gib, model.static_bytes[i] / gib,
            model.activation_bytes[i] / gib, model.gpu.memory_bytes / gib, model.gpu.name));
    }
    return warnings;
}

void add_model_json(nlohmann::ordered_json& j, const Analysis& a, const ModelAnalysis& model) {
    j["iteration_time"] = a.iteration_time;
    j["samples_per_second"] = model.samples_per_second;
    j["tokens_per_second"] = model.tokens_per_second;
    j["mfu"] = model.mfu;
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
    m["costs"] = model.cost_source;
    m["message_bytes"] = model.plan.message_bytes;
    m["tp_collective_bytes"] = model.plan.tp_comm.bytes;
    m["tp_collectives_per_layer"] =
        model.plan.tp_comm.collectives_forward + model.plan.tp_comm.collectives_backward;
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const models::StagePlan& s : model.plan.stages)
        stages.push_back({{"layers", s.layers},
                          {"forward", s.times.forward},
                          {"backward_input", s.times.backward_input},
                          {"backward_weight", s.times.backward_weight},
                          {"activation_bytes", s.memory.activation},
                          {"held_for_w_bytes", s.memory.held_for_w},
                          {"params", s.params}});
    m["virtual_stages"] = stages;
    m["static_bytes"] = model.static_bytes;
    m["peak_activation_bytes"] = model.activation_bytes;
}

std::string model_table(const Analysis& a, const ModelAnalysis& model) {
    const Metrics& m = a.metrics;
    std::string out;
    auto line = [&](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<22}{}\n", label, value);
    };
    std::string layers;
    for (const models::StagePlan& s : model.plan.stages)
        layers += fmt::format("{}{}", layers.empty() ? "" : ",", s.layers);
    const models::Workload& w = model.workload;
    const std::string recompute =
        w.recompute == models::Recompute::none
            ? std::string()
            : fmt::format(", {} recompute", models::recompute_name(w.recompute));
    line("model", fmt::format("{} ({:.2f}B params) on {} × {}, b={} s={} t={}{}", model.config.name,
                              models::total_params(model.config) / 1e9, model.gpus, model.gpu.name,
                              w.microbatch, w.seq(model.config), w.tp, recompute));
    line("costs", fmt::format("{}; layers per virtual stage {}", model.cost_source, layers));
    line("iteration time", fmt::format("{:.6g} s", a.iteration_time));
    line("bubble rate", fmt::format("{:.2f} %  (device {})", 100 * m.bubble_rate, m.bubble_device));
    line("throughput", fmt::format("{:.6g} samples/s, {:.6g} tokens/s", model.samples_per_second,
                                   model.tokens_per_second));
    line("MFU", fmt::format("{:.1f} %", 100 * model.mfu));
    out += fmt::format("\n  {:>6} {:>12} {:>8} {:>14} {:>14} {:>11}\n", "device", "busy s",
                       "bubble", "weights+opt", "activations", "total");
    for (std::size_t d = 0; d < m.devices.size(); ++d)
        out += fmt::format("  {:>6} {:>12.6g} {:>7.2f}% {:>10.2f} GiB {:>10.2f} GiB {:>7.2f} GiB\n",
                           d, m.devices[d].busy, 100 * m.devices[d].bubble_rate,
                           model.static_bytes[d] / gib, model.activation_bytes[d] / gib,
                           model.total_bytes[d] / gib);
    const std::vector<std::string> warnings = memory_warnings(model);
    if (!warnings.empty()) out += "\n";
    for (const std::string& warning : warnings)
        out += fmt::format("  warning: {}\n", warning);
    return out;
}

}  // namespace

nlohmann::ordered_json analysis_json(const Analysis& a, const analysis::PipelineSpec& spec) {
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
    j["throughput"] = m.throughput;
    j["busy"] = per_device([](const DeviceMetrics& d) { return d.busy; });
    j["idle"] = per_device([](const DeviceMetrics& d) { return d.idle; });
    j["device_bubble_rate"] = per_device([](const DeviceMetrics& d) { return d.bubble_rate; });
    j["ops"] = a.schedule.op_count();
    if (spec.all_to_all > 0 || spec.fb_overlap > 0) {
        j["all_to_all"] = spec.all_to_all;
        j["fb_overlap"] = spec.fb_overlap;
    }
    if (const auto pb = analysis::published_bubble(a, spec))
        j["published_bubble"] = {{"formula", "(PP/2-1)(F&B+B-3W)"},
                                 {"pp", pb->pp},
                                 {"f", pb->forward},
                                 {"b", pb->backward},
                                 {"w", pb->weight},
                                 {"fb", pb->pair},
                                 {"bubble", pb->bubble}};
    if (a.model) add_model_json(j, a, *a.model);
    std::vector<std::string> warnings = a.warnings;
    if (a.model)
        for (std::string& w : memory_warnings(*a.model))
            warnings.push_back(std::move(w));
    j["warnings"] = warnings;
    return j;
}

void print_warnings(const Analysis& a, std::string_view command) {
    for (const std::string& w : a.warnings)
        fmt::print(stderr, "pipesim {}: warning: {}\n", command, w);
}

std::string analysis_table(const Analysis& a, const analysis::PipelineSpec& spec) {
    const Metrics& m = a.metrics;
    const std::string unit = a.timeline.time_unit;
    std::string out;
    auto line = [&](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<22}{}\n", label, value);
    };
    out += fmt::format("{} — p={} m={} v={}\n", a.schedule.name, a.schedule.devices,
                       a.schedule.microbatches, a.schedule.chunks);
    if (a.model) return out + model_table(a, *a.model);
    const auto& c = a.costs;
    const std::vector<PassCosts>& passes = spec.costs.passes;
    line("costs F,B,W",
         passes.size() == 1
             ? fmt::format("{:g},{:g},{:g} per full stage ({:g},{:g},{:g} per chunk pass)",
                           passes[0].forward, passes[0].backward_input, passes[0].backward_weight,
                           c.forward[0], c.backward_input[0], c.backward_weight[0])
             : std::string("per virtual stage (given)"));
    line("comm latency",
         a.cluster ? std::string("from the cluster") : fmt::format("{:g}", spec.comm_latency));
    line("makespan", fmt::format("{:.6g} {}", m.makespan, unit));
    line("bubble rate", fmt::format("{:.2f} %  (device {}, idle {:.6g} {})", 100 * m.bubble_rate,
                                    m.bubble_device, m.devices[m.bubble_device].idle, unit));
    if (const auto pb = analysis::published_bubble(a, spec))
        line(
            "DeepSeek's bubble",
            fmt::format("{:.6g} {}  ((PP/2−1)(F&B+B−3W), PP={}, F={:g} B={:g} W={:g} "
                        "F&B={:g}; docs/dualpipe.md)",
                        pb->bubble, unit, pb->pp, pb->forward, pb->backward, pb->weight, pb->pair));
    line("peak activation", fmt::format("{:.4g} × M_B  (max over devices; M_W = {:g} M_B)",
                                        m.peak_activation_max, spec.costs.mem_w_ratio));
    line("throughput", fmt::format("{:.6g} microbatches / {}", m.throughput, unit));
    out += fmt::format("\n  {:>6} {:>12} {:>12} {:>12} {:>8} {:>10}\n", "device", "busy", "span",
                       "idle", "bubble", "peak act");
    for (std::size_t d = 0; d < m.devices.size(); ++d) {
        const DeviceMetrics& dm = m.devices[d];
        out += fmt::format("  {:>6} {:>12.6g} {:>12.6g} {:>12.6g} {:>7.2f}% {:>10.4g}\n", d,
                           dm.busy, dm.span, dm.idle, 100 * dm.bubble_rate, dm.peak_activation);
    }
    return out;
}

}  // namespace pipesim::cli
