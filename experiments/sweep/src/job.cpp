#include "sweep/job.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/analyze.hpp"
#include "sim/simgrid/simulate_job.hpp"

namespace pipesim::sweep {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

models::Recompute recompute_of(const std::string& name) {
    if (name == "selective") return models::Recompute::selective;
    if (name == "full") return models::Recompute::full;
    return models::Recompute::none;
}

// Metrics common to both engines; `dp` replicas run side by side.
void fill(Result& r, const Analysis& a, int dp) {
    r.chunks = a.schedule.chunks;
    r.makespan = a.metrics.makespan;
    r.bubble_rate = a.metrics.bubble_rate;
    r.bubble_time = a.metrics.bubble_time;
    r.peak_activation = a.metrics.peak_activation_max;
    r.throughput = a.metrics.throughput;
    r.gpus = a.schedule.devices * r.job.tp * dp;
    if (!a.model) return;
    const ModelAnalysis& m = *a.model;
    r.peak_memory = *std::max_element(m.total_bytes.begin(), m.total_bytes.end());
    r.mfu = m.mfu;
}

// Over the GPU's memory or the grid's cap: keep the metrics, say which device and by how much.
void classify_memory(Result& r, const Analysis& a) {
    if (a.model) {
        const ModelAnalysis& m = *a.model;
        if (!m.over_capacity.empty()) {
            const auto d = static_cast<std::size_t>(m.over_capacity.front());
            r.status = Status::over_memory;
            r.reason = fmt::format("device {} needs {:.2f} GiB, more than the {:.2f} GiB of {}", d,
                                   m.total_bytes[d] / gib, m.gpu.memory_bytes / gib, m.gpu.name);
            return;
        }
    }
    if (r.job.mem_limit <= 0) return;
    const double peak = a.model ? r.peak_memory : r.peak_activation;
    if (peak > r.job.mem_limit) {
        r.status = Status::over_memory;
        r.reason = a.model ? fmt::format("peak {:.2f} GiB exceeds the cap of {:.2f} GiB",
                                         peak / gib, r.job.mem_limit / gib)
                           : fmt::format("peak activation {:g} exceeds the cap of {:g}", peak,
                                         r.job.mem_limit);
    }
}

void run_analytic(Result& r) {
    const Analysis a = analyze(analyze_options(r.job));
    fill(r, a, r.job.dp);
    if (a.model) {
        // The replay has no gradient all-reduce: dp replicas each run this pipeline.
        r.samples_per_second = a.model->samples_per_second * r.job.dp;
        r.tokens_per_second = a.model->tokens_per_second * r.job.dp;
        r.samples_per_second_per_gpu = r.samples_per_second / r.gpus;
    }
    r.iteration_time = a.metrics.makespan;
    classify_memory(r, a);
}

void run_simgrid(Result& r) {
    SimulateJob sj;
    sj.options = analyze_options(r.job);
    sj.schedule = generate_planned(sj.options);
    sj.cluster = load_cluster(r.job.cluster);
    sj.layout.dp = r.job.dp;
    sj.layout.tp = r.job.tp;
    sj.layout.pp = r.job.p;
    check_layout(sj.layout, sj.cluster);  // before any SimGrid work: a clear infeasible row
    sj.sim.record_transfers = false;
    const SimulateRun run = run_simulate_job(std::move(sj));
    fill(r, run.analysis, r.job.dp);
    if (run.analysis.model) {
        r.samples_per_second = run.analysis.model->samples_per_second;
        r.tokens_per_second = run.analysis.model->tokens_per_second;
        r.samples_per_second_per_gpu = r.samples_per_second / r.gpus;
    }
    r.iteration_time = run.result.iteration_time;
    classify_memory(r, run.analysis);
}

}  // namespace

AnalyzeOptions analyze_options(const Job& job) {
    AnalyzeOptions o;
    o.schedule = job.schedule;
    o.generator.devices = job.p;
    o.generator.microbatches = job.m;
    o.generator.chunks = job.v;
    o.costs = {job.costs};
    o.comm_latency = job.comm;
    o.mem_w_ratio = job.mem_w_ratio;
    if (!job.model.empty()) {
        ModelRunOptions m;
        m.model = job.model;
        m.gpu = job.gpu;
        m.workload.microbatch = job.mb;
        m.workload.tp = job.tp;
        m.workload.recompute = recompute_of(job.recompute);
        m.optimizer.data_parallel = job.dp;
        o.model = m;
    }
    return o;
}

Result run_job(const Job& job) {
    Result r;
    r.job = job;
    try {
        if (job.engine == Engine::analytic)
            run_analytic(r);
        else
            run_simgrid(r);
    } catch (const std::invalid_argument& e) {
        r = Result{};
        r.job = job;
        r.status = Status::infeasible;
        r.reason = e.what();
    } catch (const std::exception& e) {
        r = Result{};
        r.job = job;
        r.status = Status::error;
        r.reason = e.what();
    }
    // The results file holds finite numbers only (its reader rejects nan and inf).
    for (double x : {r.makespan, r.bubble_rate, r.bubble_time, r.peak_activation, r.peak_memory,
                     r.throughput, r.samples_per_second, r.samples_per_second_per_gpu,
                     r.tokens_per_second, r.mfu, r.iteration_time})
        if (!std::isfinite(x)) {
            r = Result{};
            r.job = job;
            r.status = Status::infeasible;
            r.reason = "a metric is not finite (do all costs equal 0?)";
            break;
        }
    return r;
}

}  // namespace pipesim::sweep
