#include "analysis/cluster_workload.hpp"

#include "sim/simgrid/layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "analysis/model_plan.hpp"
#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "models/gpu.hpp"

namespace pipesim::analysis {

simgrid::SimWorkload workload_from_plan(const models::PipelinePlan& plan, const Schedule& schedule,
                                        int tp, int zero_stage) {
    const std::size_t stages = plan.stages.size();
    if (stages != static_cast<std::size_t>(schedule.stages()))
        throw std::invalid_argument(fmt::format("the model plan has {} stages, the schedule {}",
                                                stages, schedule.stages()));
    simgrid::SimWorkload w;
    w.costs = stage_costs_from_plan(plan, TpComm::simulated);
    w.message_bytes.assign(stages, plan.message_bytes / std::max(tp, 1));
    for (const models::StagePlan& stage : plan.stages) {
        w.tp_allreduces_forward.push_back(stage.tp_collectives_forward);
        w.tp_allreduces_backward.push_back(stage.tp_collectives_backward);
        w.tp_allreduce_bytes.push_back(plan.tp_comm.bytes);
    }
    GradientBytes reduced = gradient_bytes(plan, schedule, zero_stage);
    w.gradient_bytes = std::move(reduced.gradient);
    w.param_gather_bytes = std::move(reduced.param_gather);
    if (zero_stage >= 3)
        for (const models::StagePlan& stage : plan.stages)
            w.param_fetch_bytes.push_back(2.0 * stage.params);
    w.tp_overlap = plan.tp_overlap;
    if (plan.cp > 1) {  // ring attention: the engine moves the K/V blocks
        for (const models::StagePlan& stage : plan.stages)
            w.cp_ring.layers.push_back(stage.layers);
        w.cp_ring.block_bytes = plan.cp_block_bytes;
        w.cp_ring.attention_forward = plan.cp_attention.forward;
        w.cp_ring.attention_backward = plan.cp_attention.backward_input;
    }
    return w;
}

GradientBytes gradient_bytes(const models::PipelinePlan& plan, const Schedule& schedule,
                             int zero_stage) {
    GradientBytes bytes;
    bytes.gradient.assign(static_cast<std::size_t>(schedule.devices), 0.0);
    // The gradients (fp32, or 16-bit: PipelinePlan::grad_bytes) of the parameters one GPU
    // holds (StagePlan::params is already the stage's share per tensor-parallel rank), which
    // that GPU reduces over its rail; ZeRO-1 and 2 then gather the 16-bit parameters (ZeRO-3
    // gathers them before each pass instead: none here).
    if (zero_stage >= 1) bytes.param_gather.assign(bytes.gradient.size(), 0.0);
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const auto d = static_cast<std::size_t>(schedule.stage_device[s]);
        bytes.gradient[d] += plan.grad_bytes * plan.stages[s].params;
        if (zero_stage == 1 || zero_stage == 2)
            bytes.param_gather[d] += 2.0 * plan.stages[s].params;
    }
    return bytes;
}

namespace {

// Whether a node group's GPU is the costs' GPU: its preset, or the preset a GPU file measured.
bool is_reference(const std::string& gpu, const models::GpuSpec& reference) {
    return gpu == reference.name || (!reference.base.empty() && gpu == reference.base);
}

}  // namespace

std::vector<double> node_group_speeds(const simgrid::ClusterSpec& cluster,
                                      const models::GpuSpec& reference) {
    std::vector<double> speeds;
    for (const simgrid::NodeGroup& g : cluster.nodes) {
        double speed = g.speed;
        if (speed == 0)
            speed = is_reference(g.gpu, reference)
                        ? 1.0
                        : models::find_gpu(g.gpu).peak_bf16_flops / reference.peak_bf16_flops;
        speeds.push_back(speed);
    }
    return speeds;
}

std::vector<double> node_group_speeds(const simgrid::ClusterSpec& cluster,
                                      const std::string& reference_gpu) {
    if (cluster.nodes.empty()) return {};
    return node_group_speeds(
        cluster,
        models::find_gpu(reference_gpu.empty() ? cluster.nodes.front().gpu : reference_gpu));
}

std::vector<std::string> layout_gpus(const simgrid::ClusterSpec& cluster,
                                     const simgrid::Layout& layout,
                                     const models::GpuSpec& reference) {
    // The layout's GPUs are global indices 0 .. gpus − 1 (gpu_index), so its nodes the first
    // ⌈gpus / gpus_per_node⌉, groups taking the nodes in order.
    const int nodes = (layout.gpus() + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
    std::vector<std::string> names;
    int first = 0;  // of the group's nodes
    for (const simgrid::NodeGroup& group : cluster.nodes) {
        if (first >= nodes) break;
        first += group.count;
        const std::string& gpu = group.gpu;
        const std::string name = is_reference(gpu, reference) ? reference.name : gpu;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
}

std::optional<std::string> foreign_gpu_warning(const simgrid::ClusterSpec& cluster,
                                               const simgrid::Layout& layout,
                                               const models::GpuSpec& reference, bool rooflines) {
    if (!rooflines) return std::nullopt;
    const std::vector<std::string> ran = layout_gpus(cluster, layout, reference);
    if (std::find(ran.begin(), ran.end(), reference.name) != ran.end()) return std::nullopt;
    std::vector<std::string> scaled;  // GPU names run at a peak ratio, once each
    for (const simgrid::NodeGroup& g : cluster.nodes)
        if (g.speed == 0 && std::find(ran.begin(), ran.end(), g.gpu) != ran.end() &&
            std::find(scaled.begin(), scaled.end(), g.gpu) == scaled.end())
            scaled.push_back(g.gpu);
    if (scaled.empty()) return std::nullopt;
    std::string ratios;
    for (const std::string& gpu : scaled)
        ratios += fmt::format("{}{} {:.3g}×", ratios.empty() ? "" : ", ", gpu,
                              models::find_gpu(gpu).peak_bf16_flops / reference.peak_bf16_flops);
    return fmt::format(
        "the GPUs of cluster '{}' this layout runs on are not {} (--gpu): they run {}'s kernel "
        "times scaled by their peak FLOP/s ({}), memory-bound kernels too; --gpu {} gives "
        "them their own rooflines",
        cluster.name, reference.name, reference.name, ratios, scaled.front());
}

std::vector<models::GpuSpec> device_gpus(const simgrid::ClusterSpec& cluster,
                                         const simgrid::Layout& layout,
                                         const models::GpuSpec& reference) {
    std::vector<const models::GpuSpec*> node_gpu;  // per node
    for (const simgrid::NodeGroup& g : cluster.nodes)
        node_gpu.insert(node_gpu.end(), static_cast<std::size_t>(g.count),
                        is_reference(g.gpu, reference) ? &reference : &models::find_gpu(g.gpu));
    std::vector<models::GpuSpec> gpus;
    for (int d = 0; d < layout.pp; ++d) {
        const models::GpuSpec* smallest = nullptr;
        for (int r = 0; r < layout.dp; ++r)
            for (int t = 0; t < layout.tp; ++t)
                for (int c = 0; c < layout.cp; ++c) {
                    const int node = simgrid::gpu_index(layout, r, d, t, c) / cluster.gpus_per_node;
                    const models::GpuSpec* gpu = node_gpu.at(static_cast<std::size_t>(node));
                    if (!smallest || gpu->memory_bytes < smallest->memory_bytes) smallest = gpu;
                }
        gpus.push_back(*smallest);
    }
    return gpus;
}

simgrid::ClusterSpec load_checked_cluster(std::string_view name_or_file) {
    const bool is_file = fileio::names_a_file(name_or_file);
    simgrid::ClusterSpec cluster;
    try {
        cluster = simgrid::load_cluster(name_or_file);
    } catch (const std::invalid_argument& e) {
        // "x.json: cannot read: ..." says what x.json is (in Python, where no flag is beside it).
        if (!is_file) throw;
        throw std::invalid_argument(fmt::format("cluster file {}", e.what()));
    }
    for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
        try {
            models::find_gpu(cluster.nodes[i].gpu);
        } catch (const std::invalid_argument& e) {
            if (!is_file)
                throw std::invalid_argument(
                    fmt::format("cluster '{}', node group {}: {}", cluster.name, i, e.what()));
            // Locate the value in the file (read again: only on this error path).
            const std::string file(name_or_file);
            const fileio::JsonDocument doc(
                file, fileio::read_text_file(file, simgrid::max_cluster_file_bytes));
            // Worded as the file's other errors: "cluster file F:L:C: nodes[i].gpu: ...".
            const fileio::ParseError located = doc.error_at(
                fileio::json_pointer_child(fileio::json_pointer_child("/nodes", i), "gpu"),
                fmt::format("nodes[{}].gpu: {}", i, e.what()));
            throw std::invalid_argument(fmt::format("cluster file {}", located.what()));
        }
    }
    return cluster;
}

}  // namespace pipesim::analysis
