#pragma once
// The evaluation `pipesim search` passes the search, for the search tests: a timed replay
// with one full stage's F, B, W and the latency of the options, memory with their M_W share.

#include "schedules/metrics.hpp"
#include "schedules/search.hpp"
#include "sim/replay.hpp"

namespace pipesim::test {

// Search options for p devices, m microbatches, a cap in M_B, full-stage costs and a latency.
inline SearchOptions search_options(int p, int m, double cap, PassCosts full, double c = 0) {
    SearchOptions o;
    o.devices = p;
    o.microbatches = m;
    o.memory_limit = cap;
    o.costs = full;
    o.comm_latency = c;
    return o;
}

inline SearchEvaluation replay_evaluation(const Schedule& s, const SearchOptions& o) {
    const Timeline t =
        sim::replay(s,
                    uniform_stage_costs(s.devices, s.chunks, o.costs.forward,
                                        o.costs.backward_input, o.costs.backward_weight),
                    {o.comm_latency});
    const Metrics m = compute_metrics(t, unit_memory_model(s.devices, s.chunks, o.mem_w_ratio));
    return SearchEvaluation{m.bubble_rate, m.makespan, m.peak_activation_max};
}

}  // namespace pipesim::test
