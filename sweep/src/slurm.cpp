#include "sweep/slurm.hpp"

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace pipesim::sweep {

namespace {

// The non-negative integer in the variable `name`; throws when unset or not a number.
long long slurm_number(const EnvironmentLookup& environment, const char* name) {
    const char* value = environment(name);
    if (value == nullptr)
        throw std::invalid_argument(fmt::format(
            "--shard auto: {} is not set; run inside a Slurm job array (sbatch --array=0-N) "
            "or give --shard I/N",
            name));
    const std::string_view text(value);
    long long number = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size() || number < 0)
        throw std::invalid_argument(
            fmt::format("--shard auto: {}='{}' is not a non-negative integer", name, text));
    return number;
}

}  // namespace

std::pair<int, int> slurm_array_shard(const EnvironmentLookup& environment) {
    const long long id = slurm_number(environment, "SLURM_ARRAY_TASK_ID");
    const long long count = slurm_number(environment, "SLURM_ARRAY_TASK_COUNT");
    const long long min = slurm_number(environment, "SLURM_ARRAY_TASK_MIN");
    const long long max = slurm_number(environment, "SLURM_ARRAY_TASK_MAX");
    if (count < 1 || count > 1'000'000 || max < min || id < min || id > max)
        throw std::invalid_argument(fmt::format(
            "--shard auto: inconsistent Slurm array: task {} of {} tasks with ids {}..{}", id,
            count, min, max));
    if (count == 1) return {0, 1};
    // Evenly spaced ids min, min + step, ..., max: sbatch --array=MIN-MAX[:STEP].
    const long long span = max - min;
    if (span == 0 || span % (count - 1) != 0 || (id - min) % (span / (count - 1)) != 0)
        throw std::invalid_argument(fmt::format(
            "--shard auto: the array's {} task ids {}..{} are not evenly spaced (task {}); use "
            "--array=MIN-MAX[:STEP], or --shard I/N",
            count, min, max, id));
    const long long step = span / (count - 1);
    return {static_cast<int>((id - min) / step), static_cast<int>(count)};
}

}  // namespace pipesim::sweep
