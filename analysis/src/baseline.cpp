// The 1F1B baseline a run's speed-up is measured against: the same inputs, 1F1B's order.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <exception>
#include <utility>

#include "analysis/run.hpp"

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

constexpr AnalyticEngine bare_replay{.record_transfers = false, .record_ops = false};

// The iteration time of `spec` on `engine`, 0 when it fails. SimGrid runs once per process, so
// a SimGrid run goes to a child process that writes its figure into a pipe.
double iteration_time_of(const PipelineSpec& spec, const Engine& engine) {
    if (std::holds_alternative<AnalyticEngine>(engine)) {
        try {
            return run(spec, bare_replay).iteration_time;
        } catch (const std::exception&) {
            return 0;
        }
    }
    int fds[2];
    if (pipe(fds) != 0) return 0;
    const pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (child == 0) {
        close(fds[0]);
        SimGridEngine quiet = std::get<SimGridEngine>(engine);
        quiet.options.progress = nullptr;  // the parent's run shows its progress
        double time = 0;
        try {
            time = run(spec, quiet).iteration_time;
        } catch (...) {
            time = 0;
        }
        const ssize_t written = write(fds[1], &time, sizeof time);
        _exit(written == static_cast<ssize_t>(sizeof time) ? 0 : 1);
    }
    close(fds[1]);
    double time = 0;
    std::size_t got = 0;
    auto* bytes = reinterpret_cast<char*>(&time);
    while (got < sizeof time) {
        const ssize_t n = read(fds[0], bytes + got, sizeof time - got);
        if (n > 0)
            got += static_cast<std::size_t>(n);
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return got == sizeof time && std::isfinite(time) ? time : 0;
}

}  // namespace

PipelineSpec one_f_one_b_spec(const Pipeline& pipeline) {
    PipelineSpec spec = pipeline.spec;
    spec.given.reset();
    spec.schedule = "1f1b";
    spec.generator = GeneratorOptions{pipeline.schedule.devices, pipeline.schedule.microbatches};
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
    const double baseline = iteration_time_of(one_f_one_b_spec(pipeline), engine);
    Analysis a = run(std::move(pipeline), engine);
    a.baseline_1f1b_time = baseline;
    a.speedup_1f1b = baseline > 0 && a.iteration_time > 0 ? baseline / a.iteration_time : 0;
    return a;
}

}  // namespace pipesim::analysis
