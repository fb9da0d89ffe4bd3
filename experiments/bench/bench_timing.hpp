#pragma once
// Wall-clock helpers shared by the benchmarks. Benchmarks print figures; they never assert.

#include <chrono>

namespace pipesim::bench {

using Clock = std::chrono::steady_clock;

/// Seconds from `start` until now.
inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Runs `work` at least `min_runs` times and for at least `min_seconds`; returns the mean
/// seconds per run.
template <class Work>
double seconds_per_run(Work&& work, int min_runs, double min_seconds) {
    int runs = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
        work();
        ++runs;
        elapsed = seconds_since(start);
    } while (runs < min_runs || elapsed < min_seconds);
    return elapsed / runs;
}

}  // namespace pipesim::bench
