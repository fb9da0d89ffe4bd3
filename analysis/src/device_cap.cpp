#include "analysis/device_cap.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::analysis {

namespace {

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

double largest(const std::vector<double>& values) {
    return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

}  // namespace

double DeviceCap::units_of(const ModelAnalysis& model) const {
    return largest(model.total_bytes) / bytes * units;
}

DeviceCap device_cap(const Analysis& one_f_one_b, double cap_bytes) {
    if (!one_f_one_b.model)
        throw std::invalid_argument("a cap in bytes needs a model (--model, --gpu, --mb)");
    DeviceCap cap;
    cap.bytes = cap_bytes;
    cap.static_bytes = largest(one_f_one_b.model->static_bytes);
    cap.stage_bytes = largest(one_f_one_b.memory.activation);
    cap.units = cap.stage_bytes > 0 ? (cap_bytes - cap.static_bytes) / cap.stage_bytes : 0;
    if (!(cap.units > 0))
        throw std::invalid_argument(
            fmt::format("--mem-limit {:.4g} GiB: the weights and optimizer state alone take "
                        "{:.4g} GiB on the largest device",
                        cap_bytes / gib, cap.static_bytes / gib));
    return cap;
}

PassCosts mean_stage_costs(const StageCosts& costs) {
    PassCosts t{0, 0, 0};
    const double n = static_cast<double>(costs.forward.size());
    for (std::size_t s = 0; s < costs.forward.size(); ++s) {
        t.forward += costs.forward[s] / n;
        t.backward_input += costs.backward_input[s] / n;
        t.backward_weight += costs.backward_weight[s] / n;
    }
    return t;
}

double largest_w_share(const MemoryModel& memory) {
    double share = 0;
    for (std::size_t s = 0; s < memory.activation.size(); ++s)
        if (memory.activation[s] > 0)
            share = std::max(share, memory.held_for_w[s] / memory.activation[s]);
    return std::min(share, 1.0);
}

}  // namespace pipesim::analysis
