#include "fidelity_runs.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/time_budget.hpp"

namespace pipesim::reproduce::fidelity {

namespace {

constexpr double seq = 2048, vocab = 51200;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Prediction from(const analysis::Analysis& a) {
    Prediction p;
    p.ran = true;
    p.step_time = a.model->step_time;
    p.samples = a.model->samples_per_second;
    p.peak_bytes = *std::max_element(a.model->total_bytes.begin(), a.model->total_bytes.end());
    const analysis::TimeBudget budget = analysis::time_budget(a);
    if (budget.kernel_shares) {
        // gemm, attention and memory_bound come first; the rest is not kernels.
        const std::vector<analysis::StepShare> shares = analysis::step_shares(budget);
        p.step_shares[3] = 1;
        for (std::size_t i = 0; i < analysis::kernel_share_count; ++i) {
            p.step_shares[i] = shares[i].share;
            p.step_shares[3] -= shares[i].share;
        }
    }
    return p;
}

std::vector<double> ranks(const std::vector<double>& x) {
    std::vector<std::size_t> order(x.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]])
            ++j;
        for (std::size_t k = i; k <= j; ++k)
            r[order[k]] = static_cast<double>(i + j) / 2;  // ties: mean rank
        i = j + 1;
    }
    return r;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
    const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

}  // namespace

double sc21_iteration_flops(const Sc21Row& r) {
    const double l = r.layers, h = r.hidden;
    return 96.0 * r.batch * seq * l * h * h * (1 + seq / (6 * h) + vocab / (16 * l * h));
}

double model_iteration_flops(const Sc21Row& r) {
    const double l = r.layers, h = r.hidden;
    return 72.0 * r.batch * seq * l * h * h * (1 + seq / (6 * h) + vocab / (12 * l * h));
}

analysis::PipelineSpec sc21_spec(const Sc21Row& row, const std::string& models_dir,
                                 const std::string& gpu) {
    analysis::PipelineSpec spec;
    spec.schedule = row.chunks > 1 ? "interleaved-1f1b" : "1f1b";
    spec.generator.devices = row.pp;
    spec.generator.microbatches = row.microbatches();
    spec.generator.chunks = row.chunks;
    // The interleaved schedule of 2021 exchanged once per step, after its F and its backward
    // (p2p overlap came to Megatron-LM in 2023).
    spec.step_exchange = row.chunks > 1;
    spec.dp = row.dp();
    spec.tp = row.tp;
    analysis::ModelSpec m;
    m.model = models_dir + "/" + row.model + ".json";
    m.gpu = gpu;
    m.workload.microbatch = row.mb;
    m.workload.recompute = models::Recompute::full;
    m.workload.sequence_parallel = false;
    m.workload.attention = models::AttentionKernel::unfused;
    // Megatron-LM as of the SC'21 scripts (August 2021): fp16 gradients (no
    // --accumulate-allreduce-grads-in-fp32 in examples/sc21/CONFIG.sh), accumulated by
    // PyTorch after each W GEMM (gradient accumulation fusion came in February 2022).
    m.optimizer.grad_bytes = 2;
    m.workload.grad_accumulation_fusion = false;
    // Its norms: apex's non-persistent LayerNorm kernels, copied into megatron/fused_kernels
    // (the persistent ones came in October 2021).
    m.workload.persistent_norm = false;
    const int even = row.layers / (row.pp * row.chunks);
    if (row.pp * row.chunks > 1) m.partition = {even, even};
    spec.costs.model = m;
    return spec;
}

Prediction predict_analytic(const analysis::PipelineSpec& spec, bool overlap_grad_reduce,
                            bool post_validation, bool overlap_param_gather) {
    const double start = now();
    Prediction p = from(
        analysis::run(spec, analysis::AnalyticEngine{.record_transfers = false,
                                                     .record_ops = false,
                                                     .overlap_grad_reduce = overlap_grad_reduce,
                                                     .overlap_param_gather = overlap_param_gather,
                                                     .post_validation = post_validation}));
    p.wall = now() - start;
    return p;
}

Prediction predict_simgrid(const analysis::PipelineSpec& spec, const std::string& cluster,
                           int limit_s, bool overlap_grad_reduce, bool post_validation) {
    int fds[2];
    if (pipe(fds) != 0) return {false, "no pipe"};
    const double start = now();
    std::fflush(nullptr);  // the child must not write the parent's buffered output again
    const pid_t child = fork();
    if (child < 0) return {false, "no fork"};
    if (child == 0) {
        close(fds[0]);
        alarm(static_cast<unsigned>(limit_s));
        double out[4] = {0, 0, 0, 0};
        try {
            analysis::SimGridEngine engine;
            engine.cluster = simgrid::load_cluster(cluster);
            engine.options.record_transfers = false;
            engine.options.overlap_grad_reduce = overlap_grad_reduce;
            engine.options.post_validation = post_validation;
            const Prediction p = from(analysis::run(spec, engine));
            out[0] = 1;
            out[1] = p.step_time;
            out[2] = p.samples;
            out[3] = p.peak_bytes;
        } catch (const std::exception&) {
        }
        [[maybe_unused]] const auto written = write(fds[1], out, sizeof out);
        _exit(0);
    }
    close(fds[1]);
    double in[4] = {0, 0, 0, 0};
    const auto got = read(fds[0], in, sizeof in);
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    Prediction p;
    p.wall = now() - start;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        p.note = "over the time limit";
        return p;
    }
    if (got != static_cast<ssize_t>(sizeof in) || in[0] != 1) {
        p.note = "failed";
        return p;
    }
    p.ran = true;
    p.step_time = in[1];
    p.samples = in[2];
    p.peak_bytes = in[3];
    return p;
}

double implied_gemm_ceiling(analysis::PipelineSpec spec, double target, bool overlap_grad_reduce,
                            bool post_validation) {
    const std::string base = spec.costs.model->gpu;
    std::string path = (std::filesystem::temp_directory_path() / "pipesim-gemm-XXXXXX.json");
    const int fd = mkstemps(path.data(), 5);
    if (fd < 0) throw std::runtime_error("implied_gemm_ceiling: no temporary file");
    close(fd);
    struct Remove {
        std::string path;
        ~Remove() {
            std::error_code ignored;
            std::filesystem::remove(path, ignored);
        }
    } remove{path};
    spec.costs.model->gpu = path;
    const auto samples = [&](double ceiling) {
        std::ofstream(path) << fmt::format(R"({{"base": "{}", "gemm_efficiency": {:.17g}}})", base,
                                           ceiling);
        return predict_analytic(spec, overlap_grad_reduce, post_validation).samples;
    };
    double low = 0.2, high = 1.0;
    if (samples(low) > target) return 0;
    if (samples(high) < target) return 1;
    for (int step = 0; step < 20; ++step) {  // to within 10⁻⁶; the report shows 3 decimals
        const double mid = (low + high) / 2;
        (samples(mid) < target ? low : high) = mid;
    }
    return (low + high) / 2;
}

ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& published) {
    ErrorStats s;
    std::vector<double> errors;
    for (std::size_t i = 0; i < predicted.size(); ++i) {
        const double e = predicted[i] / published[i] - 1;
        errors.push_back(e);
        s.mean_abs += std::abs(e) / static_cast<double>(predicted.size());
        s.max_abs = std::max(s.max_abs, std::abs(e));
    }
    s.spearman = correlation(ranks(predicted), ranks(published));
    s.pearson = correlation(errors, published);
    return s;
}

}  // namespace pipesim::reproduce::fidelity
