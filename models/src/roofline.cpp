#include "models/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::models {

namespace {

struct Tile {
    double rows, cols;
};
// Output tiles of cuBLAS's large bf16 kernels on A100 and H100 (NVIDIA, "Matrix
// Multiplication Background User's Guide": 256×128 and 128×128 are among the most efficient).
constexpr Tile tiles[] = {{256, 128}, {128, 256}, {128, 128}};

double quantization(const GemmShape& g, const Tile& tile, double sms) {
    const double count = std::ceil(g.m / tile.rows) * std::ceil(g.n / tile.cols) * g.batch;
    const double filled = g.m * g.n * g.batch / (count * tile.rows * tile.cols);
    const double waves = count / sms;
    return filled * waves / std::ceil(waves);
}

// The share of a tile's time spent on its K loop, relative to the shape the GPU's GEMM
// efficiency was measured at: 1 from that K on.
double short_k(const GpuSpec& gpu, double k) {
    const double fill = gpu.gemm_k_fill, reference = gpu.gemm_reference_k;
    if (!(fill > 0 && reference > 0 && k > 0) || k >= reference) return 1;
    return (k / (k + fill)) / (reference / (reference + fill));
}

}  // namespace

double memory_efficiency(const GpuSpec& gpu, MemoryRate rate) {
    double measured = 0;
    switch (rate) {
        case MemoryRate::stream:
            break;
        case MemoryRate::scores:
            measured = gpu.scores_memory_efficiency;
            break;
        case MemoryRate::norm_forward:
            measured = gpu.norm_forward_memory_efficiency;
            break;
        case MemoryRate::norm_backward:
            measured = gpu.norm_backward_memory_efficiency;
            break;
        case MemoryRate::nonpersistent_norm_forward:
            measured = gpu.nonpersistent_norm_forward_memory_efficiency;
            break;
        case MemoryRate::nonpersistent_norm_backward:
            measured = gpu.nonpersistent_norm_backward_memory_efficiency;
            break;
    }
    return measured > 0 ? measured : gpu.memory_efficiency;
}

double gemm_efficiency(const GpuSpec& gpu, const GemmShape& shape) {
    double best = 0;
    for (const Tile& tile : tiles)
        best = std::max(best, quantization(shape, tile, gpu.sm_count));
    return gpu.gemm_efficiency * best * short_k(gpu, shape.k);
}

OperatorTime operator_time(const GpuSpec& gpu, const Operator& op) {
    OperatorTime t;
    t.memory_efficiency = memory_efficiency(gpu, op.memory_rate);
    t.memory = op.bytes / (gpu.hbm_bandwidth * t.memory_efficiency);
    switch (op.kind) {
        case OpKind::gemm:
            if (op.flops > 0) t.compute_efficiency = gemm_efficiency(gpu, op.shape);
            break;
        case OpKind::attention:
            t.compute_efficiency = op.pass == Pass::forward ? gpu.attention_forward_efficiency
                                                            : gpu.attention_backward_efficiency;
            break;
        case OpKind::memory:
            break;
    }
    if (op.flops > 0 && t.compute_efficiency > 0)
        t.compute = op.flops / (gpu.peak_bf16_flops * t.compute_efficiency);
    t.seconds = gpu.launch_overhead + std::max(t.compute, t.memory);
    return t;
}

double operator_seconds(const GpuSpec& gpu, const Operator& op) {
    return operator_time(gpu, op).seconds;
}

PassTimes pass_seconds(const GpuSpec& gpu, std::span<const Operator> ops, Recompute recompute) {
    PassTimes t;
    for (const Operator& op : ops) {
        const double seconds = operator_seconds(gpu, op);
        switch (op.pass) {
            case Pass::forward:
                t.forward += seconds;
                if (recompute == Recompute::full ||
                    (recompute == Recompute::selective && op.attention_core))
                    t.backward_input += seconds;
                break;
            case Pass::backward_input:
                t.backward_input += seconds;
                break;
            case Pass::backward_weight:
                t.backward_weight += seconds;
                break;
        }
    }
    return t;
}

double tp_allreduce_seconds(const GpuSpec& gpu, double bytes, int tp) {
    if (tp <= 1 || !(gpu.tp_bus_bandwidth > 0)) return 0;
    return gpu.launch_overhead + 2.0 * (tp - 1) / tp * bytes / gpu.tp_bus_bandwidth;
}

CpRingLayer cp_ring_layer(const GpuSpec& gpu, const TransformerConfig& config, const Workload& w) {
    if (w.cp < 2) return {};
    const double c = w.cp, t = w.tp, b = w.microbatch, s = w.seq(config);
    CpRingLayer ring;
    ring.block_bytes = 4 * (s / c) * b * config.kv_dim() / t;  // K and V, bf16
    ring.bandwidth =
        w.tp * w.cp <= reference_gpus_per_node ? gpu.tp_bus_bandwidth : gpu.nic_bandwidth;
    // The causal half of this GPU's queries against all keys (load-balanced chunks).
    const double attention = 4 * b * (s / c) * s * config.hidden / t / 2 / gpu.peak_bf16_flops;
    ring.attention = {attention / gpu.attention_forward_efficiency,
                      2.5 * attention / gpu.attention_backward_efficiency, 0};
    return ring;
}

double ring_exposed_seconds(int c, double transfer, double attention) {
    if (c < 2) return 0;
    return (c - 1) * std::max(0.0, transfer - attention / c);
}

PassTimes cp_exposed_seconds(const GpuSpec& gpu, const TransformerConfig& config,
                             const Workload& w) {
    const CpRingLayer ring = cp_ring_layer(gpu, config, w);
    if (w.cp < 2 || !(ring.bandwidth > 0)) return {};
    const double step = ring.block_bytes / ring.bandwidth;
    return {ring_exposed_seconds(w.cp, step, ring.attention.forward),
            ring_exposed_seconds(w.cp, 2 * step, ring.attention.backward_input), 0};
}

double optimizer_step_seconds(const GpuSpec& gpu, double params, const OptimizerConfig& o) {
    const double shards = o.sharding() >= 1 ? o.data_parallel : 1;
    const double bytes = o.grad_bytes + 2 * o.optimizer_bytes + o.weight_bytes;
    return params / shards * bytes / (gpu.hbm_bandwidth * gpu.memory_efficiency);
}

OperatorCostModel::OperatorCostModel(GpuSpec gpu) : gpu_(std::move(gpu)) {
    if (!(gpu_.peak_bf16_flops > 0 && gpu_.hbm_bandwidth > 0 && gpu_.sm_count > 0 &&
          gpu_.gemm_efficiency > 0 && gpu_.memory_efficiency > 0 &&
          gpu_.attention_forward_efficiency > 0 && gpu_.attention_backward_efficiency > 0 &&
          gpu_.tp_bus_bandwidth > 0))
        throw std::invalid_argument(
            fmt::format("GPU '{}' lacks the rates the operator-level model needs", gpu_.name));
}

PassTimes OperatorCostModel::layer(const TransformerConfig& config,
                                   const Workload& workload) const {
    return pass_seconds(gpu_, layer_operators(config, workload), workload.recompute);
}

PassTimes OperatorCostModel::head(const TransformerConfig& config, const Workload& workload) const {
    return pass_seconds(gpu_, head_operators(config, workload), Recompute::none);
}

PassTimes OperatorCostModel::embedding(const TransformerConfig& config,
                                       const Workload& workload) const {
    return pass_seconds(gpu_, embedding_operators(config, workload), Recompute::none);
}

}  // namespace pipesim::models
