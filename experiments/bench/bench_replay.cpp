// Replay speed in ops per second (one core). Prints its figures; asserts nothing.
//   bench_replay [--quick]
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_timing.hpp"
#include "schedules/heap.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "sim/replay.hpp"

using pipesim::bench::seconds_per_run;

namespace {

struct Case {
    const char* schedule;
    int p, m, v;
};

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();  // as pipesim does
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const double min_seconds = quick ? 0.2 : 1.0;
    const std::vector<Case> cases = {
        {"1f1b", 64, 1024, 1}, {"zb-h1", 64, 1024, 1}, {"interleaved-1f1b", 64, 1024, 4}};
    fmt::print("{:<18} {:>4} {:>5} {:>2} {:>9} {:>10} {:>12} {:>12} {:>12}\n", "schedule", "p", "m",
               "v", "ops", "gen ms", "validate/s", "replay/s", "+transfers/s");
    for (const Case& c : cases) {
        pipesim::GeneratorOptions g{c.p, c.m, c.v, 0};
        pipesim::Schedule schedule;
        const double gen = seconds_per_run(
            [&] { schedule = pipesim::generate_schedule(c.schedule, g); }, 1, min_seconds);
        const auto ops = static_cast<double>(schedule.op_count());
        const auto costs = pipesim::uniform_stage_costs(c.p, c.v, 1.0, 1.0, 1.0);
        const double validate =
            seconds_per_run([&] { (void)pipesim::validate(schedule); }, 1, min_seconds);
        pipesim::sim::ReplayOptions no_transfers;
        no_transfers.record_transfers = false;
        no_transfers.comm_latency = 0.1;
        double sink = 0;
        const double replay = seconds_per_run(
            [&] {
                sink += pipesim::sim::replay(schedule, costs, no_transfers).device_ops[0][0].end;
            },
            1, min_seconds);
        pipesim::sim::ReplayOptions with_transfers = no_transfers;
        with_transfers.record_transfers = true;
        const double replay_t = seconds_per_run(
            [&] {
                sink += static_cast<double>(
                    pipesim::sim::replay(schedule, costs, with_transfers).transfers.size());
            },
            1, min_seconds);
        fmt::print("{:<18} {:>4} {:>5} {:>2} {:>9.0f} {:>10.1f} {:>11.1f}M {:>11.1f}M {:>11.1f}M\n",
                   c.schedule, c.p, c.m, c.v, ops, gen * 1e3, ops / validate / 1e6,
                   ops / replay / 1e6, ops / replay_t / 1e6);
        if (sink < 0) fmt::print("unreachable\n");
    }
    fmt::print(
        "replay/s counts the structure checks + timed replay recording every op, without "
        "transfers (what pipesim analyze does for a picture; without one it keeps no op: see "
        "bench_asap); target ≥ 20M ops/s per core.\n");
    return 0;
}
