#include "analysis/grad_reduce.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::analysis {

Rail gradient_rail(int tp, int ranks) {
    Rail rail;
    rail.members = std::max(ranks, 1);
    rail.per_node = std::min(rail.members, std::max(1, reference_gpus_per_node / std::max(tp, 1)));
    return rail;
}

double ring_reduce_seconds(const models::GpuSpec& gpu, Rail rail, double gradient_bytes,
                           double gather_bytes, bool sharded) {
    const int n = rail.members;
    if (n < 2) return 0;
    const double volume = (sharded ? gradient_bytes + gather_bytes : 2 * gradient_bytes) * (n - 1) /
                          static_cast<double>(n);
    if (rail.per_node >= n) return volume / gpu.tp_bus_bandwidth;
    const double k = rail.per_node;
    return volume * std::max(1 / (k * gpu.nic_bandwidth), (k - 1) / (k * gpu.tp_bus_bandwidth));
}

GradientReduction gradient_reduction(const models::GpuSpec& gpu, Rail rail,
                                     const std::vector<double>& gradient_bytes,
                                     const std::vector<double>& gather_bytes,
                                     const std::vector<double>& last_gradient_start,
                                     double makespan, bool overlap) {
    const std::size_t devices = gradient_bytes.size();
    if (last_gradient_start.size() != devices ||
        (!gather_bytes.empty() && gather_bytes.size() != devices))
        throw std::invalid_argument(fmt::format(
            "gradient reduction: {} devices' gradient bytes, {} gather sizes, {} start times",
            devices, gather_bytes.size(), last_gradient_start.size()));
    GradientReduction r;
    r.iteration_time = makespan;
    const bool sharded = !gather_bytes.empty();
    for (std::size_t d = 0; d < devices; ++d) {
        const double seconds = ring_reduce_seconds(gpu, rail, gradient_bytes[d],
                                                   sharded ? gather_bytes[d] : 0.0, sharded);
        r.seconds.push_back(seconds);
        r.longest = std::max(r.longest, seconds);
        if (seconds > 0)
            r.iteration_time =
                std::max(r.iteration_time, (overlap ? last_gradient_start[d] : makespan) + seconds);
    }
    return r;
}

}  // namespace pipesim::analysis
