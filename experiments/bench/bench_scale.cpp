// The SimGrid engine at datacenter scale: whole training steps of Megatron-LM's SC'21 jobs
// and a 16,384-GPU Llama 3 405B job, each in its own process. Prints wall and CPU time, peak
// memory, the mode that ran and the load average; asserts nothing.
//   bench_scale               every job, each in a child process
//   bench_scale --full        the same, every job forced to simulate all replicas
//   bench_scale JOB [--full]  one job here (JOB: a name from the table below)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "analysis/run.hpp"
#include "bench_timing.hpp"
#include "schedules/heap.hpp"
#include "sim/simgrid/simulate.hpp"

namespace {

using namespace pipesim;

// Narayanan et al., Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM (SC'21), Table 1: GPT models (sequence 2048, vocabulary 51,200), their
// tensor- and pipeline-parallel sizes, GPU counts and global batch sizes; microbatch 1 and
// full activation recomputation (§3.5). Their cluster, Selene, has DGX A100 80GB nodes with
// eight 200 Gb/s HDR InfiniBand HCAs (§5): the dgx-a100 preset.
struct Job {
    const char* name;
    const char* model;  // a preset, or "L,h,a" for an SC'21 GPT shape
    const char* schedule;
    int v, t, p, d, m;
    const char* gpu;
    const char* cluster;
};

constexpr Job jobs[] = {
    {"sc21-39b", "48,8192,64", "1f1b", 1, 8, 2, 32, 1536 / 32, "a100-80gb", "dgx-a100:64"},
    {"sc21-76b", "60,10240,80", "interleaved-1f1b", 2, 8, 4, 32, 1792 / 32, "a100-80gb",
     "dgx-a100:128"},
    {"sc21-145b", "80,12288,96", "interleaved-1f1b", 2, 8, 8, 24, 2304 / 24, "a100-80gb",
     "dgx-a100:192"},
    {"sc21-1t", "128,25600,160", "1f1b", 1, 8, 64, 6, 3072 / 6, "a100-80gb", "dgx-a100:384"},
    // Llama 3 405B (the llama3-405b preset) as in the Llama 3 paper's 16K-GPU layout
    // (Dubey et al., 2024, Table 4: TP 8, PP 16, DP 128), interleaved with v = 2 and 16
    // microbatches, on 2,048 DGX H100 nodes.
    {"llama3-405b", "llama3-405b", "interleaved-1f1b", 2, 8, 16, 128, 16, "h100-sxm",
     "dgx-h100:2048"},
    // Data parallelism at the same scale: Llama 2 7B without tensor parallelism, 4 stages,
    // 4,096 replicas. NCCL's tuning model picks the tree for its gradients: 131,000 flows
    // per device at once (docs/cluster-format.md, "Limits").
    {"llama2-7b-dp", "llama2-7b", "1f1b", 1, 1, 4, 4096, 16, "h100-sxm", "dgx-h100:2048"},
};

// A model JSON file for an SC'21 shape "L,h,a" (docs/model-format.md).
std::string model_file(const Job& job) {
    int layers = 0, hidden = 0, heads = 0;
    if (std::sscanf(job.model, "%d,%d,%d", &layers, &hidden, &heads) != 3) return job.model;
    const auto path = std::filesystem::temp_directory_path() /
                      fmt::format("pipesim_bench_{}_{}.json", job.name, ::getpid());
    std::ofstream(path) << fmt::format(
        R"({{"format": "pipesim-model", "version": 1, "name": "{}", )"
        R"("source": "Narayanan et al., SC'21, Table 1", "layers": {}, "hidden": {}, )"
        R"("heads": {}, "vocab": 51200, "seq_len": 2048}})",
        job.name, layers, hidden, heads);
    return path.string();
}

int run_job(const Job& job, bool full) {
    analysis::PipelineSpec spec;
    spec.schedule = job.schedule;
    spec.generator = GeneratorOptions{job.p, job.m, job.v, 0};
    analysis::ModelSpec model;
    model.model = model_file(job);
    model.gpu = job.gpu;
    model.workload.microbatch = 1;
    if (std::strncmp(job.name, "sc21", 4) == 0) model.workload.recompute = models::Recompute::full;
    spec.costs.model = model;
    spec.dp = job.d;
    spec.tp = job.t;
    analysis::SimGridEngine engine;
    engine.cluster = simgrid::load_cluster(job.cluster);
    engine.options.symmetric = !full;
    engine.options.record_transfers = false;
    const analysis::Analysis a = analysis::run(spec, engine);
    if (model.model != job.model) std::filesystem::remove(model.model);
    const simgrid::SimResult& r = a.cluster->result;
    fmt::print("{} {} {} {:.6g}\n", to_string(r.mode), r.gpus_used, r.ops_simulated,
               a.iteration_time);
    return 0;
}

double load_average() {
    double load = 0;
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = 0;
        std::fclose(f);
    }
    return load;
}

// Runs one job in a child process; prints its row.
bool measure(const Job& job, bool full) {
    int fds[2];
    if (::pipe(fds) != 0) return false;
    const double load = load_average();
    std::fflush(nullptr);
    const auto start = bench::Clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        ::dup2(fds[1], STDOUT_FILENO);
        int rc = 1;
        try {
            rc = run_job(job, full);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n", job.name, e.what());
        }
        std::fflush(nullptr);
        ::_exit(rc);
    }
    ::close(fds[1]);
    std::string out;
    char buffer[256];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0)
        out.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    const double wall = bench::seconds_since(start);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
    char mode[16] = {};
    int gpus = 0;
    unsigned long ops = 0;
    double iteration = 0;
    if (std::sscanf(out.c_str(), "%15s %d %lu %lf", mode, &gpus, &ops, &iteration) != 4)
        return false;
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    fmt::print(
        "| {:<11} | {:>6} | t{} p{} d{} v{} m{} | {:<9} | {:>7.2f} | {:>7.2f} | {:>6.0f} | {:>8} | "
        "{:>9.4f} | {:.2f} |\n",
        job.name, gpus, job.t, job.p, job.d, job.v, job.m, mode, wall, cpu,
        static_cast<double>(usage.ru_maxrss) / 1024.0, ops, iteration, load);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();  // as pipesim does
    bool full = false;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--full") == 0)
            full = true;
        else
            only = argv[i];
    }
    simgrid::load_engine();  // before the children fork, as pipesim does
    fmt::print(
        "| job | GPUs | layout | mode | wall s | CPU s | peak RSS MiB | ops simulated | "
        "iteration s | load |\n|---|--:|---|---|--:|--:|--:|--:|--:|--:|\n");
    int status = 0;
    bool found = false;
    for (const Job& job : jobs) {
        if (!only.empty() && only != job.name) continue;
        found = true;
        if (!measure(job, full)) status = 1;
    }
    if (!found) {
        fmt::print(stderr, "unknown job '{}'\n", only);
        return 2;
    }
    fmt::print(
        "targets (one core): 16,384 GPUs ≤ 30 s and ≤ 2 GiB; sc21-1t ≤ 10 s; sc21-145b ≤ 5 s.\n"
        "load: the 1-minute load average when the job started.\n");
    return status;
}
