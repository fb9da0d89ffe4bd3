// Generation time of every registered schedule at p=64, m=1024 without planning costs
// (generation includes validation), the replay of each, and the memory-capped search at
// p=16, m=64 and p=32, m=256; then the generation `pipesim analyze` runs (planned with costs
// where it plans) for the list-scheduled and filled generators (zb-1p, zb-2p, v-half with
// even and odd p) at p=64 and p=1024 (and p=63, 1023), m=1024, and for the V schedules at
// p=64, m=1024 with the default and with unequal pass times. Prints its figures; asserts
// nothing.
//   bench_generate [--quick | --large]   (--quick: p=16, m=128 and the small search only;
//                                          --large: only the generation as analyze runs it)
//   bench_generate --analyze NAME P M [F B W [COMM]]   (one such row; BENCH_REPEAT=N runs
//                                          it N times and prints the fastest)
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/run.hpp"
#include "schedules/heap.hpp"

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

// One schedule as `pipesim analyze` generates it: analysis::prepare(), which plans a
// generator that plans with pass times (zb-1p, zb-2p, the V schedules) with the given costs or
// analyze's default F = B = W = 1 per full stage, generates once and validates. `costs`
// empty: analyze's default; otherwise F, B, W per full stage as `--costs` takes them.
struct AnalyzeCase {
    const char* name;
    int p;
    int m;
    std::vector<double> costs = {};
    double comm = 0;
};

std::string analyze_command(const AnalyzeCase& c) {
    std::string line = fmt::format("analyze -s {} -p {} -m {}", c.name, c.p, c.m);
    if (!c.costs.empty()) line += fmt::format(" --costs {}", fmt::join(c.costs, ","));
    if (c.comm != 0) line += fmt::format(" --comm {}", c.comm);
    return line;
}

// Wall and process CPU time of the generation `pipesim analyze` runs for `c` (planning with
// costs where it does, then validation); on a shared machine the CPU time is the steadier
// figure. `repeat` runs it that many times and prints the fastest.
void bench_analyze(const AnalyzeCase& c, int repeat = 1) {
    pipesim::analysis::PipelineSpec spec;
    spec.schedule = c.name;
    spec.generator = {c.p, c.m, 0, 0};
    if (!c.costs.empty()) spec.costs.passes = {{c.costs.at(0), c.costs.at(1), c.costs.at(2)}};
    spec.comm_latency = c.comm;
    double wall = 1e300, cpu = 1e300;
    std::size_t ops = 0;
    for (int k = 0; k < repeat; ++k) {
        const auto start = Clock::now();
        const std::clock_t cpu_start = std::clock();
        const pipesim::analysis::Pipeline pipeline = pipesim::analysis::prepare(spec);
        cpu = std::min(cpu, static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
        wall = std::min(wall, seconds_since(start));
        ops = pipeline.schedule.op_count();
    }
    fmt::print("{:<58} {:>8} ops: wall {:8.1f} ms, cpu {:8.1f} ms\n", analyze_command(c), ops,
               1e3 * wall, 1e3 * cpu);
}

// The rows `pipesim analyze` generation is measured by: p = 64 (and 63) the fastest of
// small_repeat runs in one process, p = 1024 (and 1023) of large_repeat (the first run of a
// process also pays for paging in its memory).
void bench_large_all() {
    constexpr int small_repeat = 5;
    constexpr int large_repeat = 2;
    fmt::print(
        "generation as pipesim analyze runs it (analysis::prepare: planned with the costs where "
        "the schedule plans with them, F,B,W = 1,1,1 without --costs; validated; the V "
        "schedules keep their unit order above 10^6 ops); the fastest of {} runs in one "
        "process at p = 63 and 64, of {} at p = 1023 and 1024\n",
        small_repeat, large_repeat);
    const std::vector<double> costs{2, 4, 3};
    auto repeat = [&](int p) { return p < 1000 ? small_repeat : large_repeat; };
    for (int p : {64, 1024})
        for (const char* name : {"zb-1p", "zb-2p"})
            bench_analyze({name, p, 1024}, repeat(p));
    for (int p : {64, 63, 1024, 1023})
        bench_analyze({"v-half", p, 1024}, repeat(p));
    for (const char* name : {"v-min", "v-zb", "zb-v"})
        bench_analyze({name, 64, 1024}, small_repeat);
    for (const char* name : {"v-min", "v-half", "v-zb", "zb-v"})
        bench_analyze({name, 64, 1024, costs, 0.5}, small_repeat);
    for (int p : {1024, 1023})
        bench_analyze({"v-half", p, 1024, costs, 0.5}, large_repeat);
}

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();  // as pipesim does
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && std::strcmp(argv[1], "--large") == 0) {
        bench_large_all();
        return 0;
    }
    if (argc >= 5 && std::strcmp(argv[1], "--analyze") == 0) {
        AnalyzeCase c{argv[2], std::atoi(argv[3]), std::atoi(argv[4])};
        if (argc >= 8) c.costs = {std::atof(argv[5]), std::atof(argv[6]), std::atof(argv[7])};
        if (argc >= 9) c.comm = std::atof(argv[8]);
        const char* repeat = std::getenv("BENCH_REPEAT");
        try {
            bench_analyze(c, repeat ? std::max(1, std::atoi(repeat)) : 1);
        } catch (const std::exception& e) {
            fmt::print(stderr, "bench_generate --analyze: {}\n", e.what());
            return 2;
        }
        return 0;
    }
    const int p = quick ? 16 : 64;
    const int m = quick ? 128 : 1024;
    fmt::print("p={} m={}, no planning costs\n{:<18} {:>4} {:>10} {:>12} {:>12}\n", p, m,
               "schedule", "v", "ops", "generate ms", "replay ms");
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
