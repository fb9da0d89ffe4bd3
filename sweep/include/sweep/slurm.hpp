#pragma once
// The shard of a sweep that runs as one task of a Slurm job array (`sweep --shard auto`).

#include <functional>
#include <utility>

namespace pipesim::sweep {

/// Reads an environment variable: its value, or nullptr when unset (std::getenv's contract).
using EnvironmentLookup = std::function<const char*(const char*)>;

/// The (shard, shards) pair of this Slurm array task: the task's position among the array's
/// tasks and their number, from SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN,
/// SLURM_ARRAY_TASK_MAX and SLURM_ARRAY_TASK_COUNT. Arrays with a step (`--array=0-30:2`)
/// count their tasks in order; an array whose ids are not evenly spaced (`--array=1,4,5`)
/// cannot name a balanced slice and is refused. Throws std::invalid_argument with one line
/// naming the variable that is missing or inconsistent.
std::pair<int, int> slurm_array_shard(const EnvironmentLookup& environment);

}  // namespace pipesim::sweep
