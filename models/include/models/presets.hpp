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
inline bool names_a_file(std::string_view name_or_path) {
    if (name_or_path.find('/') != std::string_view::npos) return true;
    // ".json" in any case, as the other files' readers take their extensions (ML.JSON).
    if (name_or_path.size() < 5) return false;
    const std::string_view ext = name_or_path.substr(name_or_path.size() - 5);
    constexpr std::string_view json = ".json";
    for (std::size_t i = 0; i < json.size(); ++i)
        if ((ext[i] | 0x20) != json[i]) return false;
    return true;
}

/// A preset name, or a path to a model JSON file (names_a_file). Throws std::invalid_argument
/// for an unknown name or a bad file.
TransformerConfig resolve_model(std::string_view name_or_path);

}  // namespace pipesim::models
