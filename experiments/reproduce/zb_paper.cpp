#include "zb_paper.hpp"

namespace pipesim::reproduce::zb_paper {

sweep::Job model_job(const Setup& s, int m, const std::string& schedule, sweep::Engine engine,
                     Split split) {
    sweep::Job job;
    job.engine = engine;
    job.schedule = schedule;
    job.p = s.p;
    job.m = m;
    const bool interleaved = schedule == "interleaved-1f1b";
    if (split == Split::pipesim) {
        if (interleaved) job.v = model_chunks(s);
    } else {
        const int k = paper_chunks(s);
        if (interleaved) job.v = k;
        job.first_stage_layers = interleaved ? 0 : k - 1;
        job.last_stage_layers = job.first_stage_layers;
    }
    job.model = s.preset;
    job.gpu = "a100-80gb";
    job.mb = s.mb;
    job.attention = "unfused";  // Megatron-LM's default without FlashAttention
    job.post_validation = post_validated(schedule);
    if (engine == sweep::Engine::simgrid) job.cluster = "zb-a100-roce";
    return job;
}

sweep::Job profiled_job(const ProfiledRow& row, const std::string& schedule, int v) {
    sweep::Job job;
    job.schedule = schedule;
    job.p = setups[row.setup].p;
    job.m = row.m;
    job.v = v;
    job.costs = {row.f, row.b, row.w};
    job.comm = row.comm;
    // The paper's scheduler counts a W's activations as half of a B's (M_W = M_B / 2); zb-1p
    // and zb-2p plan their memory cap with the same share.
    job.mem_w_ratio = 0.5;
    return job;
}

}  // namespace pipesim::reproduce::zb_paper
