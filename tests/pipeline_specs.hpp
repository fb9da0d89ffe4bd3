#pragma once
// Pipeline specs the analysis tests share.

#include <string>

#include "analysis/run.hpp"
#include "analysis/spec.hpp"
#include "sim/simgrid/cluster.hpp"

namespace pipesim::test {

/// `schedule` on p devices with m microbatches of one sequence each, costs from the Zero
/// Bubble paper's 1.5B model on an A100 80 GB, `dp` replicas of `tp` GPUs per device.
inline analysis::PipelineSpec zb_1_5b_spec(const std::string& schedule, int p, int m, int dp,
                                           int tp = 1) {
    analysis::PipelineSpec spec;
    spec.schedule = schedule;
    spec.generator = {p, m, 0, 0};
    analysis::ModelSpec model;
    model.model = "zb-1.5b";
    model.gpu = "a100-80gb";
    model.workload.microbatch = 1;
    spec.costs.model = model;
    spec.dp = dp;
    spec.tp = tp;
    return spec;
}

/// The SimGrid engine on the preset `cluster` with NCCL's ring for the gradient reduction,
/// as analysis::gradient_reduction()'s closed form assumes.
inline analysis::SimGridEngine ring_simgrid(const std::string& cluster) {
    analysis::SimGridEngine engine;
    engine.cluster = simgrid::load_cluster(cluster);
    engine.options.nccl_algo = simgrid::NcclAlgo::ring;
    return engine;
}

}  // namespace pipesim::test
