#pragma once
// A models::Workload in one call, for the model tests.

#include "models/layer_costs.hpp"

namespace pipesim::test {

/// Microbatch b, sequence s, TP degree t, sequence parallelism, recomputation, attention.
inline models::Workload work(int b, int s, int t = 1, bool sp = true,
                             models::Recompute r = models::Recompute::none,
                             models::AttentionKernel k = models::AttentionKernel::fused) {
    models::Workload w;
    w.microbatch = b;
    w.seq_len = s;
    w.tp = t;
    w.sequence_parallel = sp;
    w.recompute = r;
    w.attention = k;
    return w;
}

}  // namespace pipesim::test
