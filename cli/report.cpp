#include "report.hpp"

#include <fmt/format.h>

#include "schedules/placement.hpp"

namespace pipesim::cli {

nlohmann::ordered_json analysis_json(const Analysis& a, const AnalyzeOptions& options) {
    const Metrics& m = a.metrics;
    nlohmann::ordered_json j;
    j["schedule"] = a.schedule.name;
    j["stages"] = a.schedule.devices;
    j["microbatches"] = a.schedule.microbatches;
    j["chunks"] = a.schedule.chunks;
    j["placement"] =
        placement_name(classify_placement(a.schedule.stage_device, a.schedule.devices));
    j["time_unit"] = a.timeline.time_unit;
    j["comm_latency"] = options.comm_latency;
    j["mem_w_ratio"] = options.mem_w_ratio;
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
    return j;
}

std::string analysis_table(const Analysis& a, const AnalyzeOptions& options) {
    const Metrics& m = a.metrics;
    const std::string unit = a.timeline.time_unit;
    std::string out;
    auto line = [&](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<22}{}\n", label, value);
    };
    out += fmt::format("{} — p={} m={} v={}\n", a.schedule.name, a.schedule.devices,
                       a.schedule.microbatches, a.schedule.chunks);
    const auto& c = a.costs;
    const bool uniform = options.costs.size() == 1;
    line("costs F,B,W",
         uniform ? fmt::format("{:g},{:g},{:g} per full stage ({:g},{:g},{:g} "
                               "per chunk pass)",
                               options.costs[0][0], options.costs[0][1], options.costs[0][2],
                               c.forward[0], c.backward_input[0], c.backward_weight[0])
                 : std::string("per virtual stage (given)"));
    line("comm latency", fmt::format("{:g}", options.comm_latency));
    line("makespan", fmt::format("{:.6g} {}", m.makespan, unit));
    line("bubble rate", fmt::format("{:.2f} %  (device {}, idle {:.6g} {})", 100 * m.bubble_rate,
                                    m.bubble_device, m.devices[m.bubble_device].idle, unit));
    line("peak activation", fmt::format("{:.4g} × M_B  (max over devices; M_W = {:g} M_B)",
                                        m.peak_activation_max, options.mem_w_ratio));
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
