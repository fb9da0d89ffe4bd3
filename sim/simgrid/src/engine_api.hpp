#pragma once
// What crosses between pipesim and the SimGrid engine plugin (pipesim-simgrid.so): one C entry
// point returning a table. Both sides compile the types of simulate.hpp from the same headers
// and share libstdc++, so those types cross as they are; each side keeps its own copy of the
// project's code (the plugin exports nothing else), so no exception crosses: the plugin catches
// and returns the error as a kind and a message, and the loader throws it again.

#include <array>
#include <cstddef>
#include <string>

#include "schedules/schedule.hpp"
#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid::detail {

/// Changed whenever the table or the meaning of its fields changes.
inline constexpr int engine_api_version = 10;

/// The plugin's exported symbol: `const EngineApi* pipesim_simgrid_engine_api()`.
inline constexpr const char* engine_entry_point = "pipesim_simgrid_engine_api";

/// What simulate() threw inside the plugin.
enum class EngineError : int {
    none,
    invalid_schedule,  ///< InvalidSchedule
    invalid_argument,  ///< std::invalid_argument
    logic_error,       ///< std::logic_error (a second run in one process)
    out_of_memory,     ///< std::bad_alloc
    runtime_error,     ///< anything else
    over_memory,       ///< fileio::OverMemoryBudget
};

/// The sizes of the types that cross, so that a plugin built from other headers is refused
/// instead of misread.
constexpr std::array<std::size_t, 6> crossing_type_sizes() {
    return {sizeof(Schedule), sizeof(SimWorkload), sizeof(ClusterSpec),
            sizeof(Layout),   sizeof(SimOptions),  sizeof(SimResult)};
}

struct EngineApi {
    int version = engine_api_version;
    std::array<std::size_t, 6> type_sizes = crossing_type_sizes();
    /// simulate(): fills `result` and returns none, or returns what it threw with its message
    /// in `error`.
    EngineError (*simulate)(const Schedule& schedule, const SimWorkload& workload,
                            const ClusterSpec& cluster, const Layout& layout,
                            const SimOptions& options, SimResult& result,
                            std::string& error) = nullptr;
};

using EngineEntryPoint = const EngineApi* (*)();

}  // namespace pipesim::simgrid::detail
