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

/// A preset name, or a path to a model JSON file (fileio::names_a_file). Throws
/// std::invalid_argument for an unknown name or a bad file.
TransformerConfig resolve_model(std::string_view name_or_path);

}  // namespace pipesim::models
