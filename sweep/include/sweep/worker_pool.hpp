#pragma once
// A pool of forked worker processes that each run many jobs, one at a time. A fork per job
// costs the fork, the copy-on-write faults of the child and its exit (on a shared virtual
// machine 2–3 ms of kernel time per job, more than a small analytic job itself); a worker
// that stays also keeps its heap's pages. A job that must have a process of its own (a
// SimGrid job: one engine per process) gets a worker that ends after it. A worker that dies
// takes only its current job with it; the next job gets a fresh worker.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace pipesim::sweep {

/// What run_worker_pool() needs to know of the jobs 0..count−1.
struct PoolJobs {
    std::size_t count = 0;
    /// Runs in a worker: job `position`'s answer. What it throws ends the worker (its message
    /// goes to standard error), which fails the job.
    std::function<std::string(std::size_t position)> run;
    /// Whether job `position` runs alone in a fresh worker that ends after it.
    std::function<bool(std::size_t position)> alone;
    /// Descriptors of the parent's that a worker closes as it starts: a lock on an open file
    /// (flock) is shared by every process holding the file, so a worker that outlived a killed
    /// parent for a moment would still hold it.
    std::vector<int> parent_only_fds;
};

/// A job's end as the parent sees it: the answer, or, when its worker died without one,
/// `answered` false and `failure` naming the signal or exit status.
struct PoolOutcome {
    bool answered = false;
    std::string answer;
    std::string failure;
};

/// Runs every job once with at most `workers` workers (≥ 1), calling `done(position, outcome)`
/// in the parent as each finishes (in completion order). If `done` throws, the workers are
/// killed and reaped and the exception goes on.
void run_worker_pool(const PoolJobs& jobs, int workers,
                     const std::function<void(std::size_t, const PoolOutcome&)>& done);

}  // namespace pipesim::sweep
