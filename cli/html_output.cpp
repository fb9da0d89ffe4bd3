#include "html_output.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace pipesim::cli {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// An argument as a POSIX shell reads it back.
std::string shell_quote(const std::string& arg) {
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("-_.,:=/+@%").find(c) != std::string_view::npos;
    });
    if (plain) return arg;
    std::string out = "'";
    for (char c : arg)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string costs_text(const analysis::PipelineSpec& spec) {
    const std::vector<PassCosts>& passes = spec.costs.passes;
    if (passes.size() != 1) return fmt::format("{} triples, one per virtual stage", passes.size());
    return fmt::format("F,B,W = {:g},{:g},{:g} per full stage; M_W = {:g} M_B", passes[0].forward,
                       passes[0].backward_input, passes[0].backward_weight, spec.costs.mem_w_ratio);
}

}  // namespace

const std::string html_flag_help =
    "  --html FILE.html      a self-contained HTML report: table, timelines, memory, inputs\n";

bool read_html_flag(const std::string& flag, ArgReader& reader, std::string& path) {
    if (flag != "--html") return false;
    reader.claim_once("--html", flag);
    path = reader.value(flag);
    return true;
}

SummaryRow summary_row(const std::string& name, const analysis::Analysis& a) {
    SummaryRow r;
    r.schedule = name;
    r.chunks = a.schedule.chunks;
    r.makespan = a.iteration_time;
    r.bubble_rate = a.metrics.bubble_rate;
    double busy = 0;
    for (const DeviceMetrics& d : a.metrics.devices)
        busy += d.busy;
    r.efficiency = busy / (static_cast<double>(a.schedule.devices) * a.metrics.makespan);
    if (a.model) {
        r.peak = *std::max_element(a.model->total_bytes.begin(), a.model->total_bytes.end());
        r.throughput = a.model->samples_per_second;
    } else {
        r.peak = a.metrics.peak_activation_max;
        r.throughput = a.metrics.throughput;
    }
    return r;
}

viz::HtmlTable summary_table(const std::vector<SummaryRow>& rows, bool model,
                             const std::string& unit, bool speedup) {
    viz::HtmlTable t;
    t.columns = {"schedule",
                 "v",
                 model ? "iteration (s)" : fmt::format("makespan ({})", unit),
                 "bubble",
                 "efficiency",
                 model ? "peak memory (GiB)" : "peak activation (M_B)",
                 model ? "samples/s" : fmt::format("microbatches / {}", unit)};
    if (speedup) t.columns.push_back("speed-up");
    for (const SummaryRow& r : rows) {
        std::vector<std::string> cells = {r.schedule,
                                          std::to_string(r.chunks),
                                          fmt::format("{:.6g}", r.makespan),
                                          fmt::format("{:.2f} %", 100 * r.bubble_rate),
                                          fmt::format("{:.2f} %", 100 * r.efficiency),
                                          fmt::format("{:.4g}", model ? r.peak / gib : r.peak),
                                          fmt::format("{:.6g}", r.throughput)};
        if (speedup) cells.push_back(fmt::format("{:.3f}x", r.speedup));
        t.rows.push_back(std::move(cells));
    }
    return t;
}

viz::HtmlReport html_report_for(std::string_view command, const std::vector<std::string>& args,
                                const analysis::PipelineSpec& spec, const std::string& cluster) {
    viz::HtmlReport report;
    report.title = fmt::format("pipesim {}", command);
    report.command_line = fmt::format("pipesim {}", command);
    for (const std::string& a : args)
        report.command_line += " " + shell_quote(a);
    auto input = [&](std::string label, std::string value) {
        report.inputs.emplace_back(std::move(label), std::move(value));
    };
    if (spec.given) {
        input("schedule", fmt::format("{} (from a file)", spec.given->name));
        input("p, m, v", fmt::format("{}, {}, {}", spec.given->devices, spec.given->microbatches,
                                     spec.given->chunks));
    } else {
        input("p (stages)", std::to_string(spec.generator.devices));
        input("m (microbatches)", std::to_string(spec.generator.microbatches));
        if (spec.generator.chunks != 0) input("v (chunks)", std::to_string(spec.generator.chunks));
        if (spec.generator.group_size != 0)
            input("group size", std::to_string(spec.generator.group_size));
    }
    if (spec.costs.model) {
        const analysis::ModelSpec& m = *spec.costs.model;
        input("model", fmt::format("{} on {}, microbatch {} sequences{}", m.model, m.gpu,
                                   m.workload.microbatch,
                                   m.calibration_file.empty()
                                       ? std::string()
                                       : fmt::format(", calibration {}", m.calibration_file)));
    } else {
        input("costs", costs_text(spec));
    }
    if (cluster.empty()) {
        input("engine", "analytic replay");
        input("comm latency", fmt::format("{:g}", spec.comm_latency));
    } else {
        input("engine", "SimGrid");
        input("cluster", cluster);
    }
    if (spec.dp != 1 || spec.tp != 1) input("dp, tp", fmt::format("{}, {}", spec.dp, spec.tp));
    return report;
}

viz::HtmlSchedule html_schedule(std::string name, const analysis::Analysis& a) {
    viz::HtmlSchedule s;
    s.name = std::move(name);
    s.timeline = a.timeline;
    s.memory = a.memory;
    if (a.model) {
        s.memory_scale = gib;
        s.memory_unit = "GiB";
    }
    return s;
}

}  // namespace pipesim::cli
