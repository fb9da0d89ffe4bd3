#include "models/transformer.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::models {

void check_config(const TransformerConfig& c) {
    auto positive = [&](const char* field, int value) {
        if (value < 1)
            throw std::invalid_argument(fmt::format(
                "model '{}': {} must be a positive integer, got {}", c.name, field, value));
    };
    positive("layers", c.layers);
    positive("hidden", c.hidden);
    positive("heads", c.heads);
    positive("vocab", c.vocab);
    positive("seq_len", c.seq_len);
    if (c.kv_heads < 0 || c.ffn_hidden < 0)
        throw std::invalid_argument(
            fmt::format("model '{}': kv_heads and ffn_hidden must be ≥ 0 (0: default)", c.name));
    if (c.hidden % c.heads != 0)
        throw std::invalid_argument(fmt::format("model '{}': heads ({}) must divide hidden ({})",
                                                c.name, c.heads, c.hidden));
    if (c.heads % c.kv_heads_or_default() != 0)
        throw std::invalid_argument(fmt::format("model '{}': kv_heads ({}) must divide heads ({})",
                                                c.name, c.kv_heads_or_default(), c.heads));
}

LayerParams layer_params(const TransformerConfig& c) {
    const double h = c.hidden;
    const double kv = c.kv_dim();
    const double f = c.ffn_or_default();
    const double mlp_matrices = c.mlp == Mlp::swiglu ? 3 : 2;
    LayerParams p;
    // Attention: Q and O are h×h, K and V h×kv (GQA shrinks only K and V).
    p.linear_weights = 2 * h * h + 2 * h * kv + mlp_matrices * h * f;
    if (c.linear_bias) p.linear_biases = (h + 2 * kv) + h + (mlp_matrices - 1) * f + h;
    p.norms = 2 * (c.norm == Norm::layernorm ? 2 * h : h);
    return p;
}

double embedding_params(const TransformerConfig& c) {
    return static_cast<double>(c.vocab) * c.hidden +
           (c.learned_positions ? static_cast<double>(c.seq_len) * c.hidden : 0.0);
}

double head_params(const TransformerConfig& c) {
    const double final_norm = c.norm == Norm::layernorm ? 2.0 * c.hidden : c.hidden;
    return final_norm + (c.tied_embeddings ? 0.0 : static_cast<double>(c.vocab) * c.hidden);
}

double total_params(const TransformerConfig& c) {
    return c.layers * layer_params(c).total() + embedding_params(c) + head_params(c);
}

}  // namespace pipesim::models
