// SimGrid engine speed: simulated ops per second and peak memory. Prints its figures;
// asserts nothing. Each case runs in its own process (SimGrid allows one engine per process).
//   bench_simgrid            run both cases, each in a child process
//   bench_simgrid CASE       run one case here (CASE: single | replicas)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "bench_timing.hpp"
#include "schedules/heap.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/simulate.hpp"

namespace {

int run_case(const std::string& name) {
    using namespace pipesim;
    int p = 64, m = 1024, dp = 1;
    simgrid::ClusterSpec cluster = simgrid::load_cluster("dgx-h100:8");
    if (name == "replicas") {
        // 8 replicas of a 16-stage pipeline on 16 nodes with one NIC per node: every stage's
        // 8 replicas share their node's NIC.
        p = 16;
        m = 256;
        dp = 8;
        cluster = simgrid::load_cluster("dgx-h100:16");
        cluster.nic_per_gpu = false;
    } else if (name != "single") {
        fmt::print(stderr, "unknown case '{}' (single, replicas)\n", name);
        return 2;
    }
    const Schedule s = generate_schedule("1f1b", GeneratorOptions{p, m, 1, 0});
    // 10 ms forward, 20 ms backward; 16 MB activations (s·b·h·2 for s=4096, h=2048, b=1).
    const simgrid::SimWorkload w = simgrid::simple_workload(
        uniform_stage_costs(p, 1, 0.010, 0.010, 0.010), p, 16.0 * (1 << 20), 1e9);
    simgrid::Layout layout{dp, p, 1};
    layout.order = simgrid::parse_layout_order("dp,tp,pp");
    simgrid::SimOptions options;
    options.symmetric = false;  // the engine's speed over every replica's ops
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    const auto start = bench::Clock::now();
    const simgrid::SimResult r = simgrid::simulate(s, w, cluster, layout, options);
    const double seconds = bench::seconds_since(start);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto cpu_seconds = [](const rusage& u) {
        return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    };
    const double cpu = cpu_seconds(usage) - cpu_seconds(before);
    fmt::print(
        "{:<9} p={:<3} m={:<5} dp={} ops={:<8} wall={:>7.3f}s  {:>7.0f} ops/s  "
        "({:>7.0f} per CPU second)  peak RSS {:>5.0f} MiB  simulated iteration {:.3f}s\n",
        name, p, m, dp, r.ops_simulated, seconds, static_cast<double>(r.ops_simulated) / seconds,
        static_cast<double>(r.ops_simulated) / cpu, static_cast<double>(usage.ru_maxrss) / 1024.0,
        r.iteration_time);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();  // as pipesim does
    // Loaded once, before the children fork, as pipesim does: the figures are the engine's,
    // not those of loading SimGrid's libraries.
    pipesim::simgrid::load_engine();
    if (argc > 1) return run_case(argv[1]);
    int status = 0;
    for (const char* name : {"single", "replicas"}) {
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid == 0) {
            const int rc = run_case(name);
            std::fflush(nullptr);
            _exit(rc);
        }
        int child = 0;
        waitpid(pid, &child, 0);
        if (!WIFEXITED(child) || WEXITSTATUS(child) != 0) status = 1;
    }
    fmt::print(
        "target: ≥ 400,000 simulated ops per second (one core). Messages start as soon as\n"
        "they are sent (receivers listen permanently), which costs SimGrid ~30% more than\n"
        "a rendezvous pipeline; see experiments/bench/README.md.\n");
    return status;
}
