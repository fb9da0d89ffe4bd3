#include "sweep/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::sweep {

namespace {

struct MetricInfo {
    Metric metric;
    const char* name;
    bool higher_better;
};

constexpr MetricInfo metric_table[] = {
    {Metric::peak_memory, "peak_memory", false},
    {Metric::peak_activation, "peak_activation", false},
    {Metric::throughput, "throughput", true},
    {Metric::samples_per_gpu, "samples_per_s_per_gpu", true},
    {Metric::bubble_rate, "bubble_rate", false},
    {Metric::makespan, "makespan", false},
};

const MetricInfo& info(Metric metric) {
    for (const MetricInfo& i : metric_table)
        if (i.metric == metric) return i;
    return metric_table[0];
}

// Each value replaced by the smallest value of its run: sorted, a value within `tolerance`
// (relative) of its run's first value joins that run.
std::vector<double> snapped(const std::vector<double>& values, double tolerance) {
    std::vector<std::size_t> order(values.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<double> out(values.size());
    double run = 0;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const double v = values[order[k]];
        if (k == 0 || std::abs(v - run) > tolerance * std::max(std::abs(v), std::abs(run))) run = v;
        out[order[k]] = run;
    }
    return out;
}

}  // namespace

Metric parse_metric(const std::string& name) {
    std::string known;
    for (const MetricInfo& i : metric_table) {
        if (name == i.name) return i.metric;
        known += (known.empty() ? "" : ", ") + std::string(i.name);
    }
    throw std::invalid_argument(fmt::format("unknown column '{}' (known: {})", name, known));
}

const char* metric_name(Metric metric) {
    return info(metric).name;
}

bool higher_is_better(Metric metric) {
    return info(metric).higher_better;
}

double metric_value(const Result& r, Metric metric) {
    switch (metric) {
        case Metric::peak_memory:
            return r.peak_memory;
        case Metric::peak_activation:
            return r.peak_activation;
        case Metric::throughput:
            return r.throughput;
        case Metric::samples_per_gpu:
            return r.samples_per_second_per_gpu;
        case Metric::bubble_rate:
            return r.bubble_rate;
        case Metric::makespan:
            return r.makespan;
    }
    return 0;
}

std::vector<std::size_t> pareto_front(const std::vector<Result>& rows,
                                      const ParetoOptions& options) {
    std::vector<std::size_t> ok;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i].status == Status::ok) ok.push_back(i);
    const bool up = higher_is_better(options.y);
    const bool x_up = higher_is_better(options.x);
    // x as "smaller is better" and y as "larger is better", so one comparison serves every
    // pair of columns.
    std::vector<double> xs, ys;
    for (std::size_t i : ok) {
        xs.push_back(x_up ? -metric_value(rows[i], options.x) : metric_value(rows[i], options.x));
        ys.push_back(up ? metric_value(rows[i], options.y) : -metric_value(rows[i], options.y));
    }
    xs = snapped(xs, options.tolerance);
    ys = snapped(ys, options.tolerance);
    std::vector<std::size_t> order(ok.size());  // positions in ok
    for (std::size_t k = 0; k < order.size(); ++k)
        order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (xs[a] != xs[b]) return xs[a] < xs[b];
        if (ys[a] != ys[b]) return ys[a] > ys[b];
        return a < b;
    });
    // Sweep by x: a row is on the front when nothing with less (or equal) x has as much y.
    std::vector<std::size_t> front;
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < order.size();) {
        const double top = ys[order[k]];  // the best y at this x
        std::size_t next = k;
        for (; next < order.size() && xs[order[next]] == xs[order[k]]; ++next)
            if (top > best && ys[order[next]] == top) front.push_back(ok[order[next]]);
        best = std::max(best, top);
        k = next;
    }
    return front;
}

}  // namespace pipesim::sweep
