// What the engine is given, built without SimGrid: the simple workload and the names of modes.
#include <vector>

#include "sim/simgrid/simulate.hpp"

namespace pipesim::simgrid {

const char* to_string(SimMode mode) {
    return mode == SimMode::symmetric ? "symmetric" : "full";
}

SimWorkload simple_workload(const StageCosts& costs, int devices, double message_bytes,
                            double gradient_bytes) {
    const std::size_t stages = costs.stages();
    return SimWorkload{costs,
                       std::vector<double>(stages, message_bytes),
                       std::vector<int>(stages, 0),
                       std::vector<int>(stages, 0),
                       std::vector<double>(stages, 0.0),
                       std::vector<double>(static_cast<std::size_t>(devices), gradient_bytes)};
}

}  // namespace pipesim::simgrid
