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
                                     double makespan, bool overlap,
                                     const std::vector<double>& first_forward_end,
                                     bool overlap_gather) {
    const std::size_t devices = gradient_bytes.size();
    const bool sharded = !gather_bytes.empty();
    const bool moved_gather = sharded && overlap_gather;
    if (last_gradient_start.size() != devices || (sharded && gather_bytes.size() != devices) ||
        (moved_gather && first_forward_end.size() != devices))
        throw std::invalid_argument(fmt::format(
            "gradient reduction: {} devices' gradient bytes, {} gather sizes, {} start "
            "times, {} first forward ends",
            devices, gather_bytes.size(), last_gradient_start.size(), first_forward_end.size()));
    GradientReduction r;
    r.iteration_time = makespan;
    for (std::size_t d = 0; d < devices; ++d) {
        // With the gather moved, the end of the iteration reduce-scatters only.
        const double gather = sharded ? gather_bytes[d] : 0.0;
        const double seconds =
            ring_reduce_seconds(gpu, rail, gradient_bytes[d], moved_gather ? 0.0 : gather, sharded);
        r.seconds.push_back(seconds);
        r.longest = std::max(r.longest, seconds);
        if (seconds > 0)
            r.iteration_time =
                std::max(r.iteration_time, (overlap ? last_gradient_start[d] : makespan) + seconds);
        if (moved_gather) {
            const double moving = ring_reduce_seconds(gpu, rail, 0.0, gather, true);
            r.gather_seconds = std::max(r.gather_seconds, moving);
            r.gather_seconds_by_device.push_back(moving);
            r.gather_exposed_by_device.push_back(std::max(0.0, moving - first_forward_end[d]));
            r.gather_exposed = std::max(r.gather_exposed, r.gather_exposed_by_device.back());
        }
    }
    r.iteration_time += r.gather_exposed;
    return r;
}

}  // namespace pipesim::analysis
