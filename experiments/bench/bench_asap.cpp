// How close `pipesim analyze` comes to the bound of its work: a plain ASAP loop (each op starts
// at the max of its device's previous end and its inputs' ends) over the op list pipesim
// generates, in a dependency order computed beforehand, against the whole `pipesim analyze -s S
// -p P -m M` process as a user runs it, with nothing but the table asked for: start-up,
// generation, validation, the timed replay with every metric and the lifespans, the 1F1B
// baseline of the speed-up (for a schedule other than 1F1B a second generation and replay), the
// table. Also what that process holds per op at its peak, and the start-up of small commands.
// Prints its figures; asserts nothing.
//   bench_asap [PIPESIM_BINARY]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_timing.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/registry.hpp"

using pipesim::bench::Clock;
using pipesim::bench::seconds_since;

namespace {

// One op of the plain loop: the device, the two inputs' slots (slot 0: "no input", end 0),
// the output's slot and the duration.
struct PlainOp {
    std::uint32_t device;
    std::uint32_t input[2];
    std::uint32_t output;
    double duration;
};

// The ops of `s` in an order that respects every dependency (DependencyWalker's), with unit
// durations (BW = 2) as `pipesim analyze` uses by default.
std::vector<PlainOp> plain_ops(const pipesim::Schedule& s) {
    std::vector<PlainOp> ops;
    ops.reserve(s.op_count());
    const int stages = s.stages();
    pipesim::DependencyWalker walker(s);
    (void)walker.run(
        [&](int device, int, const pipesim::Op& op, const pipesim::Predecessors& preds) {
            PlainOp p{static_cast<std::uint32_t>(device), {0, 0}, 0, 0};
            for (int k = 0; k < preds.count; ++k)
                p.input[k] = static_cast<std::uint32_t>(preds.slot[k] + 1);
            p.output = op.pass == pipesim::Pass::W
                           ? 0
                           : static_cast<std::uint32_t>(pipesim::output_slot(op, stages) + 1);
            p.duration = op.pass == pipesim::Pass::BW ? 2.0 : 1.0;
            ops.push_back(p);
        });
    return ops;
}

// The plain ASAP loop; returns the makespan.
double plain_loop(const std::vector<PlainOp>& ops, std::vector<double>& end,
                  std::vector<double>& device_free) {
    std::fill(end.begin(), end.end(), 0.0);
    std::fill(device_free.begin(), device_free.end(), 0.0);
    double makespan = 0;
    for (const PlainOp& op : ops) {
        const double start =
            std::max(device_free[op.device], std::max(end[op.input[0]], end[op.input[1]]));
        const double finish = start + op.duration;
        end[op.output] = finish;
        device_free[op.device] = finish;
        makespan = std::max(makespan, finish);
    }
    return makespan;
}

struct ProcessRun {
    double seconds = 0;
    double cpu_seconds = 0;  ///< user + system
    double peak_rss_bytes = 0;
    int status = -1;
};

// Runs `binary args...` with stdout and stderr to /dev/null: wall and CPU time, peak RSS.
ProcessRun run_process(const std::string& binary, const std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const auto start = Clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(binary.c_str(), argv.data());
        ::_exit(127);
    }
    ProcessRun run;
    struct rusage usage {};
    ::wait4(pid, &run.status, 0, &usage);
    run.seconds = seconds_since(start);
    run.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
    auto seconds_of = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    run.cpu_seconds = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
    return run;
}

// The median of `runs` runs, figure by figure.
ProcessRun median_run(const std::string& binary, const std::vector<std::string>& args, int runs) {
    std::vector<ProcessRun> all;
    for (int i = 0; i < runs; ++i)
        all.push_back(run_process(binary, args));
    auto median = [&](double ProcessRun::*figure) {
        std::vector<double> values;
        for (const ProcessRun& r : all)
            values.push_back(r.*figure);
        std::sort(values.begin(), values.end());
        return values[values.size() / 2];
    };
    for (const ProcessRun& r : all)
        if (r.status != 0) return r;
    return ProcessRun{median(&ProcessRun::seconds), median(&ProcessRun::cpu_seconds),
                      median(&ProcessRun::peak_rss_bytes), 0};
}

}  // namespace

int main(int argc, char** argv) {
    const std::string pipesim = argc > 1 ? argv[1] : PIPESIM_BINARY;
    struct Case {
        const char* schedule;
        int p, m;
    };
    fmt::print("{:<6} {:>4} {:>6} {:>9} {:>13} {:>13} {:>7} {:>7} {:>9} {:>9}\n", "sched", "p", "m",
               "ops", "plain loop/s", "analyze/s", "ratio", "cpu", "peak MiB", "bytes/op");
    for (const Case c : {Case{"1f1b", 64, 16384}, Case{"zb-v", 64, 16384}}) {
        // The process first: a child's peak RSS counts this process's memory at the fork.
        const ProcessRun analyze = median_run(
            pipesim,
            {"analyze", "-s", c.schedule, "-p", std::to_string(c.p), "-m", std::to_string(c.m)}, 5);
        if (analyze.status != 0) {
            fmt::print("pipesim analyze -s {} failed (status {})\n", c.schedule, analyze.status);
            return 1;
        }
        double loop = 0;
        std::size_t op_count = 0;
        {
            const pipesim::Schedule s =
                pipesim::generate_schedule(c.schedule, pipesim::GeneratorOptions{c.p, c.m, 0, 0});
            const std::vector<PlainOp> ops = plain_ops(s);
            op_count = ops.size();
            std::vector<double> end(pipesim::output_slot_count(s.microbatches, s.stages()) + 1);
            std::vector<double> device_free(static_cast<std::size_t>(s.devices));
            double sink = 0;
            loop = pipesim::bench::seconds_per_run(
                [&] { sink += plain_loop(ops, end, device_free); }, 5, 1.0);
            if (sink < 0) fmt::print("unreachable\n");
        }
        const auto n = static_cast<double>(op_count);
        fmt::print(
            "{:<6} {:>4} {:>6} {:>9.0f} {:>12.1f}M {:>12.1f}M {:>6.1f}% {:>6.1f}% {:>9.1f} "
            "{:>9.1f}\n",
            c.schedule, c.p, c.m, n, n / loop / 1e6, n / analyze.seconds / 1e6,
            100.0 * loop / analyze.seconds, 100.0 * loop / analyze.cpu_seconds,
            analyze.peak_rss_bytes / (1 << 20), analyze.peak_rss_bytes / n);
    }
    fmt::print(
        "ops: the schedule's ops; plain loop/s: ops per second of the ASAP loop alone (ops and "
        "their inputs listed in dependency order beforehand; mean of ≥ 5 runs and ≥ 1 s); "
        "analyze/s: ops per second "
        "of the whole `pipesim analyze -s S -p P -m M` process (start-up, generation, "
        "validation, replay, metrics, lifespans, the 1F1B baseline's own generation and replay "
        "for zb-v, the table; wall clock, median of 5); ratio: analyze/s over plain loop/s; "
        "cpu: the same with analyze's user+system time (what a loaded machine distorts less); "
        "bytes/op: analyze's peak RSS / ops.\n");
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"list"},
          std::vector<std::string>{"analyze", "-s", "1f1b", "-p", "4", "-m", "8"}}) {
        const ProcessRun r = median_run(pipesim, args, 5);
        std::string command = "pipesim";
        for (const std::string& a : args)
            command += " " + a;
        fmt::print("{:<36} {:>7.1f} ms ({:.1f} ms CPU) {:>7.1f} MiB peak RSS (median of 5)\n",
                   command, r.seconds * 1e3, r.cpu_seconds * 1e3, r.peak_rss_bytes / (1 << 20));
    }
    return 0;
}
