#pragma once
// Named model presets and the lookup that also accepts a model JSON file.

#include <span>
#include <string_view>

#include "models/transformer.hpp"

namespace pipesim::models {

/// All presets, in the order `pipesim list` shows them. Each cites its source.
std::span<const TransformerConfig> model_presets();

/// The preset called `name`. Throws std::invalid_argument listing the valid names.
const TransformerConfig& find_model(std::string_view name);

/// Whether a `--model` or `--gpu` argument names a file rather than a preset: it ends in
/// ".json" (in any case) or holds a '/'.
bool names_a_file(std::string_view name_or_path);

/// A preset name, or a path to a model JSON file (names_a_file). Throws std::invalid_argument
/// for an unknown name or a bad file.
TransformerConfig resolve_model(std::string_view name_or_path);

}  // namespace pipesim::models
