#include "analysis/layer_kernels.hpp"

#include <stdexcept>

namespace pipesim::analysis {

namespace {

std::vector<LayerKernel> timed(const models::GpuSpec& gpu,
                               const std::vector<models::Operator>& ops) {
    std::vector<LayerKernel> kernels;
    for (const models::Operator& op : ops)
        kernels.push_back({op, models::operator_time(gpu, op)});
    return kernels;
}

nlohmann::ordered_json kernel_list(const std::vector<LayerKernel>& kernels) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const LayerKernel& kernel : kernels) {
        const models::Operator& op = kernel.op;
        const models::OperatorTime& t = kernel.time;
        nlohmann::ordered_json j = {{"pass", models::pass_letter(op.pass)},
                                    {"name", op.name},
                                    {"kind", models::op_kind_name(op.kind)}};
        if (op.kind == models::OpKind::gemm)
            j["shape"] = {
                {"m", op.shape.m}, {"n", op.shape.n}, {"k", op.shape.k}, {"batch", op.shape.batch}};
        j["flops"] = op.flops;
        j["bytes"] = op.bytes;
        j["bound"] = t.compute_bound() ? "compute" : "memory";
        j["efficiency"] = t.compute_bound() ? t.compute_efficiency : t.memory_efficiency;
        j["seconds"] = t.seconds;
        list.push_back(std::move(j));
    }
    return list;
}

}  // namespace

LayerKernels layer_kernels(const ModelAnalysis& model) {
    if (!model.operator_model)
        throw std::invalid_argument(
            "the kernels are the operator-level model's: its times here come from the " +
            model.cost_source);
    const models::GpuSpec& gpu = model.gpu;
    const models::Workload& w = model.workload;
    LayerKernels k;
    const std::vector<models::Operator> ops = models::layer_operators(model.config, w);
    k.kernels = timed(gpu, ops);
    const std::vector<models::Operator> embedding = models::embedding_operators(model.config, w);
    const std::vector<models::Operator> head = models::head_operators(model.config, w);
    k.embedding = timed(gpu, embedding);
    k.head = timed(gpu, head);
    k.embedding_seconds = models::pass_seconds(gpu, embedding, models::Recompute::none);
    k.head_seconds = models::pass_seconds(gpu, head, models::Recompute::none);
    k.kernel_seconds = models::pass_seconds(gpu, ops, w.recompute);
    k.recomputed_seconds = k.kernel_seconds.backward_input -
                           models::pass_seconds(gpu, ops, models::Recompute::none).backward_input;
    if (w.tp > 1) {
        const models::TensorParallelComm& comm = model.plan.tp_comm;
        k.tp_bytes = comm.bytes;
        k.tp_seconds = models::tp_allreduce_seconds(gpu, comm.bytes, w.tp);
        k.tp_forward = comm.collectives_forward;
        k.tp_backward = models::tp_collectives_backward(comm, w.recompute);
        k.tp_overlap = model.plan.tp_overlap;
    }
    k.cp_exposed = models::cp_exposed_seconds(gpu, model.config, w);
    return k;
}

nlohmann::ordered_json layer_kernels_json(const LayerKernels& k) {
    return {
        {"kernels", kernel_list(k.kernels)},
        {"kernel_seconds",
         {{"F", k.kernel_seconds.forward},
          {"B", k.kernel_seconds.backward_input},
          {"W", k.kernel_seconds.backward_weight}}},
        {"recomputed_seconds", k.recomputed_seconds},
        {"tp_allreduce",
         {{"bytes", k.tp_bytes},
          {"seconds", k.tp_seconds},
          {"forward", k.tp_forward},
          {"backward", k.tp_backward},
          {"overlap", k.tp_overlap}}},
        {"cp_exposed_seconds", {{"F", k.cp_exposed.forward}, {"B", k.cp_exposed.backward_input}}},
        {"embedding_kernels", kernel_list(k.embedding)},
        {"head_kernels", kernel_list(k.head)}};
}

}  // namespace pipesim::analysis
