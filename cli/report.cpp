#include "report.hpp"

#include <fmt/format.h>

#include "analysis/published.hpp"

namespace pipesim::cli {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

using analysis::Analysis;
using analysis::ModelAnalysis;

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
    const std::vector<std::string> warnings = analysis::memory_warnings(model);
    if (!warnings.empty()) out += "\n";
    for (const std::string& warning : warnings)
        out += fmt::format("  warning: {}\n", warning);
    return out;
}

}  // namespace

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
