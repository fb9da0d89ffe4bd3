#pragma once
// Small clusters for the SimGrid engine's tests.

#include "sim/simgrid/simulate.hpp"

namespace pipesim::test {

/// `nodes` nodes of `per_node` GPUs named `gpu`: the GPUs' ports inside a node are `intra`,
/// the network links `nic` (a NIC per GPU, or one per node).
inline simgrid::ClusterSpec small_cluster(int nodes, int per_node, const char* gpu,
                                          simgrid::LinkSpec intra, simgrid::LinkSpec nic,
                                          bool nic_per_gpu = true) {
    simgrid::ClusterSpec c;
    c.name = "test";
    c.gpus_per_node = per_node;
    c.nodes = {simgrid::NodeGroup{nodes, gpu, 1.0}};
    c.intra_node = intra;
    c.nic = nic;
    c.nic_per_gpu = nic_per_gpu;
    return c;
}

}  // namespace pipesim::test
