#pragma once
// The sweep runner: a pool of worker processes (worker_pool.hpp: each runs analytic jobs one
// after another; every SimGrid job gets a fresh process, for its own engine) that appends one
// CSV row per finished job to a results file.

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "sweep/grid.hpp"
#include "sweep/results.hpp"

namespace pipesim::sweep {

/// How progress is shown.
enum class ProgressStyle {
    automatic,  ///< a redrawn bar when the stream is a terminal, plain lines otherwise
    bar,
    lines,
    none,
};

struct SweepOptions {
    int workers = 1;  ///< concurrent worker processes (-j)
    int shard = 0;    ///< run only jobs with index mod shards == shard
    int shards = 1;
    ProgressStyle progress = ProgressStyle::automatic;
    std::FILE* progress_stream = stderr;
    /// grid_id() of the whole grid the jobs come from: stamped on every row, and a results
    /// file holding rows of another grid is refused.
    std::string grid;
};

/// What a sweep did.
struct SweepSummary {
    int total = 0;    ///< jobs in this shard
    int skipped = 0;  ///< already in the results file
    int ran = 0;
    int ok = 0;
    int over_memory = 0;
    int infeasible = 0;
    int errors = 0;
};

/// Runs `jobs` with a pool of `workers` processes, calling `done(position in jobs, result)`
/// in the parent as each result arrives (in completion order). A worker that dies without a
/// result gives an error row naming its signal or exit status. The workers close
/// `parent_only_fds` (a results file whose lock must end with the parent).
void run_pool(const std::vector<Job>& jobs, int workers,
              const std::function<void(std::size_t, const Result&)>& done,
              const std::vector<int>& parent_only_fds = {});

/// Runs the grid's jobs (this shard's) into `output`: creates it with a header, or resumes
/// it: rows already there are kept and their jobs skipped, except error rows, which are
/// dropped and rerun, and a row cut short at the end, which is dropped. Each row is written
/// with one write() as its job finishes, so a killed sweep loses only the jobs in flight.
/// Throws ParseError for a results file with another header, std::invalid_argument for a
/// results file of another grid (options.grid) and for files that cannot be written.
SweepSummary run_sweep(const std::vector<Job>& jobs, const std::string& output,
                       const SweepOptions& options);

/// Runs `jobs` with a pool and returns the results in job order (for reports and tests).
std::vector<Result> run_jobs(const std::vector<Job>& jobs, int workers);

}  // namespace pipesim::sweep
