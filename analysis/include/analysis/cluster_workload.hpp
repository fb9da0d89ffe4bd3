#pragma once
// What the SimGrid engine is given for a model-based pipeline: the plan's times, messages,
// tensor-parallel collectives and gradients as numbers, and each node group's speed.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/pipeline.hpp"
#include "schedules/schedule.hpp"
#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::analysis {

/// The workload of a model-based plan on `schedule`: the plan's per-stage times; its s·b·h
/// messages between stages, split over the `tp` GPUs of a device (Megatron-LM's scatter/gather
/// of the pipeline message: each GPU sends 1/t of it over its own NIC; the all-gather inside
/// the receiving node is not timed); the stages' TP all-reduces (StagePlan's counts: those
/// the analytic pass times include, with recomputation's); and each device's parameters as fp32
/// gradients to reduce (4 bytes per parameter, as Megatron-LM accumulates and reduces gradients in
/// fp32), with ZeRO stage `zero_stage` 1 or 2 (1: the distributed optimizer) reduce-scattered and
/// followed by an all-gather of the bf16 parameters (2 bytes each), with stage 3 only
/// reduce-scattered and the bf16 parameters all-gathered before every F and backward instead
/// (ZeRO, Rajbhandari et al., 2020, §7.2); the plan's TP overlap; with context parallelism the
/// ring attention's K/V blocks, whose exposed time the pass times then leave out (the engine
/// moves them). Throws std::invalid_argument if
/// the plan and the schedule have different stage counts.
simgrid::SimWorkload workload_from_plan(const models::PipelinePlan& plan, const Schedule& schedule,
                                        int tp = 1, int zero_stage = 0);

/// What one GPU of each pipeline device reduces over its data-parallel rail, in bytes: its
/// fp32 gradients (4 bytes per parameter it holds), and with ZeRO stage 1 or 2 the bf16
/// parameters all-gathered after the reduce-scatter (half that; stage 3: none, empty below
/// stage 1). workload_from_plan()'s gradient_bytes and param_gather_bytes.
struct GradientBytes {
    std::vector<double> gradient;      ///< per device
    std::vector<double> param_gather;  ///< per device; empty without ZeRO
};
GradientBytes gradient_bytes(const models::PipelinePlan& plan, const Schedule& schedule,
                             int zero_stage = 0);

/// Each node group's compute speed relative to `reference_gpu`, the GPU the costs are for
/// (empty: the first group's GPU): the group's own `speed` where set, else the ratio of its
/// GPU's dense bf16 peak to the reference's (models' GPU table). Throws std::invalid_argument
/// naming an unknown GPU.
std::vector<double> node_group_speeds(const simgrid::ClusterSpec& cluster,
                                      const std::string& reference_gpu);

/// The same relative to a GPU given whole (a preset or a GPU file's): a group whose GPU has
/// the reference's name, or is the preset a GPU file measured (GpuSpec::base), runs at 1, any
/// other at its preset's peak over the reference's.
std::vector<double> node_group_speeds(const simgrid::ClusterSpec& cluster,
                                      const models::GpuSpec& reference);

/// The GPU kinds `layout` runs on, each once in the cluster's order: a group's preset, or the
/// reference's name for a group that is the reference (a preset or a GPU file's).
std::vector<std::string> layout_gpus(const simgrid::ClusterSpec& cluster,
                                     const simgrid::Layout& layout,
                                     const models::GpuSpec& reference);

/// A warning where none of the GPUs `layout` runs on is the costs' GPU (`reference`) and some
/// run it at a speed derived from peaks: the kernel times are rooflines or measurements of
/// the reference, scaled by one FLOP/s ratio, memory-bound ones too. None where one of them
/// is the reference (a mixed layout, on purpose), where every other group's `speed` is
/// given, or for the single-efficiency model (`rooflines` false), whose times are FLOPs over
/// a peak and scale exactly so.
std::optional<std::string> foreign_gpu_warning(const simgrid::ClusterSpec& cluster,
                                               const simgrid::Layout& layout,
                                               const models::GpuSpec& reference, bool rooflines);

/// Per pipeline device of `layout`, the GPU its memory must fit in: of the GPUs holding it
/// (every replica's, TP and CP rank's), the one with the least memory. A group whose GPU has
/// `reference`'s name or base (the costs' GPU, a preset or a GPU file's) has `reference`, any
/// other the preset of its name.
std::vector<models::GpuSpec> device_gpus(const simgrid::ClusterSpec& cluster,
                                         const simgrid::Layout& layout,
                                         const models::GpuSpec& reference);

/// load_cluster() with every node group's GPU checked against models' GPU table (so speeds
/// and memory can be derived from it). Throws std::invalid_argument as load_cluster() does,
/// and for an unknown GPU: from a file, "file:line:column: unknown GPU 'x' (known: ...)" at
/// that group's "gpu" value.
simgrid::ClusterSpec load_checked_cluster(std::string_view name_or_file);

}  // namespace pipesim::analysis
