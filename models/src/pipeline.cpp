#include "models/pipeline.hpp"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "models/roofline.hpp"

namespace pipesim::models {

namespace {

// Parameters one GPU of the TP group holds for a stage: matrices and biases are split over
// t, norms replicated; embeddings are vocabulary-parallel, learned positions replicated. With
// tied embeddings the last stage keeps its own copy of the embedding matrix (as Megatron-LM
// does when first and last stage differ).
double stage_params(const TransformerConfig& c, const StagePlan& s, int tp, int stages) {
    const LayerParams layer = layer_params(c);
    const double t = tp;
    double params = s.layers * ((layer.linear_weights + layer.linear_biases) / t + layer.norms);
    const double vocab_matrix = static_cast<double>(c.vocab) * c.hidden / t;
    if (s.has_embedding)
        params +=
            vocab_matrix + (c.learned_positions ? static_cast<double>(c.seq_len) * c.hidden : 0.0);
    if (s.has_head) {
        params += c.norm == Norm::layernorm ? 2.0 * c.hidden : c.hidden;  // final norm
        if (!c.tied_embeddings || stages > 1) params += vocab_matrix;
    }
    return params;
}

// PartitionOptions::stage_layers, checked: a split the partitioner could have made.
std::vector<int> given_split(const PartitionOptions& partition, int stages,
                             const TransformerConfig& config) {
    const std::vector<int>& counts = partition.stage_layers;
    if (static_cast<int>(counts.size()) != stages)
        throw std::invalid_argument(fmt::format(
            "a given split has {} stages' layer counts, expected {}", counts.size(), stages));
    int total = 0;
    for (int s = 0; s < stages; ++s) {
        const int n = counts[static_cast<std::size_t>(s)];
        const int fixed = s == 0            ? partition.first_stage_layers
                          : s == stages - 1 ? partition.last_stage_layers
                                            : -1;
        if (n < (fixed == 0 ? 0 : 1) || (fixed >= 0 && n != fixed))
            throw std::invalid_argument(
                fmt::format("a given split puts {} layers on stage {}", n, s));
        total += n;
    }
    if (total != config.layers)
        throw std::invalid_argument(fmt::format("a given split holds {} layers, {} has {}", total,
                                                config.name, config.layers));
    return counts;
}

}  // namespace

PipelinePlan plan_pipeline(const TransformerConfig& config, const Workload& workload_given,
                           const OptimizerConfig& optimizer, const CostModel& cost_model,
                           int stages, const PartitionOptions& partition,
                           std::span<const int> stage_device) {
    // The gradients the kernels accumulate into are those the memory and the optimizer count.
    Workload workload = workload_given;
    workload.grad_bytes = optimizer.grad_bytes;
    check_config(config);
    check_workload(config, workload);
    const double per_param = bytes_per_param(optimizer);
    const int empty_ends =
        (partition.first_stage_layers == 0 ? 1 : 0) + (partition.last_stage_layers == 0 ? 1 : 0);
    if (stages - empty_ends > config.layers)
        throw std::invalid_argument(fmt::format(
            "cannot split {}'s {} layers into {} pipeline stages: every stage needs at least one "
            "layer{}",
            config.name, config.layers, stages,
            empty_ends > 0 ? " (but those fixed to 0 on the ends)" : ""));

    // Ring attention's transfers, where the attention core does not hide them, lengthen the
    // layer's F and B: the partition balances the passes with them.
    const PassTimes layer_time = cost_model.layer(config, workload);
    const PassTimes ring = cp_exposed_seconds(cost_model.gpu(), config, workload);
    const PassTimes head_time = cost_model.head(config, workload);
    const PassTimes embedding_time = cost_model.embedding(config, workload);
    const std::vector<double> layer_costs(static_cast<std::size_t>(config.layers),
                                          layer_time.total() + ring.total());
    if (!stage_device.empty() && static_cast<int>(stage_device.size()) != stages)
        throw std::logic_error("plan_pipeline: one device per stage expected");
    const std::vector<int> counts =
        !partition.stage_layers.empty() ? given_split(partition, stages, config)
        : stage_device.empty()
            ? partition_layers(layer_costs, stages, embedding_time.total(), head_time.total(),
                               partition)
            : partition_layers_on_devices(layer_costs, stage_device, embedding_time.total(),
                                          head_time.total(), partition);

    const ActivationBytes layer_mem = layer_activation_bytes(config, workload);
    const ActivationBytes embed_mem = embedding_activation_bytes(config, workload);
    const ActivationBytes head_mem = head_activation_bytes(config, workload);

    PipelinePlan plan;
    plan.message_bytes = pipeline_message_bytes(config, workload);
    plan.tp_comm = layer_tp_comm(config, workload);
    plan.tp_overlap = workload.tp_comm_overlap && workload.tp > 1 ? tp_overlap_efficiency : 0.0;
    // One collective's time; full recomputation repeats the forward's in B. The embedding
    // (vocabulary-parallel lookup) and the head (input gradient of the column-parallel
    // logits) add one each.
    const double collective =
        tp_allreduce_seconds(cost_model.gpu(), plan.message_bytes, workload.tp);
    plan.samples_per_microbatch = workload.microbatch;
    plan.grad_bytes = optimizer.grad_bytes;
    if (workload.cp > 1) {
        const CpRingLayer ring_layer = cp_ring_layer(cost_model.gpu(), config, workload);
        plan.cp = workload.cp;
        plan.cp_block_bytes = ring_layer.block_bytes;
        plan.cp_attention = ring_layer.attention;
    }
    plan.tokens_per_microbatch = static_cast<double>(workload.microbatch) * workload.seq(config);
    plan.model_flops_per_microbatch = config.layers * layer_flops(config, workload).total() +
                                      head_flops(config, workload).total();

    int first_layer = 0;
    for (int j = 0; j < stages; ++j) {
        StagePlan s;
        s.first_layer = first_layer;
        s.layers = counts[j];
        s.has_embedding = j == 0;
        s.has_head = j == stages - 1;
        first_layer += s.layers;
        s.times = {s.layers * layer_time.forward, s.layers * layer_time.backward_input,
                   s.layers * layer_time.backward_weight};
        s.cp_ring_times = {s.layers * ring.forward, s.layers * ring.backward_input, 0};
        if (workload.tp > 1) {
            s.tp_collectives_forward =
                s.layers * plan.tp_comm.collectives_forward + (s.has_embedding ? 1 : 0);
            s.tp_collectives_backward =
                s.layers * tp_collectives_backward(plan.tp_comm, workload.recompute) +
                (s.has_head ? 1 : 0);
        }
        s.memory = {s.layers * layer_mem.activation, s.layers * layer_mem.held_for_w};
        if (s.has_embedding) {
            s.times.forward += embedding_time.forward;
            s.times.backward_input += embedding_time.backward_input;
            s.times.backward_weight += embedding_time.backward_weight;
            s.memory.activation += embed_mem.activation;
            s.memory.held_for_w += embed_mem.held_for_w;
        }
        if (s.has_head) {
            s.times.forward += head_time.forward;
            s.times.backward_input += head_time.backward_input;
            s.times.backward_weight += head_time.backward_weight;
            s.memory.activation += head_mem.activation;
            s.memory.held_for_w += head_mem.held_for_w;
        }
        // The collectives' time left exposed: all of it, or what the overlap with the pass's
        // kernels leaves.
        const auto exposed = [&](double compute, int count) {
            const double comm = collective * count;
            if (plan.tp_overlap == 0) return comm;
            return overlapped_seconds(compute, comm, plan.tp_overlap) - compute;
        };
        s.tp_comm_times = {exposed(s.times.forward, s.tp_collectives_forward),
                           exposed(s.times.backward_input, s.tp_collectives_backward), 0};
        s.params = stage_params(config, s, workload.tp, stages);
        s.static_bytes = s.params * per_param;
        s.optimizer_seconds = optimizer_step_seconds(cost_model.gpu(), s.params, optimizer);
        plan.stages.push_back(s);
    }
    return plan;
}

}  // namespace pipesim::models
