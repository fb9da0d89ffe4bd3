#include "report.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/published.hpp"
#include "fileio/files.hpp"

namespace pipesim::cli {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

using analysis::Analysis;
using analysis::ModelAnalysis;

// A time or count in the unit table: six significant digits, but whole from a million up
// (a makespan of 3145737 slots, not 3.14573e+06).
std::string figure(double x) {
    if (std::abs(x) >= 1e6 && std::abs(x) < 1e15) return fmt::format("{:.0f}", x);
    return fmt::format("{:.6g}", x);
}

// Efficiency, speed-up over 1F1B and lifespans: the same in both tables.
std::string pipeline_lines(const Analysis& a) {
    const Metrics& m = a.metrics;
    const std::string unit = a.timeline.time_unit;
    std::string out;
    auto line = [&](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<22}{}\n", label, value);
    };
    line("efficiency", fmt::format("{:.2f} %  (busy / (p × makespan))", 100 * m.efficiency));
    if (a.speedup_1f1b > 0)
        line("speed-up over 1F1B", fmt::format("{:.3f}×  (1F1B: {} {})", a.speedup_1f1b,
                                               figure(a.baseline_1f1b_time), unit));
    line("lifespan", fmt::format("max {} {}, mean {} {}  (F start to W end, per stage)",
                                 figure(m.lifespan_max), unit, figure(m.lifespan_mean), unit));
    if (a.block) {
        const analysis::BlockLifespans& b = *a.block;
        double mean = 0;
        for (double x : b.measured_mean)
            mean += x;
        mean /= static_cast<double>(std::max<std::size_t>(1, b.measured_mean.size()));
        line("lifespan in intervals",
             fmt::format("max {:.4g} T, mean {:.4g} T; block l/T max {:.4g}  (T = {} slots = "
                         "{:.6g} {})",
                         b.measured_max_intervals, mean, b.bound_lifespan_max, b.interval,
                         b.interval_time, unit));
        const double scale = a.model ? gib : 1;  // bytes with a model, shown in GiB
        const char* unit_name = a.model ? " GiB" : " M_B";
        line("block memory bound",
             fmt::format("Σ⌈l/T⌉·M_B ≤ {:.4g}{}  (measured peak activation {:.4g}{})",
                         b.max_bound / scale, unit_name, m.peak_activation_max / scale, unit_name));
    }
    return out;
}

std::string model_table(const Analysis& a, const ModelAnalysis& model) {
    const Metrics& m = a.metrics;
    std::string out;
    auto line = [&](std::string_view label, const std::string& value) {
        out += fmt::format("  {:<22}{}\n", label, value);
    };
    // Each stage's count; past 16 stages a run of equal counts as "1 (4094 stages)" (a line of
    // 4,096 numbers at p 4096 said nothing one could read).
    std::string layers;
    const std::vector<models::StagePlan>& stages = model.plan.stages;
    for (std::size_t i = 0; i < stages.size();) {
        std::size_t run = 1;
        while (stages.size() > 16 && i + run < stages.size() &&
               stages[i + run].layers == stages[i].layers)
            ++run;
        if (run < 3) run = 1;  // two equal counts are written out
        layers += fmt::format("{}{}", layers.empty() ? "" : ",", stages[i].layers);
        if (run > 1) layers += fmt::format(" ({} stages)", run);
        i += run;
    }
    const models::Workload& w = model.workload;
    const std::string recompute =
        w.recompute == models::Recompute::none
            ? std::string()
            : fmt::format(", {} recompute", models::recompute_name(w.recompute));
    const std::string attention =
        w.attention == models::AttentionKernel::fused ? std::string() : ", unfused attention";
    const std::string gradients =
        (w.grad_bytes == 4 ? std::string() : ", 16-bit gradients") +
        (w.grad_accumulation_fusion ? std::string() : ", gradients accumulated unfused") +
        (w.persistent_norm ? std::string() : ", non-persistent norms") +
        (w.cross_entropy_fusion ? ", fused cross-entropy" : "");
    // On a cluster of other GPUs than the costs' the run names those that ran.
    std::string gpus = fmt::format("{} × {}", model.gpus, model.gpu.name);
    if (model.ran_on.size() > 1)
        gpus = fmt::format("{} GPUs ({}) with {}'s costs", model.gpus,
                           fmt::join(model.ran_on, ", "), model.gpu.name);
    else if (model.ran_on.size() == 1 && model.ran_on.front() != model.gpu.name)
        gpus = fmt::format("{} × {} with {}'s costs", model.gpus, model.ran_on.front(),
                           model.gpu.name);
    line("model", fmt::format("{} ({:.2f}B params) on {}, b={} s={} t={}{}{}{}", model.config.name,
                              models::total_params(model.config) / 1e9, gpus, w.microbatch,
                              w.seq(model.config), w.tp, recompute, attention, gradients));
    line("costs", fmt::format("{}; layers per virtual stage {}", model.cost_source, layers));
    line("iteration time",
         a.post_validation
             ? fmt::format("{:.6g} s  (post-validation: the period of repeated iterations, the "
                           "longest device window; one iteration alone {:.6g} s)",
                           a.iteration_time, a.single_iteration_time)
             : fmt::format("{:.6g} s", a.iteration_time));
    if (!a.cluster && a.grad_reduce_time > 0)  // simulate prints its own reduction line
        line(
            "grad reduction",
            fmt::format("{:.6g} s ring, {:.6g} s exposed (makespan {:.6g} s)", a.grad_reduce_time,
                        a.single_iteration_time - a.param_gather_exposed - m.makespan, m.makespan));
    if (a.param_gather_time > 0)  // both engines
        line("param all-gather",
             fmt::format("{:.6g} s beside the first forward, {:.6g} s of it exposed",
                         a.param_gather_time, a.param_gather_exposed));
    line("bubble rate", fmt::format("{:.2f} %  (device {})", 100 * m.bubble_rate, m.bubble_device));
    line("throughput", fmt::format("{:.6g} samples/s, {:.6g} tokens/s", model.samples_per_second,
                                   model.tokens_per_second));
    line("MFU", fmt::format("{:.1f} %", 100 * model.mfu));
    out += pipeline_lines(a);
    out += fmt::format("\n  {:>6} {:>12} {:>8} {:>14} {:>14} {:>11}\n", "device", "busy s",
                       "bubble", "weights+opt", "activations", "total");
    for (std::size_t d = 0; d < m.devices.size(); ++d)
        out += fmt::format("  {:>6} {:>12.6g} {:>7.2f}% {:>10.2f} GiB {:>10.2f} GiB {:>7.2f} GiB\n",
                           d, m.devices[d].busy, 100 * m.devices[d].bubble_rate,
                           model.static_bytes[d] / gib, model.activation_bytes[d] / gib,
                           model.total_bytes[d] / gib);
    out += aligned_table(time_budget_cells(analysis::time_budget(a)));
    const std::vector<std::string> warnings = analysis::memory_warnings(model);
    if (!warnings.empty()) out += "\n";
    for (const std::string& warning : warnings)
        out += fmt::format("  warning: {}\n", warning);
    return out;
}

}  // namespace

namespace {

double stage_passes(const analysis::PipelineSpec& spec) {
    return spec.given ? static_cast<double>(spec.given->stages()) * spec.given->microbatches
                      : static_cast<double>(spec.generator.devices) *
                            std::max(spec.generator.chunks, 1) * spec.generator.microbatches;
}

}  // namespace

PhaseLine::PhaseLine(std::string_view command, const analysis::PipelineSpec& spec, bool enabled,
                     bool with_outputs)
    : PhaseLine(command, enabled && stage_passes(spec) >= (with_outputs ? 1 << 17 : 1 << 20)) {}

PhaseLine::PhaseLine(std::string_view command, bool large) {
    if (!large || ::isatty(STDERR_FILENO) != 1) return;
    phases_.emplace([this, name = std::string(command)](std::string_view phase) {
        fmt::print(stderr, "\r\033[K  pipesim {}: {}...", name, phase);
        std::fflush(stderr);
        shown_ = true;
    });
}

PhaseLine::~PhaseLine() {
    phases_.reset();
    if (shown_) fmt::print(stderr, "\r\033[K");
}

bool large_input_file(const std::string& path) {
    if (fileio::is_standard_stream(path)) return false;
    std::error_code error;
    const std::uintmax_t bytes = std::filesystem::file_size(path, error);
    return !error && bytes >= std::uintmax_t{16} << 20;
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
    line("makespan", fmt::format("{} {}", figure(m.makespan), unit));
    if (a.post_validation)
        line("period", fmt::format("{} {}  (iterations repeated with post-validation: the "
                                   "longest device span)",
                                   figure(a.iteration_time), unit));
    line("bubble rate",
         fmt::format("{:.2f} %  (device {}, idle {} {})", 100 * m.bubble_rate, m.bubble_device,
                     figure(m.devices[m.bubble_device].idle), unit));
    if (const auto pb = analysis::published_bubble(a, spec))
        line(
            "DeepSeek's bubble",
            fmt::format("{:.6g} {}  ((PP/2−1)(F&B+B−3W), PP={}, F={:g} B={:g} W={:g} "
                        "F&B={:g}; docs/dualpipe.md)",
                        pb->bubble, unit, pb->pp, pb->forward, pb->backward, pb->weight, pb->pair));
    line("peak activation", fmt::format("{:.4g} × M_B  (max over devices; M_W = {:g} M_B)",
                                        m.peak_activation_max, spec.costs.mem_w_ratio));
    const double throughput = analysis::microbatch_throughput(a);
    line("throughput",
         throughput == m.throughput
             ? fmt::format("{:.6g} microbatches / {}", throughput, unit)
             : fmt::format("{:.6g} microbatches / {} over the {} ({:.6g} over the makespan)",
                           throughput, unit, a.post_validation ? "period" : "iteration",
                           m.throughput));
    out += pipeline_lines(a);
    out += fmt::format("\n  {:>6} {:>12} {:>12} {:>12} {:>8} {:>10}\n", "device", "busy", "span",
                       "idle", "bubble", "peak act");
    for (std::size_t d = 0; d < m.devices.size(); ++d) {
        const DeviceMetrics& dm = m.devices[d];
        out +=
            fmt::format("  {:>6} {:>12} {:>12} {:>12} {:>7.2f}% {:>10.4g}\n", d, figure(dm.busy),
                        figure(dm.span), figure(dm.idle), 100 * dm.bubble_rate, dm.peak_activation);
    }
    return out;
}

namespace {

// One table row per kernel: pass, name, GEMM shape, work, bound, rate and time.
std::vector<std::vector<std::string>> kernel_rows(const std::vector<analysis::LayerKernel>& ks) {
    std::vector<std::vector<std::string>> rows;
    for (const analysis::LayerKernel& kernel : ks) {
        const models::Operator& op = kernel.op;
        const models::OperatorTime& t = kernel.time;
        std::string shape;
        if (op.kind == models::OpKind::gemm) {
            shape = fmt::format("{:g}×{:g}×{:g}", op.shape.m, op.shape.n, op.shape.k);
            if (op.shape.batch != 1) shape += fmt::format(" ×{:g}", op.shape.batch);
        }
        const bool compute = t.compute_bound();
        rows.push_back({models::pass_letter(op.pass), std::string(op.name), shape,
                        fmt::format("{:.3f}", op.flops / 1e9),
                        fmt::format("{:.1f}", op.bytes / 1e6), compute ? "compute" : "memory",
                        compute ? fmt::format("{:.3f} peak", t.compute_efficiency)
                                : fmt::format("{:.2f} HBM", t.memory_efficiency),
                        fmt::format("{:.1f}", 1e6 * t.seconds)});
    }
    return rows;
}

const std::vector<std::string> kernel_columns = {
    "pass", "kernel", "GEMM m×n×k (×batch)", "GFLOP", "MB", "bound", "rate", "µs"};

// "kernels per pass: F … µs, B … µs, W … µs".
std::string pass_totals(const models::PassTimes& s) {
    return fmt::format("kernels per pass: F {:.1f} µs, B {:.1f} µs, W {:.1f} µs", 1e6 * s.forward,
                       1e6 * s.backward_input, 1e6 * s.backward_weight);
}

// "F + B + W by bound: compute-bound GEMMs … µs (… %), fused attention …, memory-bound kernels
// …": the listed kernels' times summed by what holds them (the batched GEMMs of the unfused
// attention count as memory-bound where HBM holds them); shares with no kernel left out.
std::string bound_totals(const std::vector<analysis::LayerKernel>& ks) {
    std::array<double, analysis::kernel_share_count> seconds{};
    double total = 0;
    for (const analysis::LayerKernel& kernel : ks) {
        seconds[static_cast<std::size_t>(analysis::kernel_share(kernel))] += kernel.time.seconds;
        total += kernel.time.seconds;
    }
    std::string out;
    for (std::size_t share = 0; share < seconds.size(); ++share)
        if (seconds[share] > 0)
            out +=
                fmt::format("{}{} {:.1f} µs ({:.1f} %)", out.empty() ? "" : ", ",
                            analysis::kernel_share_label(static_cast<analysis::KernelShare>(share)),
                            1e6 * seconds[share], 100 * seconds[share] / total);
    return "F + B + W by bound: " + out;
}

}  // namespace

TableCells kernel_cells(const analysis::LayerKernels& k, const analysis::ModelAnalysis& model) {
    const models::Workload& w = model.workload;
    TableCells c;
    c.title = fmt::format("one layer's kernels per microbatch on one GPU ({}, b={} s={} t={}{})",
                          model.gpu.name, w.microbatch, w.seq(model.config), w.tp,
                          w.cp > 1 ? fmt::format(" cp={}", w.cp) : std::string());
    c.columns = kernel_columns;
    c.rows = kernel_rows(k.kernels);
    const models::PassTimes& s = k.kernel_seconds;
    c.notes.push_back(fmt::format("{} ({:g} µs launch overhead each)", pass_totals(s),
                                  1e6 * model.gpu.launch_overhead));
    if (!k.kernels.empty()) c.notes.push_back(bound_totals(k.kernels));
    if (k.recomputed_seconds > 0)
        c.notes.push_back(fmt::format("B includes the recomputed forward: {:.1f} µs",
                                      1e6 * k.recomputed_seconds));
    if (k.tp_forward + k.tp_backward > 0)
        c.notes.push_back(fmt::format(
            "TP {}: {} in F, {} in B, {:.4g} MB each, {:.1f} µs each at {:g} GB/s bus bandwidth{}",
            w.sequence_parallel ? "all-gather + reduce-scatter pairs" : "all-reduces", k.tp_forward,
            k.tp_backward, k.tp_bytes / 1e6, 1e6 * k.tp_seconds, model.gpu.tp_bus_bandwidth / 1e9,
            k.tp_overlap > 0 ? fmt::format(", {:g} of it hidden behind the GEMMs", k.tp_overlap)
                             : std::string()));
    if (w.cp > 1)
        c.notes.push_back(fmt::format(
            "ring attention over {} GPUs: K/V transfers exposed {:.1f} µs in F, {:.1f} µs in B",
            w.cp, 1e6 * k.cp_exposed.forward, 1e6 * k.cp_exposed.backward_input));
    return c;
}

std::vector<TableCells> stage_kernel_cells(const analysis::LayerKernels& k) {
    std::vector<TableCells> out;
    auto cells = [](const char* title, const std::vector<analysis::LayerKernel>& kernels,
                    const models::PassTimes& seconds) {
        return TableCells{title, kernel_columns, kernel_rows(kernels), {pass_totals(seconds)}};
    };
    out.push_back(cells("the first stage's extra kernels per microbatch (embedding)", k.embedding,
                        k.embedding_seconds));
    out.push_back(cells("the last stage's extra kernels per microbatch (final norm, logits, loss)",
                        k.head, k.head_seconds));
    return out;
}

std::string aligned_table(const TableCells& c) {
    std::vector<std::size_t> width(c.columns.size(), 0);
    auto widen = [&](const std::vector<std::string>& r) {
        for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], r[i].size());
    };
    widen(c.columns);
    for (const std::vector<std::string>& r : c.rows)
        widen(r);
    auto line = [&](const std::vector<std::string>& r) {
        std::string out = " ";
        for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
            out += i == 0 ? fmt::format(" {:<{}}", r[i], width[i])
                          : fmt::format("  {:>{}}", r[i], width[i]);
        return out + "\n";
    };
    std::string out = fmt::format("\n  {}\n", c.title);
    out += line(c.columns);
    for (const std::vector<std::string>& r : c.rows)
        out += line(r);
    for (const std::string& note : c.notes)
        out += "  " + note + "\n";
    return out;
}

TableCells step_shares_cells(const std::vector<analysis::CompareRow>& rows) {
    TableCells c;
    c.title = "where the step goes: each part's share of all devices' time (p × step time)";
    c.columns = {"schedule"};
    if (rows.empty() || rows.front().step_shares.empty()) return c;
    for (const analysis::StepShare& share : rows.front().step_shares)
        c.columns.push_back(analysis::step_share_label(share.key));
    for (const analysis::CompareRow& r : rows) {
        std::vector<std::string> cells = {r.schedule};
        for (const analysis::StepShare& share : r.step_shares)
            cells.push_back(fmt::format("{:.1f} %", 100 * share.share));
        c.rows.push_back(std::move(cells));
    }
    return c;
}

TableCells time_budget_cells(const analysis::TimeBudget& b) {
    TableCells c;
    c.title = fmt::format("where the step goes: each part's share of the {:.6g} s step per device",
                          b.step_time);
    c.columns = {"device"};
    for (const analysis::StepShare& share : analysis::step_shares(b))
        c.columns.push_back(analysis::step_share_label(share.key));
    auto row = [&](std::string label, const analysis::DeviceTime& t, double whole) {
        std::vector<std::string> r = {std::move(label)};
        for (const analysis::StepShare& share : analysis::step_shares(t, whole, b.kernel_shares))
            r.push_back(fmt::format("{:.1f} %", 100 * share.share));
        return r;
    };
    for (std::size_t d = 0; d < b.devices.size(); ++d)
        c.rows.push_back(row(std::to_string(d), b.devices[d], b.step_time));
    if (b.devices.size() > 1)
        c.rows.push_back(row("all", b.all, b.step_time * static_cast<double>(b.devices.size())));
    c.notes.push_back(
        "communication: tensor-parallel collectives and ring-attention transfers in the passes");
    c.notes.push_back(
        "data-parallel: after the device's last pass, the gradient reduction and parameter "
        "all-gather, waiting in them for a slower replica included");
    if (b.all.recompute > 0)
        c.notes.push_back(
            fmt::format("recomputation (inside the kernel columns): {:.1f} % of the kernel time",
                        100 * b.all.recompute / b.all.kernels));
    return c;
}

std::string kernel_table(const analysis::LayerKernels& k, const analysis::ModelAnalysis& model) {
    auto table = [](const TableCells& c, const std::string& heading) {
        std::string out = fmt::format("\n  {}:\n", heading);
        auto line = [&](const std::vector<std::string>& r) {
            return fmt::format("  {:<4} {:<32} {:<24} {:>9} {:>9} {:<8} {:>11} {:>10}\n", r[0],
                               r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
        };
        out += line(c.columns);
        for (const std::vector<std::string>& row : c.rows)
            out += line(row);
        for (const std::string& note : c.notes)
            out += "  " + note + "\n";
        return out;
    };
    const TableCells layer = kernel_cells(k, model);
    std::string out = table(layer, layer.title + ", operator rooflines");
    for (const TableCells& c : stage_kernel_cells(k))
        out += table(c, c.title);
    return out;
}

}  // namespace pipesim::cli
