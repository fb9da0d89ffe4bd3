#include "spec_dict.hpp"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "analysis/cluster_workload.hpp"

namespace py = pybind11;

namespace pipesim::python {

namespace {

template <typename T>
T get(const py::dict& d, const char* key) {
    return d[key].cast<T>();
}

// `parse` of the text at `key`, its std::invalid_argument naming the key ("key: ...").
template <typename Parse>
auto parsed(const py::dict& d, const char* key, Parse parse) {
    try {
        return parse(get<std::string>(d, key));
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("{}: {}", key, e.what()));
    }
}

analysis::ModelSpec model_from_dict(const py::dict& d) {
    analysis::ModelSpec m;
    m.model = get<std::string>(d, "model");
    m.gpu = get<std::string>(d, "gpu");
    m.workload.microbatch = get<int>(d, "mb");
    m.workload.seq_len = get<int>(d, "seq");
    m.workload.sequence_parallel = get<bool>(d, "sequence_parallel");
    m.workload.recompute = parsed(d, "recompute", models::parse_recompute);
    m.workload.attention = parsed(d, "attention", models::parse_attention_kernel);
    m.efficiency = get<double>(d, "efficiency");
    m.calibration_file = get<std::string>(d, "calibration");
    m.optimizer.distributed = get<bool>(d, "dist_opt");
    m.partition.first_stage_layers = get<int>(d, "first_stage_layers");
    m.partition.last_stage_layers = get<int>(d, "last_stage_layers");
    m.optimizer.zero_stage = get<int>(d, "zero");
    m.workload.cp = get<int>(d, "cp");
    m.workload.tp_comm_overlap = get<bool>(d, "tp_comm_overlap");
    m.optimizer.grad_bytes = parsed(d, "grad_dtype", models::parse_grad_dtype);
    m.workload.grad_accumulation_fusion = get<bool>(d, "gradient_accumulation_fusion");
    m.workload.persistent_norm = get<bool>(d, "persist_layer_norm");
    m.workload.cross_entropy_fusion = get<bool>(d, "cross_entropy_loss_fusion");
    return m;
}

}  // namespace

analysis::PipelineSpec spec_from_dict(const py::dict& d) {
    analysis::PipelineSpec spec;
    if (!d["given"].is_none()) {
        spec.given = get<Schedule>(d, "given");
    } else {
        spec.schedule = get<std::string>(d, "schedule");
        spec.generator.devices = get<int>(d, "p");
        spec.generator.microbatches = get<int>(d, "m");
        spec.generator.chunks = get<int>(d, "v");
        spec.generator.group_size = get<int>(d, "group_size");
    }
    spec.costs.passes.clear();
    for (const auto& t : get<std::vector<std::array<double, 3>>>(d, "costs"))
        spec.costs.passes.push_back(PassCosts{t[0], t[1], t[2]});
    spec.costs.mem_w_ratio = get<double>(d, "mem_w_ratio");
    if (!d["model"].is_none()) spec.costs.model = model_from_dict(get<py::dict>(d, "model"));
    spec.comm_latency = get<double>(d, "comm");
    spec.all_to_all = get<double>(d, "a2a");
    spec.fb_overlap = get<double>(d, "overlap_fb");
    spec.dp = get<int>(d, "dp");
    spec.tp = get<int>(d, "tp");
    spec.step_exchange = get<bool>(d, "step_exchange");
    return spec;
}

analysis::SimGridEngine engine_from_dict(const py::dict& d) {
    analysis::SimGridEngine engine;
    if (!d["layout_order"].is_none())
        engine.layout.order = simgrid::parse_layout_order(get<std::string>(d, "layout_order"));
    engine.message_bytes = get<double>(d, "message_bytes");
    engine.grad_bytes = get<double>(d, "grad_bytes");
    engine.options.overlap_grad_reduce = get<bool>(d, "overlap_grad_reduce");
    engine.options.overlap_param_gather = get<bool>(d, "overlap_param_gather");
    engine.options.post_validation = get<bool>(d, "post_validation");
    engine.options.bandwidth_scale = get<double>(d, "bw_scale");
    engine.options.latency_scale = get<double>(d, "lat_scale");
    for (const auto& [gpu, factor] : get<std::vector<std::pair<int, double>>>(d, "stragglers"))
        engine.options.stragglers.emplace_back(gpu, factor);
    if (!d["nccl_algo"].is_none())
        engine.options.nccl_algo = parsed(d, "nccl_algo", simgrid::parse_nccl_algo);
    engine.cluster = analysis::load_checked_cluster(get<std::string>(d, "cluster"));
    return engine;
}

}  // namespace pipesim::python
