#include "zb_paper.hpp"

namespace pipesim::reproduce::zb_paper {

sweep::Job model_job(const Setup& s, int m, const std::string& schedule, sweep::Engine engine) {
    sweep::Job job;
    job.engine = engine;
    job.schedule = schedule;
    job.p = s.p;
    job.m = m;
    if (schedule == "interleaved-1f1b") job.v = model_chunks(s);
    job.model = s.preset;
    job.gpu = "a100-80gb";
    job.mb = s.mb;
    job.attention = "unfused";  // Megatron-LM's default without FlashAttention
    job.post_validation = post_validated(schedule);
    if (engine == sweep::Engine::simgrid) job.cluster = "zb-a100-roce";
    return job;
}

}  // namespace pipesim::reproduce::zb_paper
