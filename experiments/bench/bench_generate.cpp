// Generation time of every registered schedule at p=64, m=1024 (generation includes
// validation), the replay of each, and the memory-capped search at p=16, m=64 and p=32,
// m=256; then the generators built by list scheduling and filling (zb-1p, zb-2p, v-half with
// even and odd p) at p=64 and p=1024 (and p=63, 1023), m=1024. Prints its figures; asserts
// nothing.
//   bench_generate [--quick | --large]   (--quick: p=16, m=128 and the small search only;
//                                          --large: only the list-scheduled generators, and
//                                          the V schedules planned with unequal pass times)
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>

#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "schedules/search.hpp"
#include "sim/replay.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void bench_search(int p, int m) {
    pipesim::SearchOptions o;
    o.devices = p;
    o.microbatches = m;
    o.memory_limit = p;
    const auto evaluate = [](const pipesim::Schedule& s) {
        const pipesim::Metrics metrics = pipesim::compute_metrics(
            pipesim::sim::replay(s, pipesim::uniform_stage_costs(s.devices, s.chunks, 1, 1, 1)),
            pipesim::unit_memory_model(s.devices, s.chunks));
        return pipesim::SearchEvaluation{metrics.bubble_rate, metrics.makespan,
                                         metrics.peak_activation_max};
    };
    const auto start = Clock::now();
    const pipesim::SearchResult r = pipesim::search_schedules(o, evaluate);
    fmt::print("search p={} m={} cap {}: {:8.1f} ms, {} candidates, best {}\n", p, m, p,
               1e3 * seconds_since(start), r.ranking.size(), r.ranking.front().label);
}

// Wall and process CPU time of one generate_schedule call (planning with unit costs, then
// validation); on a shared machine the CPU time is the steadier figure.
// `planned`: with planning times F, B, W = 2, 4, 3 per full stage and latency 0.5 (the V
// schedules then choose among their cost-aware candidates).
void bench_large(const char* name, int p, int m, bool planned = false) {
    pipesim::GeneratorOptions options{p, m, 0, 0};
    if (planned) {
        const pipesim::ScheduleGenerator* g = pipesim::find_generator(name);
        options.planning.times = pipesim::uniform_stage_costs(p, g->default_chunks, 2, 4, 3);
        options.planning.comm_latency = 0.5;
    }
    const auto start = Clock::now();
    const std::clock_t cpu_start = std::clock();
    const pipesim::Schedule s = pipesim::generate_schedule(name, options);
    const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    fmt::print(
        "generate_schedule {:<7} p={:<5} m={:<5} {:<8} ({} ops, validated): wall {:10.1f} ms, "
        "cpu {:10.1f} ms\n",
        name, p, m, planned ? "planned" : "unit", s.op_count(), 1e3 * seconds_since(start),
        1e3 * cpu);
}

void bench_large_all() {
    for (int p : {64, 1024})
        for (const char* name : {"zb-1p", "zb-2p"})
            bench_large(name, p, 1024);
    for (int p : {64, 63, 1024, 1023})
        bench_large("v-half", p, 1024);
    for (const char* name : {"v-min", "v-half", "v-zb", "zb-v"})
        bench_large(name, 64, 1024, true);
    for (int p : {1024, 1023})
        bench_large("v-half", p, 1024, true);
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && std::strcmp(argv[1], "--large") == 0) {
        bench_large_all();
        return 0;
    }
    const int p = quick ? 16 : 64;
    const int m = quick ? 128 : 1024;
    fmt::print("p={} m={}\n{:<18} {:>4} {:>10} {:>12} {:>12}\n", p, m, "schedule", "v", "ops",
               "generate ms", "replay ms");
    for (const pipesim::ScheduleGenerator& g : pipesim::schedule_generators()) {
        try {
            auto start = Clock::now();
            const pipesim::Schedule s = pipesim::generate_schedule(g.name, {p, m, 0, 0});
            const double generate = seconds_since(start);
            start = Clock::now();
            const pipesim::Timeline t =
                pipesim::sim::replay(s, pipesim::uniform_stage_costs(p, s.chunks, 1, 1, 1));
            const double replay = seconds_since(start);
            fmt::print("{:<18} {:>4} {:>10} {:>12.1f} {:>12.1f}\n", g.name, s.chunks, s.op_count(),
                       1e3 * generate, 1e3 * replay);
        } catch (const std::invalid_argument& e) {
            fmt::print("{:<18} not generated: {}\n", g.name, e.what());
        }
    }
    bench_search(16, 64);
    if (!quick) {
        bench_search(32, 256);
        bench_large_all();
    }
    return 0;
}
