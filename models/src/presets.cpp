#include "models/presets.hpp"

#include <vector>

#include "fileio/files.hpp"
#include "models/model_json.hpp"
#include "names.hpp"

namespace pipesim::models {

namespace {

// GPT-style: GeLU MLP (f = 4h), LayerNorm, biases, learned positions, tied embeddings,
// dropout, GPT-2 BPE vocabulary of 50,257 unless the preset says otherwise (Megatron pads it
// to a multiple of 128; ignored).
TransformerConfig gpt(const char* name, const char* source, int layers, int hidden, int heads,
                      int seq_len, double stated) {
    TransformerConfig c;
    c.name = name;
    c.source = source;
    c.layers = layers;
    c.hidden = hidden;
    c.heads = heads;
    c.vocab = 50257;
    c.seq_len = seq_len;
    c.stated_params = stated;
    return c;
}

// A GPT-style preset whose shape was reconstructed from its stated size.
TransformerConfig reconstructed(TransformerConfig c) {
    c.reconstructed_shape = true;
    return c;
}

// Llama-style: SwiGLU MLP, RMSNorm, no biases, RoPE (no position table), untied output
// matrix, no dropout.
TransformerConfig llama(const char* name, const char* source, int layers, int hidden, int heads,
                        int kv_heads, int ffn, int vocab, int seq_len, double stated) {
    TransformerConfig c = gpt(name, source, layers, hidden, heads, seq_len, stated);
    c.kv_heads = kv_heads;
    c.ffn_hidden = ffn;
    c.vocab = vocab;
    c.mlp = Mlp::swiglu;
    c.norm = Norm::rmsnorm;
    c.linear_bias = false;
    c.learned_positions = false;
    c.tied_embeddings = false;
    c.dropout = false;
    return c;
}

constexpr const char* zb = "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), Table 3";

// The models of the Zero Bubble and Controllable Memory papers, whose experiments ran in one
// repository (sail-sg/zero-bubble-pipeline-parallelism), with the 32,000-token SentencePiece
// vocabulary of its training script (examples/pretrain_zero_bubble.sh,
// GPTSentencePieceTokenizer on the repository's sample dataset; Megatron-LM keeps 32,000, a
// multiple of 128). The papers give layers, hidden size and heads and name each model by its
// size, not the vocabulary; only this one gives the Zero Bubble paper's four sizes: with it
// the models hold 1.478, 6.177, 14.643 and 28.293 billion parameters (1.5B, 6.2B, 14.6B,
// 28.3B), with GPT-2's 50,257 they would hold 1.520, 6.251, 14.736 and 28.405 billion (6.3B,
// 14.7B, 28.4B).
TransformerConfig zb_repository_gpt(const char* name, const char* source, int layers, int hidden,
                                    int heads, int seq_len, double stated) {
    TransformerConfig c = gpt(name, source, layers, hidden, heads, seq_len, stated);
    c.vocab = 32000;
    return c;
}

// The Controllable Memory paper's table was not available when these were written: the
// sizes are the paper's, the shapes are GPT-style shapes chosen to match them (with the
// repository's vocabulary they hold 9.614, 21.050, 38.477 and 98.506 billion parameters).
// Check them against the paper before relying on per-layer figures.
constexpr const char* cm =
    "Qi et al., Pipeline Parallelism with Controllable Memory (NeurIPS 2024): stated size; "
    "shape reconstructed, not checked against the paper's table";
constexpr const char* llama2 =
    "Touvron et al., Llama 2 (2023), Table 1 and the released config.json; stated size is "
    "the released checkpoint's parameter count";
constexpr const char* llama3 =
    "Llama Team, The Llama 3 Herd of Models (2024), Table 3 and the released config.json; "
    "stated size is the released checkpoint's parameter count";

std::vector<TransformerConfig> make_presets() {
    return {
        zb_repository_gpt("zb-1.5b", zb, 22, 2304, 24, 1024, 1.5e9),
        zb_repository_gpt("zb-6.2b", zb, 30, 4096, 32, 1024, 6.2e9),
        zb_repository_gpt("zb-14.6b", zb, 46, 5120, 40, 1024, 14.6e9),
        zb_repository_gpt("zb-28.3b", zb, 62, 6144, 48, 1024, 28.3e9),
        reconstructed(zb_repository_gpt("cm-9.6b", cm, 30, 5120, 40, 2048, 9.6e9)),
        reconstructed(zb_repository_gpt("cm-21b", cm, 46, 6144, 48, 2048, 21e9)),
        reconstructed(zb_repository_gpt("cm-38.5b", cm, 62, 7168, 56, 2048, 38.5e9)),
        reconstructed(zb_repository_gpt("cm-98.5b", cm, 78, 10240, 80, 2048, 98.5e9)),
        gpt("gpt3-175b",
            "Brown et al., Language Models are Few-Shot Learners (2020), Table 2.1: "
            "96 layers, d_model 12288, 96 heads, context 2048",
            96, 12288, 96, 2048, 175e9),
        llama("llama2-7b", llama2, 32, 4096, 32, 32, 11008, 32000, 4096, 6'738'415'616.0),
        llama("llama2-13b", llama2, 40, 5120, 40, 40, 13824, 32000, 4096, 13'015'864'320.0),
        llama("llama2-70b", llama2, 80, 8192, 64, 8, 28672, 32000, 4096, 68'976'648'192.0),
        llama("llama3-8b", llama3, 32, 4096, 32, 8, 14336, 128256, 8192, 8'030'261'248.0),
        llama("llama3-70b", llama3, 80, 8192, 64, 8, 28672, 128256, 8192, 70'553'706'496.0),
        llama("llama3-405b", llama3, 126, 16384, 128, 8, 53248, 128256, 8192, 405'853'388'800.0),
    };
}

}  // namespace

std::span<const TransformerConfig> model_presets() {
    static const std::vector<TransformerConfig> presets = make_presets();
    return presets;
}

const TransformerConfig& find_model(std::string_view name) {
    return detail::find_by_name(model_presets(), name, "model");
}

TransformerConfig resolve_model(std::string_view name_or_path) {
    if (fileio::names_a_file(name_or_path)) return load_model_file(std::string(name_or_path));
    return find_model(name_or_path);
}

}  // namespace pipesim::models
