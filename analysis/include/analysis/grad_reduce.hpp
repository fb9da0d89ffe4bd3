#pragma once
// The data-parallel gradient reduction of the analytic engine, in closed form: what the SimGrid
// engine runs on a cluster's links (docs/cluster-format.md, "Gradient reduction"), here on the
// links of the GPU's reference node alone, with no contention and no link latency.

#include <vector>

#include "models/gpu.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::analysis {

/// GPUs per node assumed by the closed form (models::reference_gpus_per_node), each with its
/// network adapter (the GPU record's nic_bandwidth).
using models::reference_gpus_per_node;

/// One tensor-parallel rank's rail: the `members` = dp·C GPUs that hold the same weights, of
/// which `per_node` share a node. In the default rank order (tp, cp, dp, pp) consecutive
/// members are `tp` ranks apart, so min(members, 8 / tp) of them share a node (1 for tp ≥ 8;
/// rails are taken aligned to nodes, as they are when t·dp·C divides 8 or 8 divides it).
struct Rail {
    int members = 1;
    int per_node = 1;
};
/// The rail of `ranks` = dp·C members at tensor-parallel degree `tp` (both ≥ 1).
Rail gradient_rail(int tp, int ranks);

/// Seconds one GPU takes to reduce its gradients over `rail` as NCCL's rings do, alone on its
/// links: every collective moves (n−1)/n of its buffer through each member (n = members), an
/// all-reduce its reduce-scatter then all-gather. All-reduce of S gradient bytes:
/// 2(n−1)/n·S; sharded (ZeRO, the distributed optimizer: `sharded`), a reduce-scatter of S and
/// an all-gather of `gather_bytes` G: (n−1)/n·(S + G). Inside one node this moves at the
/// NVLink bus bandwidth (gpu.tp_bus_bandwidth); across nodes the k = per_node members of a node
/// run k rings, each carrying 1/k of the bytes out through its own NIC (NCCL's channels), so a
/// NIC carries 1/k of the volume at gpu.nic_bandwidth and each GPU's NVLink port the other
/// rings' (k−1)/k at the bus bandwidth: the slower of the two. 0 for a rail of one GPU.
double ring_reduce_seconds(const models::GpuSpec& gpu, Rail rail, double gradient_bytes,
                           double gather_bytes, bool sharded);

/// The reduction of every pipeline device and what it adds to the iteration.
struct GradientReduction {
    std::vector<double> seconds;  ///< per pipeline device: ring_reduce_seconds()
    double longest = 0;           ///< max of `seconds`
    /// The makespan or the end of the last reduction, whichever is later. Device d's reduction
    /// starts at last_gradient_start[d] (the start of its last W or BW, when Megatron-LM's
    /// --overlap-grad-reduce and DDP reduce their buckets) with `overlap`, else at the makespan.
    double iteration_time = 0;
    /// With the parameter all-gather overlapped (`overlap_gather`): the longest gather and
    /// the most of one that its device's first forward does not hide (added to
    /// iteration_time). 0 otherwise.
    double gather_seconds = 0;
    double gather_exposed = 0;
    /// Per device, its gather and the part of it that its first forward does not hide (empty
    /// without `overlap_gather`): the latter is what optimizer post-validation adds to that
    /// device alone.
    std::vector<double> gather_seconds_by_device;
    std::vector<double> gather_exposed_by_device;
};

/// gradient_bytes/gather_bytes per device (analysis::gradient_bytes(); gather_bytes empty
/// without sharding), the rail, the replay's makespan and per-device last weight-gradient
/// starts (sim::ReplayResult::last_gradient_start). With sharding and `overlap_gather`
/// (Megatron-LM's --overlap-param-gather) the parameter all-gather leaves the end of the
/// iteration: it runs from the iteration's start (the previous step's update) beside the
/// device's first forward, which needs the parameters layer by layer, so device d exposes
/// max(0, gather − first_forward_end[d]) (sim::ReplayResult::first_forward_end), and the
/// iteration grows by the most any device exposes. Throws std::invalid_argument when the
/// vectors' sizes differ.
GradientReduction gradient_reduction(const models::GpuSpec& gpu, Rail rail,
                                     const std::vector<double>& gradient_bytes,
                                     const std::vector<double>& gather_bytes,
                                     const std::vector<double>& last_gradient_start,
                                     double makespan, bool overlap,
                                     const std::vector<double>& first_forward_end = {},
                                     bool overlap_gather = false);

}  // namespace pipesim::analysis
