#pragma once
// Custom GPUs from a small JSON file (format: docs/gpu-format.md): a preset with some rates
// changed (a measured GEMM rate, a newer part's bandwidth) or a GPU of its own.

#include <cstddef>
#include <string>
#include <string_view>

#include "models/gpu.hpp"

namespace pipesim::models {

/// Largest file a GPU description may be.
inline constexpr std::size_t max_gpu_file_bytes = std::size_t{1} << 16;

/// Parses a GPU JSON object. `source` names the text in messages (a file name). Throws
/// std::invalid_argument (a pipesim::fileio::ParseError) with one line
/// "SOURCE:LINE:COLUMN: what is wrong" for a syntax error, an unknown or mistyped field, a
/// value out of its range, an unknown `base` or, without a `base`, a missing rate.
GpuSpec parse_gpu_json(std::string_view text, const std::string& source);

/// Reads (at most max_gpu_file_bytes) and parses a GPU JSON file.
GpuSpec load_gpu_file(const std::string& path);

/// A preset name (find_gpu) or, for a name ending in ".json" or holding a '/', a GPU file.
GpuSpec resolve_gpu(std::string_view name_or_path);

}  // namespace pipesim::models
