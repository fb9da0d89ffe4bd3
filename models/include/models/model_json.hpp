#pragma once
// Custom models from a small JSON file (format: docs/model-format.md).

#include <string>
#include <string_view>

#include "models/transformer.hpp"

namespace pipesim::models {

/// Parses a model JSON object. `source` names the text in messages (a file name).
/// Throws std::invalid_argument with one line "SOURCE:LINE:COLUMN: what is wrong" for a
/// syntax error, an unknown or mistyped field, a missing required field or an invalid shape.
TransformerConfig parse_model_json(std::string_view text, const std::string& source);

/// Reads and parses a model JSON file. Throws std::invalid_argument if it cannot be read.
TransformerConfig load_model_file(const std::string& path);

}  // namespace pipesim::models
