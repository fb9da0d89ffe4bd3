#include "models/cost_model.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::models {

namespace {

void check_efficiency(double e, const char* pass) {
    if (!(e >= least_efficiency && e <= 1))
        throw std::invalid_argument(
            fmt::format("{} efficiency must be in {:g}..1, got {:g}", pass, least_efficiency, e));
}

}  // namespace

AnalyticCostModel::AnalyticCostModel(GpuSpec gpu, double efficiency)
    : AnalyticCostModel(std::move(gpu), efficiency, efficiency, efficiency) {}

AnalyticCostModel::AnalyticCostModel(GpuSpec gpu, double forward_eff, double backward_input_eff,
                                     double backward_weight_eff)
    : gpu_(std::move(gpu)), efficiency_{forward_eff, backward_input_eff, backward_weight_eff} {
    check_efficiency(forward_eff, "F");
    check_efficiency(backward_input_eff, "B");
    check_efficiency(backward_weight_eff, "W");
    if (!(gpu_.peak_bf16_flops > 0))
        throw std::invalid_argument(fmt::format("GPU '{}' has no peak FLOP rate", gpu_.name));
}

double AnalyticCostModel::seconds(double flops, int pass) const {
    return flops / (gpu_.peak_bf16_flops * efficiency_[pass]);
}

PassTimes AnalyticCostModel::layer(const TransformerConfig& config,
                                   const Workload& workload) const {
    const PassFlops f = layer_flops(config, workload);
    const double t = static_cast<double>(workload.tp) * workload.cp;  // a GPU's share
    // Recomputation re-runs forward work, at the forward rate.
    return {
        seconds(f.forward / t, 0),
        seconds(f.backward_input / t, 1) + seconds(layer_recompute_flops(config, workload) / t, 0),
        seconds(f.backward_weight / t, 2)};
}

PassTimes AnalyticCostModel::head(const TransformerConfig& config, const Workload& workload) const {
    const PassFlops f = head_flops(config, workload);
    const double t = static_cast<double>(workload.tp) * workload.cp;
    return {seconds(f.forward / t, 0), seconds(f.backward_input / t, 1),
            seconds(f.backward_weight / t, 2)};
}

}  // namespace pipesim::models
