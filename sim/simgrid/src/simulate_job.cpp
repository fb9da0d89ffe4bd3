#include "sim/simgrid/simulate_job.hpp"

#include <utility>

#include "sim/model_costs.hpp"

namespace pipesim {

SimulateRun run_simulate_job(SimulateJob job) {
    SimulateRun run;
    run.layout = job.layout;
    run.layout.pp = job.schedule.devices;
    AnalyzeOptions& options = job.options;
    if (options.model) {
        options.model->workload.tp = run.layout.tp;
        options.model->optimizer.data_parallel = run.layout.dp;
    }
    Analysis& analysis = run.analysis;
    analysis.schedule = std::move(job.schedule);
    const Schedule& schedule = analysis.schedule;
    Workload workload;
    if (options.model) {
        analysis.model = plan_model(*options.model, schedule);
        workload = workload_from_plan(analysis.model->plan, schedule, analysis.model->gpu.name);
        run.memory = memory_model_from_plan(analysis.model->plan);
    } else {
        const StageCosts costs =
            stage_costs_from_triples(options.costs, schedule.devices, schedule.chunks);
        workload = simple_workload(costs, schedule.devices, job.message_bytes, job.grad_bytes);
        run.memory = unit_memory_model(schedule.devices, schedule.chunks, options.mem_w_ratio);
    }
    analysis.costs = workload.costs;
    run.result = simulate(schedule, workload, job.cluster, run.layout, job.sim);
    analysis.timeline = run.result.timeline;
    analysis.metrics = compute_metrics(analysis.timeline, run.memory);
    if (analysis.model) {
        ModelAnalysis& model = *analysis.model;
        summarize_model(model, schedule, analysis.metrics);
        // Per iteration of all replicas, including the gradient all-reduce.
        const Layout& layout = run.layout;
        const double samples = static_cast<double>(layout.dp) * schedule.microbatches *
                               model.plan.samples_per_microbatch;
        model.gpus = layout.gpus();
        model.samples_per_second = samples / run.result.iteration_time;
        model.tokens_per_second = model.samples_per_second * model.plan.tokens_per_microbatch /
                                  model.plan.samples_per_microbatch;
        model.mfu = layout.dp * schedule.microbatches * model.plan.model_flops_per_microbatch /
                    (run.result.iteration_time * model.gpus * model.gpu.peak_bf16_flops);
    }
    return run;
}

}  // namespace pipesim
