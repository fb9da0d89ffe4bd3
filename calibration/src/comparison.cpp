#include "calibration/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/metrics.hpp"

namespace pipesim::calibration {

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {

// Per dense op index, the op's duration (NaN where the timeline has no such op).
std::vector<double> durations(const Timeline& t, int stages) {
    std::vector<double> d(dense_op_count(t.microbatches, stages), std::nan(""));
    for (const std::vector<TimedOp>& ops : t.device_ops)
        for (const TimedOp& o : ops) {
            if (o.op.microbatch < 0 || o.op.microbatch >= t.microbatches || o.op.stage < 0 ||
                o.op.stage >= stages)
                throw std::invalid_argument(
                    fmt::format("timeline op {} is outside its shape", to_string(o.op)));
            d[dense_op_index(o.op, stages)] = o.end - o.start;
        }
    return d;
}

}  // namespace

RunComparison compare_timelines(const Timeline& predicted, const Timeline& measured) {
    if (predicted.devices != measured.devices || predicted.chunks != measured.chunks ||
        predicted.microbatches != measured.microbatches)
        throw std::invalid_argument(fmt::format(
            "predicted and measured timelines differ in shape: p={} v={} m={} vs p={} v={} m={}",
            predicted.devices, predicted.chunks, predicted.microbatches, measured.devices,
            measured.chunks, measured.microbatches));
    const int stages = predicted.stages();
    const std::vector<double> p = durations(predicted, stages);
    const std::vector<double> m = durations(measured, stages);
    std::vector<double> errors[pass_count];
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (std::isnan(p[i]) && std::isnan(m[i])) continue;
        const Op op{static_cast<Pass>(i % pass_count),
                    static_cast<std::int32_t>(i / pass_count / static_cast<std::size_t>(stages)),
                    static_cast<std::int32_t>(i / pass_count % static_cast<std::size_t>(stages))};
        if (std::isnan(p[i]) || std::isnan(m[i]))
            throw std::invalid_argument(fmt::format("op {} is only in the {} timeline",
                                                    to_string(op),
                                                    std::isnan(p[i]) ? "measured" : "predicted"));
        if (!(p[i] > 0))
            throw std::invalid_argument(
                fmt::format("predicted op {} has no duration: cannot compare", to_string(op)));
        errors[i % pass_count].push_back((m[i] - p[i]) / p[i]);
    }
    RunComparison c;
    const MemoryModel memory = unit_memory_model(predicted.devices, predicted.chunks);
    const Metrics pm = compute_metrics(predicted, memory);
    const Metrics mm = compute_metrics(measured, memory);
    c.predicted_makespan = pm.makespan;
    c.measured_makespan = mm.makespan;
    c.makespan_error = pm.makespan > 0 ? (mm.makespan - pm.makespan) / pm.makespan : 0;
    c.predicted_bubble = pm.bubble_rate;
    c.measured_bubble = mm.bubble_rate;
    for (int k = 0; k < pass_count; ++k) {
        if (errors[k].empty()) continue;
        std::vector<double> abs_errors = errors[k];
        for (double& e : abs_errors)
            e = std::abs(e);
        c.passes.push_back({static_cast<Pass>(k), static_cast<int>(errors[k].size()),
                            median(errors[k]), median(std::move(abs_errors))});
    }
    return c;
}

std::string comparison_table(const RunComparison& c) {
    std::string out =
        fmt::format("{:<22}{:>14}{:>14}{:>10}\n", "", "predicted", "measured", "error");
    out +=
        fmt::format("{:<22}{:>12.3f}ms{:>12.3f}ms{:>9.1f}%\n", "makespan",
                    c.predicted_makespan * 1e3, c.measured_makespan * 1e3, c.makespan_error * 100);
    out += fmt::format("{:<22}{:>13.1f}%{:>13.1f}%{:>+9.1f}pt\n", "bubble rate",
                       c.predicted_bubble * 100, c.measured_bubble * 100,
                       (c.measured_bubble - c.predicted_bubble) * 100);
    for (const PassError& e : c.passes)
        out += fmt::format("{:<22}{:>14}{:>14}{:>+9.1f}%  (median |error| {:.1f}%)\n",
                           fmt::format("{} op time ({} ops)", pass_name(e.pass), e.ops), "", "",
                           e.median_error * 100, e.median_abs_error * 100);
    return out;
}

}  // namespace pipesim::calibration
