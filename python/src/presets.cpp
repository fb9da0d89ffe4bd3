#include "presets.hpp"

#include <string>

#include "models/gpu.hpp"
#include "models/presets.hpp"
#include "sim/simgrid/cluster.hpp"

namespace py = pybind11;

namespace pipesim::python {

py::list model_presets() {
    py::list presets;
    for (const models::TransformerConfig& c : models::model_presets()) {
        // The model file's fields in its table's order, every one given (a file may leave the
        // defaults out). No "name": a file may not take a preset's.
        py::dict fields;
        fields["source"] = c.source;
        fields["layers"] = c.layers;
        fields["hidden"] = c.hidden;
        fields["heads"] = c.heads;
        fields["kv_heads"] = c.kv_heads;
        fields["ffn_hidden"] = c.ffn_hidden;
        fields["vocab"] = c.vocab;
        fields["seq_len"] = c.seq_len;
        fields["mlp"] = c.mlp == models::Mlp::gelu ? "gelu" : "swiglu";
        fields["norm"] = c.norm == models::Norm::layernorm ? "layernorm" : "rmsnorm";
        fields["linear_bias"] = c.linear_bias;
        fields["learned_positions"] = c.learned_positions;
        fields["tied_embeddings"] = c.tied_embeddings;
        fields["dropout"] = c.dropout;
        fields["stated_params"] = c.stated_params;
        presets.append(py::make_tuple(c.name, fields));
    }
    return presets;
}

py::list gpu_presets() {
    py::list presets;
    for (const models::GpuSpec& g : models::gpu_specs()) {
        py::dict fields;
        fields["description"] = g.description;
        fields["source"] = g.source;
        fields["sm_count"] = g.sm_count;
        fields["peak_bf16_flops"] = g.peak_bf16_flops;
        fields["memory_bytes"] = g.memory_bytes;
        fields["hbm_bandwidth"] = g.hbm_bandwidth;
        fields["gemm_efficiency"] = g.gemm_efficiency;
        fields["memory_efficiency"] = g.memory_efficiency;
        fields["scores_memory_efficiency"] = g.scores_memory_efficiency;
        fields["norm_forward_memory_efficiency"] = g.norm_forward_memory_efficiency;
        fields["norm_backward_memory_efficiency"] = g.norm_backward_memory_efficiency;
        fields["nonpersistent_norm_forward_memory_efficiency"] =
            g.nonpersistent_norm_forward_memory_efficiency;
        fields["nonpersistent_norm_backward_memory_efficiency"] =
            g.nonpersistent_norm_backward_memory_efficiency;
        fields["attention_forward_efficiency"] = g.attention_forward_efficiency;
        fields["attention_backward_efficiency"] = g.attention_backward_efficiency;
        fields["tp_bus_bandwidth"] = g.tp_bus_bandwidth;
        fields["nic_bandwidth"] = g.nic_bandwidth;
        fields["gemm_k_fill"] = g.gemm_k_fill;
        fields["gemm_reference_k"] = g.gemm_reference_k;
        fields["launch_overhead"] = g.launch_overhead;
        fields["default_efficiency"] = g.default_efficiency;
        presets.append(py::make_tuple(g.name, fields));
    }
    return presets;
}

py::list cluster_presets() {
    py::list presets;
    for (const simgrid::ClusterPreset& c : simgrid::cluster_presets())
        presets.append(py::make_tuple(std::string(c.name), std::string(c.description)));
    return presets;
}

}  // namespace pipesim::python
