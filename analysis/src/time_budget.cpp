#include "analysis/time_budget.hpp"

#include <cmath>
#include <stdexcept>

#include "models/roofline.hpp"

namespace pipesim::analysis {

namespace {

// A stage's kernel seconds per pass, split by share (operator-level model), and the
// recomputed forward kernels' share of its B.
struct StageSplit {
    std::array<models::PassTimes, kernel_share_count> shares{};
    double recompute = 0;
};

void add(models::PassTimes& to, const models::PassTimes& t, double times = 1) {
    to.forward += times * t.forward;
    to.backward_input += times * t.backward_input;
    to.backward_weight += times * t.backward_weight;
}

// The seconds per pass of the kernels of `kernels` in `share`, with `recompute`'s rule for
// which forward kernels B re-runs (models::pass_seconds()).
models::PassTimes share_seconds(const models::GpuSpec& gpu, const std::vector<LayerKernel>& kernels,
                                KernelShare share, models::Recompute recompute) {
    std::vector<models::Operator> ops;
    for (const LayerKernel& kernel : kernels)
        if (kernel_share(kernel) == share) ops.push_back(kernel.op);
    return models::pass_seconds(gpu, ops, recompute);
}

std::vector<StageSplit> stage_splits(const ModelAnalysis& model) {
    const LayerKernels k = layer_kernels(model);
    const models::Recompute recompute = model.workload.recompute;
    std::array<models::PassTimes, kernel_share_count> layer{}, embedding{}, head{};
    for (std::size_t i = 0; i < kernel_share_count; ++i) {
        const auto share = static_cast<KernelShare>(i);
        layer[i] = share_seconds(model.gpu, k.kernels, share, recompute);
        embedding[i] = share_seconds(model.gpu, k.embedding, share, models::Recompute::none);
        head[i] = share_seconds(model.gpu, k.head, share, models::Recompute::none);
    }
    std::vector<StageSplit> splits;
    for (const models::StagePlan& s : model.plan.stages) {
        StageSplit split;
        for (std::size_t i = 0; i < kernel_share_count; ++i) {
            add(split.shares[i], layer[i], s.layers);
            if (s.has_embedding) add(split.shares[i], embedding[i]);
            if (s.has_head) add(split.shares[i], head[i]);
        }
        split.recompute = s.layers * k.recomputed_seconds;
        splits.push_back(split);
    }
    return splits;
}

// `difference` of two sums of magnitude `scale`, 0 where it is rounding: a part in 1e9 of
// `scale`, or `rounding` where that is more.
double settled(double difference, double scale, double rounding = 0) {
    return std::abs(difference) <= std::max(1e-9 * std::abs(scale), rounding) ? 0.0 : difference;
}

// Seconds of `pass` in `t` (BW: B and W).
double pass_time(const models::PassTimes& t, Pass pass) {
    switch (pass) {
        case Pass::F:
            return t.forward;
        case Pass::B:
            return t.backward_input;
        case Pass::W:
            return t.backward_weight;
        case Pass::BW:
            return t.backward_input + t.backward_weight;
    }
    return 0;
}

void accumulate(DeviceTime& to, const DeviceTime& d) {
    for (std::size_t i = 0; i < kernel_share_count; ++i)
        to.shares[i] += d.shares[i];
    to.kernels += d.kernels;
    to.recompute += d.recompute;
    to.communication += d.communication;
    to.pipeline_idle += d.pipeline_idle;
    to.data_parallel += d.data_parallel;
    to.optimizer += d.optimizer;
}

nlohmann::ordered_json device_json(const DeviceTime& d, bool shares) {
    nlohmann::ordered_json j;
    if (shares) {
        j["gemm"] = d.shares[0];
        j["attention"] = d.shares[1];
        j["memory_bound"] = d.shares[2];
    }
    j["kernels"] = d.kernels;
    j["recompute"] = d.recompute;
    j["communication"] = d.communication;
    j["pipeline_idle"] = d.pipeline_idle;
    j["data_parallel"] = d.data_parallel;
    j["optimizer"] = d.optimizer;
    return j;
}

}  // namespace

KernelShare kernel_share(const LayerKernel& kernel) {
    if (kernel.op.kind == models::OpKind::attention) return KernelShare::attention;
    return kernel.time.compute_bound() ? KernelShare::gemm : KernelShare::memory;
}

const char* kernel_share_label(KernelShare share) {
    switch (share) {
        case KernelShare::gemm:
            return "compute-bound GEMMs";
        case KernelShare::attention:
            return "fused attention";
        case KernelShare::memory:
            return "memory-bound kernels";
    }
    return "";
}

TimeBudget time_budget(const Analysis& a) {
    if (!a.model) throw std::invalid_argument("a time budget needs a model (--model)");
    const ModelAnalysis& model = *a.model;
    const Schedule& schedule = a.schedule;
    const auto devices = static_cast<std::size_t>(schedule.devices);
    TimeBudget budget;
    budget.step_time = model.step_time;
    budget.kernel_shares = model.operator_model;
    const std::vector<StageSplit> splits =
        model.operator_model ? stage_splits(model) : std::vector<StageSplit>{};
    budget.devices.assign(devices, DeviceTime{});
    std::vector<double> optimizer(devices, 0.0);
    for (std::size_t s = 0; s < model.plan.stages.size(); ++s)
        optimizer[static_cast<std::size_t>(schedule.stage_device[s])] +=
            model.plan.stages[s].optimizer_seconds;
    const bool windows = a.post_validation && a.device_windows.size() == devices;
    for (std::size_t d = 0; d < devices; ++d) {
        DeviceTime& t = budget.devices[d];
        for (const Op& op : schedule.device_ops[d]) {
            const auto s = static_cast<std::size_t>(op.stage);
            t.kernels += pass_time(model.plan.stages[s].times, op.pass);
            if (splits.empty()) continue;
            for (std::size_t i = 0; i < kernel_share_count; ++i)
                t.shares[i] += pass_time(splits[s].shares[i], op.pass);
            if (op.pass == Pass::B || op.pass == Pass::BW) t.recompute += splits[s].recompute;
        }
        // On a cluster of other GPUs, or slowed by a straggler, the kernels took that many
        // times the plan's (SimResult::device_slowdown).
        if (a.cluster && a.cluster->result.device_slowdown.size() == devices) {
            const double slowdown = a.cluster->result.device_slowdown[d];
            t.kernels *= slowdown;
            t.recompute *= slowdown;
            for (double& share : t.shares)
                share *= slowdown;
        }
        const DeviceMetrics& dm = a.metrics.devices[d];
        // Busy time is summed op by op in the replay, the kernels stage by stage: equal sums
        // may differ in the last bits.
        // The replay's busy time sums end − start op by op, each as exact as times of the
        // makespan's size are (a huge latency makes them coarse: 2e-8 s at 1e8 s).
        const double op_rounding =
            static_cast<double>(schedule.device_ops[d].size()) * a.metrics.makespan * 0x1p-51;
        t.communication = settled(dm.busy - t.kernels, dm.busy, op_rounding);
        if (windows) {
            // The device's own window and step; the rest of the period it waits.
            t.data_parallel = a.device_windows[d] - dm.span;
            t.optimizer = optimizer[d];
        } else {
            // Every device runs until the makespan, waits for the last reduction, then steps
            // with the others.
            t.data_parallel = a.iteration_time - a.metrics.makespan;
            t.optimizer = model.step_time - a.iteration_time;
        }
        t.pipeline_idle =
            settled(model.step_time - dm.busy - t.data_parallel - t.optimizer, model.step_time);
        accumulate(budget.all, t);
    }
    return budget;
}

std::vector<StepShare> step_shares(const DeviceTime& time, double whole, bool kernel_shares) {
    std::vector<StepShare> shares;
    auto add_share = [&](const char* key, double seconds) {
        shares.push_back({key, whole > 0 ? seconds / whole : 0.0});
    };
    if (kernel_shares) {
        add_share("gemm", time.shares[0]);
        add_share("attention", time.shares[1]);
        add_share("memory_bound", time.shares[2]);
    } else {
        add_share("kernels", time.kernels);
    }
    add_share("communication", time.communication);
    add_share("pipeline_idle", time.pipeline_idle);
    add_share("data_parallel", time.data_parallel);
    add_share("optimizer", time.optimizer);
    return shares;
}

std::vector<StepShare> step_shares(const TimeBudget& budget) {
    return step_shares(budget.all, budget.step_time * static_cast<double>(budget.devices.size()),
                       budget.kernel_shares);
}

std::string step_share_label(std::string_view key) {
    static constexpr std::pair<std::string_view, std::string_view> labels[] = {
        {"gemm", "GEMMs"},
        {"attention", "attention"},
        {"memory_bound", "memory-bound"},
        {"kernels", "kernels"},
        {"communication", "communication"},
        {"pipeline_idle", "pipeline idle"},
        {"data_parallel", "data-parallel"},
        {"optimizer", "optimizer"}};
    for (const auto& [k, label] : labels)
        if (k == key) return std::string(label);
    return std::string(key);
}

nlohmann::ordered_json time_budget_json(const TimeBudget& budget) {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const DeviceTime& d : budget.devices)
        devices.push_back(device_json(d, budget.kernel_shares));
    return {{"step_time", budget.step_time},
            {"devices", std::move(devices)},
            {"all", device_json(budget.all, budget.kernel_shares)}};
}

}  // namespace pipesim::analysis
