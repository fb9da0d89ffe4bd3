// The SimGrid engine plugin's one exported symbol (see engine_api.hpp): everything else in
// pipesim-simgrid.so, the project's code included, is hidden (plugin.map), so its copies never
// stand in for those of the program that loads it.
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "engine.hpp"
#include "engine_api.hpp"
#include "fileio/memory_budget.hpp"
#include "schedules/validate.hpp"

namespace pipesim::simgrid::detail {
namespace {

EngineError simulate_caught(const Schedule& schedule, const SimWorkload& workload,
                            const ClusterSpec& cluster, const Layout& layout,
                            const SimOptions& options, SimResult& result, std::string& error) {
    try {
        result = run_engine(schedule, workload, cluster, layout, options);
        return EngineError::none;
    } catch (const InvalidSchedule& e) {
        error = e.what();
        return EngineError::invalid_schedule;
    } catch (const fileio::OverMemoryBudget& e) {
        error = e.what();
        return EngineError::over_memory;
    } catch (const std::invalid_argument& e) {
        error = e.what();
        return EngineError::invalid_argument;
    } catch (const std::logic_error& e) {
        error = e.what();
        return EngineError::logic_error;
    } catch (const std::bad_alloc&) {
        return EngineError::out_of_memory;
    } catch (const std::exception& e) {
        error = e.what();
    } catch (...) {
        error = "the SimGrid engine failed with an unknown exception";
    }
    return EngineError::runtime_error;
}

constexpr EngineApi engine_api{engine_api_version, crossing_type_sizes(), &simulate_caught};

}  // namespace
}  // namespace pipesim::simgrid::detail

extern "C" __attribute__((visibility("default"))) const pipesim::simgrid::detail::EngineApi*
pipesim_simgrid_engine_api() {
    return &pipesim::simgrid::detail::engine_api;
}
