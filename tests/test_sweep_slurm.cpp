// `sweep --shard auto`: the shard of a Slurm array task, from the variables Slurm sets
// (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES": SLURM_ARRAY_TASK_ID/_COUNT/_MIN/_MAX).
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include "sweep/slurm.hpp"

using pipesim::sweep::slurm_array_shard;

namespace {

// An environment holding only `variables`.
pipesim::sweep::EnvironmentLookup environment_of(
    const std::map<std::string, std::string>& variables) {
    return [variables](const char* name) -> const char* {
        const auto found = variables.find(name);
        return found == variables.end() ? nullptr : found->second.c_str();
    };
}

// The environment of task `id` of `sbatch --array=MIN-MAX:STEP`, as Slurm sets it.
pipesim::sweep::EnvironmentLookup array_task(int id, int min, int max, int step) {
    return environment_of({{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
                           {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
                           {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
                           {"SLURM_ARRAY_TASK_COUNT", std::to_string((max - min) / step + 1)}});
}

}  // namespace

TEST_CASE("slurm shard: --array=0-7 gives task i shard i of 8", "[sweep][slurm]") {
    for (int id = 0; id <= 7; ++id)
        CHECK(slurm_array_shard(array_task(id, 0, 7, 1)) == std::pair{id, 8});
}

TEST_CASE("slurm shard: arrays that start above 0 or step cover every shard once",
          "[sweep][slurm]") {
    for (const auto& [min, max, step] :
         {std::tuple{1, 16, 1}, std::tuple{10, 40, 3}, std::tuple{0, 30, 2}}) {
        const int count = (max - min) / step + 1;
        std::set<int> shards;
        for (int id = min; id <= max; id += step) {
            const auto [shard, total] = slurm_array_shard(array_task(id, min, max, step));
            CHECK(total == count);
            shards.insert(shard);
        }
        CHECK(shards.size() == static_cast<std::size_t>(count));
        CHECK(*shards.begin() == 0);
        CHECK(*shards.rbegin() == count - 1);
    }
}

TEST_CASE("slurm shard: a single-task array is shard 0 of 1", "[sweep][slurm]") {
    CHECK(slurm_array_shard(array_task(5, 5, 5, 1)) == std::pair{0, 1});
}

TEST_CASE("slurm shard: outside an array or with inconsistent variables it names the variable",
          "[sweep][slurm]") {
    CHECK_THROWS_WITH(slurm_array_shard(environment_of({})),
                      Catch::Contains("SLURM_ARRAY_TASK_ID is not set"));
    CHECK_THROWS_WITH(slurm_array_shard(environment_of({{"SLURM_ARRAY_TASK_ID", "3"}})),
                      Catch::Contains("SLURM_ARRAY_TASK_COUNT is not set"));
    CHECK_THROWS_WITH(slurm_array_shard(environment_of({{"SLURM_ARRAY_TASK_ID", "x3"},
                                                        {"SLURM_ARRAY_TASK_COUNT", "4"},
                                                        {"SLURM_ARRAY_TASK_MIN", "0"},
                                                        {"SLURM_ARRAY_TASK_MAX", "3"}})),
                      Catch::Contains("SLURM_ARRAY_TASK_ID='x3'"));
    // --array=1,4,5: three tasks whose ids are not evenly spaced.
    CHECK_THROWS_WITH(slurm_array_shard(environment_of({{"SLURM_ARRAY_TASK_ID", "4"},
                                                        {"SLURM_ARRAY_TASK_COUNT", "3"},
                                                        {"SLURM_ARRAY_TASK_MIN", "1"},
                                                        {"SLURM_ARRAY_TASK_MAX", "5"}})),
                      Catch::Contains("not evenly spaced"));
    // An id outside MIN..MAX, and several tasks sharing one id.
    CHECK_THROWS_WITH(slurm_array_shard(array_task(9, 0, 7, 1)), Catch::Contains("inconsistent"));
    CHECK_THROWS_WITH(slurm_array_shard(environment_of({{"SLURM_ARRAY_TASK_ID", "2"},
                                                        {"SLURM_ARRAY_TASK_COUNT", "3"},
                                                        {"SLURM_ARRAY_TASK_MIN", "2"},
                                                        {"SLURM_ARRAY_TASK_MAX", "2"}})),
                      Catch::Contains("not evenly spaced"));
}
