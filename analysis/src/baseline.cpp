// The 1F1B baseline a run's speed-up is measured against: the same inputs, 1F1B's order.
#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "analysis/child_run.hpp"
#include "analysis/phases.hpp"
#include "analysis/run.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::analysis {

namespace {

// Each device's mean F, B, W per microbatch over the stages every microbatch passes through.
std::vector<PassCosts> device_work(const Schedule& schedule, const StageCosts& costs) {
    std::vector<PassCosts> work(static_cast<std::size_t>(schedule.devices), PassCosts{0, 0, 0});
    for (int mb = 0; mb < schedule.microbatches; ++mb) {
        const StageRange range = schedule.stages_of(mb);
        for (int s = range.first; s <= range.last; ++s) {
            const auto i = static_cast<std::size_t>(s);
            PassCosts& w = work[static_cast<std::size_t>(schedule.stage_device[i])];
            w.forward += costs.forward[i];
            w.backward_input += costs.backward_input[i];
            w.backward_weight += costs.backward_weight[i];
        }
    }
    const double m = schedule.microbatches > 0 ? schedule.microbatches : 1;
    for (PassCosts& w : work) {
        w.forward /= m;
        w.backward_input /= m;
        w.backward_weight /= m;
    }
    return work;
}

// The iteration time of `spec` on `engine`, 0 when it fails. SimGrid runs once per process, so
// a SimGrid run goes to a child process.
double iteration_time_of(const PipelineSpec& spec, const Engine& engine) {
    try {
        if (const auto* analytic = std::get_if<AnalyticEngine>(&engine)) {
            AnalyticEngine bare = *analytic;  // its gradient reduction as the run's
            bare.record_transfers = bare.record_ops = false;
            return run(spec, bare).iteration_time;
        }
        simgrid::load_engine();  // once, here, rather than in the child and again for the run
        const std::string time = run_in_child([&] {
            SimGridEngine quiet = std::get<SimGridEngine>(engine);
            quiet.options.progress = nullptr;  // the parent's run shows its progress
            return fmt::format("{:.17g}", run(spec, quiet).iteration_time);
        });
        const double value = std::stod(time);
        return std::isfinite(value) ? value : 0;
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace

PipelineSpec one_f_one_b_spec(const Pipeline& pipeline) {
    PipelineSpec spec = pipeline.spec;
    spec.given.reset();
    spec.schedule = "1f1b";
    spec.generator = GeneratorOptions{pipeline.schedule.devices, pipeline.schedule.microbatches};
    spec.step_exchange = false;  // 1F1B exchanges after each pass either way
    // One full-stage triple is 1F1B's stage as it is; triples per virtual stage become each
    // device's work per microbatch.
    if (!spec.costs.model && spec.costs.passes.size() != 1)
        spec.costs.passes = device_work(pipeline.schedule, pipeline.costs);
    return spec;
}

Analysis run_with_baseline(const PipelineSpec& spec, const Engine& engine) {
    return run_with_baseline(prepare(spec, engine), engine);
}

Analysis run_with_baseline(Pipeline pipeline, const Engine& engine) {
    // A generated 1F1B is its own baseline: one_f_one_b_spec() would give the same run.
    const bool own_baseline = !pipeline.spec.given && pipeline.spec.schedule == "1f1b";
    if (!own_baseline) report_phase("timing the 1F1B baseline");
    const double other = own_baseline ? 0 : iteration_time_of(one_f_one_b_spec(pipeline), engine);
    Analysis a = run(std::move(pipeline), engine);
    const double baseline = own_baseline ? a.iteration_time : other;
    a.baseline_1f1b_time = baseline;
    a.speedup_1f1b = baseline > 0 && a.iteration_time > 0 ? baseline / a.iteration_time : 0;
    return a;
}

}  // namespace pipesim::analysis
