// The sweep's worker pool: every job answered once, workers kept across jobs, a fresh process
// for each job that must run alone, no more workers at once than asked for, and a worker
// that dies failing its own job only.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "schedules/heap.hpp"
#include "sweep/worker_pool.hpp"

using pipesim::sweep::PoolJobs;
using pipesim::sweep::PoolOutcome;
using pipesim::sweep::run_worker_pool;

namespace {

// Every outcome by job position (a job reported twice fails the test).
std::map<std::size_t, PoolOutcome> run_all(const PoolJobs& jobs, int workers) {
    std::map<std::size_t, PoolOutcome> out;
    run_worker_pool(jobs, workers, [&](std::size_t position, const PoolOutcome& outcome) {
        CHECK(out.count(position) == 0);
        out[position] = outcome;
    });
    return out;
}

// The process that answered: the answers are "pid" or "pid start end" (microseconds).
long answer_pid(const PoolOutcome& outcome) {
    REQUIRE(outcome.answered);
    return std::stol(outcome.answer);
}

long long now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Whether this process has no child left (none running, none unreaped).
bool no_children() {
    return ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

}  // namespace

TEST_CASE("worker pool: each job answered once, by at most `workers` processes kept across jobs",
          "[sweep][pool]") {
    PoolJobs jobs;
    jobs.count = 40;
    jobs.run = [](std::size_t position) {
        return std::to_string(::getpid()) + " " + std::to_string(position * position);
    };
    const auto out = run_all(jobs, 2);
    REQUIRE(out.size() == jobs.count);
    std::set<long> pids;
    for (const auto& [position, outcome] : out) {
        std::istringstream in(outcome.answer);
        long pid = 0;
        std::size_t square = 0;
        in >> pid >> square;
        CHECK(square == position * position);
        CHECK(pid != ::getpid());
        pids.insert(pid);
    }
    CHECK(pids.size() <= 2);
    CHECK(no_children());
}

TEST_CASE("worker pool: a job that runs alone gets a process no other job runs in",
          "[sweep][pool]") {
    PoolJobs jobs;
    jobs.count = 12;
    jobs.run = [](std::size_t) { return std::to_string(::getpid()); };
    jobs.alone = [](std::size_t position) { return position % 3 == 1; };
    const auto out = run_all(jobs, 2);
    REQUIRE(out.size() == jobs.count);
    std::map<long, std::vector<std::size_t>> jobs_of;
    for (const auto& [position, outcome] : out)
        jobs_of[answer_pid(outcome)].push_back(position);
    for (std::size_t position = 1; position < jobs.count; position += 3)
        CHECK(jobs_of[answer_pid(out.at(position))] == std::vector<std::size_t>{position});
    CHECK(no_children());
}

TEST_CASE("worker pool: never more jobs at once than workers, alone or not", "[sweep][pool]") {
    for (const bool alone : {false, true}) {
        PoolJobs jobs;
        jobs.count = 9;
        jobs.run = [](std::size_t) {
            const long long start = now_us();
            std::this_thread::sleep_for(std::chrono::milliseconds(15));
            return std::to_string(::getpid()) + " " + std::to_string(start) + " " +
                   std::to_string(now_us());
        };
        if (alone) jobs.alone = [](std::size_t) { return true; };
        const auto out = run_all(jobs, 2);
        REQUIRE(out.size() == jobs.count);
        std::vector<std::pair<long long, int>> events;  // (time, +1 start / −1 end)
        for (const auto& [position, outcome] : out) {
            std::istringstream in(outcome.answer);
            long pid = 0;
            long long start = 0, end = 0;
            in >> pid >> start >> end;
            REQUIRE(end > start);
            events.emplace_back(start, 1);
            events.emplace_back(end, -1);
        }
        std::sort(events.begin(), events.end());  // at equal times the end first
        int running = 0, most = 0;
        for (const auto& [time, change] : events)
            most = std::max(most, running += change);
        CHECK(most <= 2);
    }
}

TEST_CASE("worker pool: a worker that dies fails its own job — the others run on",
          "[sweep][pool]") {
    PoolJobs jobs;
    jobs.count = 10;
    jobs.run = [](std::size_t position) -> std::string {
        if (position == 3) ::raise(SIGKILL);
        if (position == 5) ::_exit(7);
        if (position == 7) throw std::runtime_error("job 7 cannot run");
        return std::to_string(position);
    };
    const auto out = run_all(jobs, 2);
    REQUIRE(out.size() == jobs.count);
    for (const auto& [position, outcome] : out) {
        INFO("job " << position);
        if (position == 3) {
            CHECK_FALSE(outcome.answered);
            CHECK(outcome.failure == "worker killed by signal 9 (Killed)");
        } else if (position == 5) {
            CHECK_FALSE(outcome.answered);
            CHECK(outcome.failure == "worker exited with status 7 and no result");
        } else if (position == 7) {
            CHECK_FALSE(outcome.answered);
            CHECK(outcome.failure == "worker exited with status 1 and no result");
        } else {
            CHECK(outcome.answered);
            CHECK(outcome.answer == std::to_string(position));
        }
    }
    CHECK(no_children());
}

TEST_CASE("worker pool: what `done` throws goes on, with every worker reaped", "[sweep][pool]") {
    PoolJobs jobs;
    jobs.count = 20;
    jobs.run = [](std::size_t position) {
        std::this_thread::sleep_for(std::chrono::milliseconds(position == 2 ? 0 : 5));
        return std::string("x");
    };
    int seen = 0;
    CHECK_THROWS_WITH(run_worker_pool(jobs, 2,
                                      [&](std::size_t, const PoolOutcome&) {
                                          if (++seen == 3) throw std::runtime_error("disk full");
                                      }),
                      "disk full");
    CHECK(seen == 3);
    CHECK(no_children());
    CHECK_THROWS_WITH(run_worker_pool(jobs, 0, [](std::size_t, const PoolOutcome&) {}),
                      "at least one worker is needed");
}

TEST_CASE("worker pool: workers run with pipesim's heap (tune_heap)", "[sweep][pool]") {
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_AS, &limit) == 0);
    if (limit.rlim_cur != RLIM_INFINITY) return;  // tune_heap() leaves a limited process alone
    // An 8 MiB block: from the heap (below its end) in a tuned process; glibc maps one that
    // large on its own otherwise (above the heap).
    PoolJobs jobs;
    jobs.count = 3;
    jobs.run = [](std::size_t) {
        void* block = std::malloc(std::size_t{8} << 20);
        const bool in_heap = block != nullptr && block < ::sbrk(0);
        std::free(block);
        return std::string(pipesim::heap_tuned() && in_heap ? "tuned" : "plain");
    };
    for (const auto& [position, outcome] : run_all(jobs, 2))
        CHECK(outcome.answer == "tuned");
}
