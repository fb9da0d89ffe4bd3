#pragma once
// --progress MODE of sweep and simulate.

#include <string>

#include "sweep/runner.hpp"

namespace pipesim::cli {

/// auto, bar, lines or none; anything else is a UsageError naming `flag`.
sweep::ProgressStyle parse_progress(const std::string& flag, const std::string& text);

}  // namespace pipesim::cli
