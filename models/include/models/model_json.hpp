#pragma once
// Custom models from a small JSON file (format: docs/model-format.md).

#include <cstddef>
#include <string>
#include <string_view>

#include "models/transformer.hpp"

namespace pipesim::models {

/// Largest values a model file may state (docs/model-format.md, "Limits"). They are far above
/// any published model and keep every derived count (parameters, FLOPs, partitioning work)
/// finite and fast, so a typo like "layers": 2000000000 is an error, not minutes of work.
struct ModelLimits {
    static constexpr std::size_t max_file_bytes = std::size_t{1} << 20;  ///< 1 MiB
    static constexpr int max_layers = 10'000;
    static constexpr int max_hidden = 1 << 18;          ///< 262144
    static constexpr int max_heads = 1 << 12;           ///< 4096 (also kv_heads)
    static constexpr int max_ffn_hidden = 1 << 20;      ///< 4 × max_hidden
    static constexpr int max_vocab = 1 << 22;           ///< 4194304
    static constexpr int max_seq_len = 1 << 20;         ///< 1048576 tokens
    static constexpr std::size_t max_text_bytes = 256;  ///< name, source, base
};

/// Parses a model JSON object. `source` names the text in messages (a file name).
/// Throws std::invalid_argument (a pipesim::fileio::ParseError) with one line
/// "SOURCE:LINE:COLUMN: what is wrong" for a syntax error, a repeated key, nesting deeper
/// than a model file has, an unknown or mistyped field, a value beyond ModelLimits, a missing
/// required field or an invalid shape. Values from the file appear only as short excerpts
/// with control bytes escaped.
TransformerConfig parse_model_json(std::string_view text, const std::string& source);

/// Reads (at most ModelLimits::max_file_bytes) and parses a model JSON file. Throws
/// std::invalid_argument "PATH: cannot read: REASON" if it cannot be read.
TransformerConfig load_model_file(const std::string& path);

}  // namespace pipesim::models
