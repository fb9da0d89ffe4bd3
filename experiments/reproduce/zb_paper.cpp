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

}  // namespace pipesim::reproduce::zb_paper
