#include "sweep/job.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/cluster_workload.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "fileio/memory_budget.hpp"

namespace pipesim::sweep {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

using analysis::Analysis;

// The metrics of a run on either engine; `dp` replicas run side by side.
void fill(Result& r, const Analysis& a) {
    r.chunks = a.schedule.chunks;
    r.makespan = a.metrics.makespan;
    r.bubble_rate = a.metrics.bubble_rate;
    r.bubble_time = a.metrics.bubble_time;
    r.peak_activation = a.metrics.peak_activation_max;
    r.throughput = analysis::microbatch_throughput(a);
    r.gpus = a.schedule.devices * r.job.tp * r.job.cp * a.dp;
    r.iteration_time = a.iteration_time;
    r.efficiency = a.metrics.efficiency;
    r.speedup_1f1b = a.speedup_1f1b;
    r.lifespan_max = a.metrics.lifespan_max;
    r.lifespan_mean = a.metrics.lifespan_mean;
    if (!a.model) return;
    const analysis::ModelAnalysis& m = *a.model;
    r.peak_memory = *std::max_element(m.total_bytes.begin(), m.total_bytes.end());
    r.mfu = m.mfu;
    r.samples_per_second = m.samples_per_second;
    r.tokens_per_second = m.tokens_per_second;
    r.samples_per_second_per_gpu = r.samples_per_second / r.gpus;
}

// Over the GPU's memory or the grid's cap: keep the metrics, say which device and by how much.
void classify_memory(Result& r, const Analysis& a) {
    if (a.model) {
        const analysis::ModelAnalysis& m = *a.model;
        if (!m.over_capacity.empty()) {
            // The device that needs the most, whose figure is the row's peak_memory (the
            // first one over once named 92.53 GiB beside a peak of 100.89).
            auto d = static_cast<std::size_t>(m.over_capacity.front());
            for (const int over : m.over_capacity)
                if (m.total_bytes[static_cast<std::size_t>(over)] > m.total_bytes[d])
                    d = static_cast<std::size_t>(over);
            r.status = Status::over_memory;
            // The figures the run's own warning gives (analysis::memory_warnings).
            const auto [need, capacity] =
                analysis::memory_over(m.total_bytes[d], m.device_gpu[d].memory_bytes);
            r.reason = fmt::format("device {} needs {}, more than the {} of {}{}", d, need,
                                   capacity, m.device_gpu[d].name,
                                   m.over_capacity.size() > 1
                                       ? fmt::format(" ({} of {} devices are over)",
                                                     m.over_capacity.size(), m.total_bytes.size())
                                       : "");
            return;
        }
    }
    if (r.job.mem_limit <= 0) return;
    // Per device: the whole device's bytes with a model, else its peak activation.
    std::vector<double> need;
    if (a.model)
        need = a.model->total_bytes;
    else
        for (const auto& d : a.metrics.devices)
            need.push_back(d.peak_activation);
    // A peak is a sum of memory steps: within rounding of the cap it is the cap (p 3, m 6,
    // v 5 held 3.400000000000001 of a 3.4 cap, fifths of a stage added up).
    const double cap = r.job.mem_limit * (1 + 1e-9);
    const auto peak = std::max_element(need.begin(), need.end());
    if (peak == need.end() || *peak <= cap) return;
    const auto over =
        std::count_if(need.begin(), need.end(), [&](double bytes) { return bytes > cap; });
    const std::string how_many =
        over > 1 ? fmt::format(" ({} of {} devices are over)", over, need.size()) : "";
    r.status = Status::over_memory;
    if (a.model) {
        const auto [need_text, cap_text] = analysis::memory_over(*peak, r.job.mem_limit);
        r.reason = fmt::format("device {} needs {}, more than the cap of {}{}", peak - need.begin(),
                               need_text, cap_text, how_many);
    } else {
        r.reason = fmt::format(
            "device {} holds a peak activation of {:g}, more than the cap of "
            "{:g}{}",
            peak - need.begin(), *peak, r.job.mem_limit, how_many);
    }
}

}  // namespace

analysis::Engine job_engine(const Job& job) {
    if (job.engine == Engine::analytic)
        return analysis::AnalyticEngine{.record_transfers = false,
                                        .record_ops = false,
                                        .overlap_grad_reduce = job.overlap_grad_reduce,
                                        .overlap_param_gather = job.overlap_param_gather,
                                        .post_validation = job.post_validation};
    analysis::SimGridEngine engine;
    engine.cluster = analysis::load_checked_cluster(job.cluster);
    engine.options.record_transfers = false;
    engine.options.overlap_grad_reduce = job.overlap_grad_reduce;
    engine.options.overlap_param_gather = job.overlap_param_gather;
    engine.options.post_validation = job.post_validation;
    if (!job.nccl_algo.empty()) engine.options.nccl_algo = simgrid::parse_nccl_algo(job.nccl_algo);
    simgrid::Layout layout{job.dp, job.p, job.tp};
    layout.cp = job.cp;
    simgrid::check_layout(layout, engine.cluster);  // before any other work: a clear infeasible row
    return engine;
}

namespace {

// The combinations `pipesim analyze` and `simulate` refuse as flags, as infeasible rows.
void check_parallelism(const Job& job) {
    if (job.global_batch > 0 && job.m == 0)
        throw std::invalid_argument(
            fmt::format("the global batch of {} sequences is not a multiple of mb·dp = {}·{} = {}",
                        job.global_batch, job.mb, job.dp, static_cast<long long>(job.mb) * job.dp));
    if (job.zero > 0 && job.dp * job.cp < 2)
        throw std::invalid_argument(
            fmt::format("ZeRO stage {} shards over the data- and context-parallel ranks, and "
                        "dp·cp = 1",
                        job.zero));
    if (job.tp_comm_overlap && job.tp < 2)
        throw std::invalid_argument("tp_comm_overlap needs tp > 1");
    if (job.overlap_param_gather && (job.zero < 1 || job.zero > 2))
        throw std::invalid_argument(
            "overlap_param_gather moves the parameter all-gather of ZeRO stage 1 or 2");
}

}  // namespace

analysis::PipelineSpec pipeline_spec(const Job& job) {
    analysis::PipelineSpec spec;
    spec.schedule = job.schedule;
    spec.generator.devices = job.p;
    spec.generator.microbatches = job.m;
    spec.generator.chunks = job.v;
    spec.costs.passes = {PassCosts{job.costs[0], job.costs[1], job.costs[2]}};
    spec.costs.mem_w_ratio = job.mem_w_ratio;
    spec.comm_latency = job.comm;
    spec.dp = job.dp;
    spec.tp = job.tp;
    spec.step_exchange = !job.overlap_p2p_communication;
    if (!job.model.empty()) {
        analysis::ModelSpec m;
        m.model = job.model;
        m.gpu = job.gpu;
        m.workload.microbatch = job.mb;
        m.workload.recompute = models::parse_recompute(job.recompute);
        m.workload.attention = models::parse_attention_kernel(job.attention);
        m.workload.cp = job.cp;
        m.workload.tp_comm_overlap = job.tp_comm_overlap;
        m.optimizer.zero_stage = job.zero;
        m.partition = {job.first_stage_layers, job.last_stage_layers};
        spec.costs.model = m;
    }
    return spec;
}

Result run_job(const Job& job) {
    Result r;
    r.job = job;
    try {
        check_parallelism(job);
        const analysis::Engine engine = job_engine(job);
        const Analysis a = analysis::run_with_baseline(pipeline_spec(job), engine);
        fill(r, a);
        classify_memory(r, a);
    } catch (const fileio::OverMemoryBudget& e) {
        // Too large for this machine or its `ulimit -v`, not for the configuration: an error,
        // which a resumed sweep runs again.
        r = Result{};
        r.job = job;
        r.status = Status::error;
        r.reason = e.what();
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
    for (double x :
         {r.makespan, r.bubble_rate, r.bubble_time, r.peak_activation, r.peak_memory, r.throughput,
          r.samples_per_second, r.samples_per_second_per_gpu, r.tokens_per_second, r.mfu,
          r.iteration_time, r.efficiency, r.speedup_1f1b, r.lifespan_max, r.lifespan_mean})
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
