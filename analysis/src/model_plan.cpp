#include "analysis/model_plan.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "models/cost_model.hpp"
#include "models/gpu_json.hpp"
#include "models/presets.hpp"
#include "models/roofline.hpp"

namespace pipesim::analysis {

bool uses_operator_model(const ModelSpec& options) {
    return options.calibration_file.empty() && !(options.efficiency > 0);
}

ModelAnalysis plan_model(const ModelSpec& options, int stages, std::span<const int> stage_device) {
    ModelAnalysis result;
    result.config = models::resolve_model(options.model);
    result.gpu = models::resolve_gpu(options.gpu);
    result.workload = options.workload;
    // The workload as plan_pipeline() times it, which `--kernels` lists: its gradients are the
    // optimizer's.
    result.workload.grad_bytes = options.optimizer.grad_bytes;
    std::unique_ptr<models::CostModel> cost_model;
    if (!options.calibration_file.empty() && options.efficiency > 0)
        throw std::invalid_argument(
            "--calibration and --efficiency are alternatives: a calibration file times the "
            "layers it measured, and the others at its own measured efficiencies");
    if (!uses_operator_model(options)) {
        // Kernel choices only the operator model times: beside the other two they changed
        // nothing, without a word.
        const models::Workload& w = options.workload;
        const char* kernel_flag = !w.persistent_norm ? "--no-persist-layer-norm"
                                  : !w.grad_accumulation_fusion
                                      ? "--no-gradient-accumulation-fusion"
                                  : w.cross_entropy_fusion ? "--cross-entropy-loss-fusion"
                                                           : nullptr;
        if (kernel_flag)
            throw std::invalid_argument(fmt::format(
                "{} chooses kernels of the operator-level model, which {} replaces ({}): it "
                "would change nothing; leave one of the two out",
                kernel_flag, options.efficiency > 0 ? "--efficiency" : "--calibration",
                options.efficiency > 0 ? "one efficiency for all work"
                                       : "the file's measured times and efficiencies"));
    }
    if (!options.calibration_file.empty()) {
        models::Calibration calibration;
        try {
            calibration = models::load_calibration(options.calibration_file);
        } catch (const std::invalid_argument& e) {
            // "4: cannot read: ..." says what 4 is (in Python, where no flag is beside it).
            throw std::invalid_argument(fmt::format("calibration file {}", e.what()));
        }
        auto calibrated =
            std::make_unique<models::CalibratedCostModel>(result.gpu, std::move(calibration));
        // Say which of the two ways the file was used: a layer shape that matches no entry
        // (a different microbatch, say) runs at the file's median efficiencies.
        result.cost_source = fmt::format(
            "calibration {}: {}", options.calibration_file,
            calibrated->measured(result.config, result.workload) ? "the layer's measured times"
            : result.workload.cp > 1
                ? "its entries time whole layers, not a context-parallel rank's share, so the "
                  "file's measured efficiencies"
                : "no entry has the layer's shape, so the file's measured efficiencies");
        cost_model = std::move(calibrated);
    } else if (options.efficiency > 0) {
        cost_model = std::make_unique<models::AnalyticCostModel>(result.gpu, options.efficiency);
        result.cost_source = fmt::format("analytic, efficiency {:g}", options.efficiency);
    } else {
        cost_model = std::make_unique<models::OperatorCostModel>(result.gpu);
        result.cost_source = "operator rooflines";
    }
    result.operator_model = uses_operator_model(options);
    result.plan = models::plan_pipeline(result.config, result.workload, options.optimizer,
                                        *cost_model, stages, options.partition, stage_device);
    return result;
}

ModelAnalysis plan_model(const ModelSpec& given, const Schedule& schedule) {
    // The unfused gradient accumulation runs on all but the first of the iteration's
    // microbatches (Workload::iteration_microbatches).
    ModelSpec options = given;
    options.workload.iteration_microbatches = schedule.microbatches;
    const int stages = schedule.stages();
    if (schedule.microbatch_stages.empty()) return plan_model(options, stages);
    // Each stage's offset in the copy of the model that contains it.
    const int length =
        schedule.microbatch_stages.front().last - schedule.microbatch_stages.front().first + 1;
    std::vector<int> offset(static_cast<std::size_t>(stages), -1);
    for (const StageRange& r : schedule.microbatch_stages) {
        if (r.last - r.first + 1 != length)
            throw std::invalid_argument(fmt::format(
                "schedule '{}': model-based costs need every microbatch's stage range to be a "
                "whole model copy of the same length ({} and {} stages)",
                schedule.name, length, r.last - r.first + 1));
        for (int s = r.first; s <= r.last; ++s) {
            int& o = offset[static_cast<std::size_t>(s)];
            if (o >= 0 && o != s - r.first)
                throw std::invalid_argument(fmt::format(
                    "schedule '{}': stage {} is at offset {} of one microbatch's range and {} "
                    "of another's; model-based costs need whole model copies",
                    schedule.name, s, o, s - r.first));
            o = s - r.first;
        }
    }
    ModelAnalysis result = plan_model(options, length);
    std::vector<models::StagePlan> expanded;
    expanded.reserve(static_cast<std::size_t>(stages));
    for (int s = 0; s < stages; ++s) {
        const int o = offset[static_cast<std::size_t>(s)];
        if (o < 0)
            throw std::invalid_argument(fmt::format(
                "schedule '{}': no microbatch passes through stage {}", schedule.name, s));
        expanded.push_back(result.plan.stages[static_cast<std::size_t>(o)]);
    }
    result.plan.stages = std::move(expanded);
    return result;
}

StageCosts stage_costs_from_plan(const models::PipelinePlan& plan, TpComm tp_comm) {
    const double with_comm = tp_comm == TpComm::in_passes ? 1 : 0;
    StageCosts costs;
    for (const models::StagePlan& s : plan.stages) {
        costs.forward.push_back(s.times.forward +
                                with_comm * (s.tp_comm_times.forward + s.cp_ring_times.forward));
        costs.backward_input.push_back(
            s.times.backward_input +
            with_comm * (s.tp_comm_times.backward_input + s.cp_ring_times.backward_input));
        costs.backward_weight.push_back(s.times.backward_weight +
                                        with_comm * s.tp_comm_times.backward_weight);
    }
    return costs;
}

MemoryModel memory_model_from_plan(const models::PipelinePlan& plan) {
    MemoryModel memory;
    for (const models::StagePlan& s : plan.stages) {
        memory.activation.push_back(s.memory.activation);
        memory.held_for_w.push_back(s.memory.held_for_w);
    }
    return memory;
}

void summarize_model(ModelAnalysis& model, const Schedule& schedule, const Metrics& metrics, int dp,
                     double iteration_time, const std::vector<double>& device_windows,
                     double gpu_speed) {
    const auto devices = static_cast<std::size_t>(schedule.devices);
    model.static_bytes.assign(devices, 0.0);
    for (std::size_t s = 0; s < model.plan.stages.size(); ++s)
        model.static_bytes[static_cast<std::size_t>(schedule.stage_device[s])] +=
            model.plan.stages[s].static_bytes;
    model.activation_bytes.assign(devices, 0.0);
    model.total_bytes.assign(devices, 0.0);
    model.over_capacity.clear();
    if (model.device_gpu.size() != devices) model.device_gpu.assign(devices, model.gpu);
    for (std::size_t d = 0; d < devices; ++d) {
        model.activation_bytes[d] = metrics.devices[d].peak_activation;
        model.total_bytes[d] = model.static_bytes[d] + model.activation_bytes[d];
        if (model.total_bytes[d] > model.device_gpu[d].memory_bytes)
            model.over_capacity.push_back(static_cast<int>(d));
    }
    model.gpus = dp * schedule.devices * model.workload.tp * model.workload.cp;
    std::vector<double> optimizer(devices, 0.0);
    for (std::size_t s = 0; s < model.plan.stages.size(); ++s)
        optimizer[static_cast<std::size_t>(schedule.stage_device[s])] +=
            model.plan.stages[s].optimizer_seconds;
    model.optimizer_seconds =
        optimizer.empty() ? 0.0 : *std::max_element(optimizer.begin(), optimizer.end());
    if (iteration_time <= 0) return;
    model.step_time = iteration_time + model.optimizer_seconds;
    if (device_windows.size() == devices) {
        model.step_time = 0;
        for (std::size_t d = 0; d < devices; ++d)
            model.step_time = std::max(model.step_time, device_windows[d] + optimizer[d]);
    }
    const double microbatches = static_cast<double>(dp) * schedule.microbatches;
    model.samples_per_second = microbatches * model.plan.samples_per_microbatch / model.step_time;
    model.tokens_per_second = microbatches * model.plan.tokens_per_microbatch / model.step_time;
    model.mfu = microbatches * model.plan.model_flops_per_microbatch /
                (model.step_time * model.gpus * model.gpu.peak_bf16_flops * gpu_speed);
}

}  // namespace pipesim::analysis
