#pragma once
// The engine proper, inside the engine plugin: what simulate() runs once the plugin is loaded.

#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid::detail {

/// simulate()'s work in this process, with simulate()'s contract (and its exceptions).
SimResult run_engine(const Schedule& schedule, const SimWorkload& workload,
                     const ClusterSpec& cluster, const Layout& layout, const SimOptions& options);

}  // namespace pipesim::simgrid::detail
