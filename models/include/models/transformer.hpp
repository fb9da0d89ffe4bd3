#pragma once
// The shape of a GPT-style decoder-only transformer and its parameter counts.

#include <string>

namespace pipesim::models {

/// Feed-forward block: GeLU (two h×f matrices, GPT) or SwiGLU (three, Llama).
enum class Mlp { gelu, swiglu };
/// LayerNorm has a weight and a bias (2h parameters), RMSNorm only a weight (h).
enum class Norm { layernorm, rmsnorm };

/// A decoder-only transformer. `kv_heads` < `heads` is grouped-query attention (GQA): the K
/// and V projections have kv_heads·(hidden/heads) outputs instead of hidden.
struct TransformerConfig {
    std::string name;
    std::string source;  ///< where the shape comes from (paper, table)
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0;    ///< 0 means `heads` (multi-head attention)
    int ffn_hidden = 0;  ///< 0 means 4·hidden
    int vocab = 0;
    int seq_len = 2048;  ///< default (and, with learned positions, maximum) sequence
    Mlp mlp = Mlp::gelu;
    Norm norm = Norm::layernorm;
    bool linear_bias = true;        ///< biases in the linear layers (GPT yes, Llama no)
    bool learned_positions = true;  ///< a seq_len×hidden position table (GPT); false: RoPE
    bool tied_embeddings = true;    ///< LM head reuses the input embedding matrix
    bool dropout = true;            ///< dropout masks are stored (Korthikanti et al.)
    double stated_params = 0;       ///< published parameter count (0: none); for checks
    /// The shape is not from a published table but chosen to match `stated_params` (so a
    /// size check against it verifies nothing); `pipesim list` marks such presets.
    bool reconstructed_shape = false;

    int kv_heads_or_default() const { return kv_heads > 0 ? kv_heads : heads; }
    int ffn_or_default() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
    int head_dim() const { return hidden / heads; }
    /// Width of the K (and of the V) projection: kv_heads · head_dim.
    int kv_dim() const { return kv_heads_or_default() * head_dim(); }
};

/// Throws std::invalid_argument (naming the model and field) unless every size is positive,
/// heads divides hidden and kv_heads divides heads.
void check_config(const TransformerConfig& config);

/// Parameters of one transformer layer, split by how tensor parallelism treats them.
struct LayerParams {
    double linear_weights = 0;  ///< Q, K, V, O and MLP matrices (split over t)
    double linear_biases = 0;   ///< their biases (split over t, approximately)
    double norms = 0;           ///< two norms per layer (replicated on every TP rank)
    double total() const { return linear_weights + linear_biases + norms; }
};

/// One layer's parameters. GPT: 12h² + 13h (Narayanan et al., 2021, eq. 2).
LayerParams layer_params(const TransformerConfig& config);

/// Input embedding (vocab·hidden, plus seq_len·hidden learned positions).
double embedding_params(const TransformerConfig& config);

/// The final norm and, unless embeddings are tied, the vocab·hidden output matrix.
double head_params(const TransformerConfig& config);

/// Whole-model parameters, each tensor counted once.
double total_params(const TransformerConfig& config);

}  // namespace pipesim::models
