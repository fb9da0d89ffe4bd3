#include "sweep/runner.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "progress.hpp"
#include "sim/simgrid/simulate.hpp"
#include "sweep/job.hpp"
#include "sweep/merge.hpp"
#include "sweep/worker_pool.hpp"

namespace pipesim::sweep {

namespace {

Result error_result(const Job& job, std::string reason) {
    Result r;
    r.job = job;
    r.status = Status::error;
    r.reason = std::move(reason);
    return r;
}

// A job's result from its worker's answer (its CSV row) or from how the worker died.
Result job_result(const Job& job, const PoolOutcome& outcome) {
    if (!outcome.answered) return error_result(job, outcome.failure);
    try {
        ResultsFile parsed = parse_results("worker", csv_header() + "\n" + outcome.answer + "\n");
        if (parsed.rows.size() == 1) return parsed.rows.front();
    } catch (const std::exception&) {
    }
    return error_result(job, "worker wrote a malformed row");
}

}  // namespace

void run_pool(const std::vector<Job>& jobs, int workers,
              const std::function<void(std::size_t, const Result&)>& done,
              const std::vector<int>& parent_only_fds) {
    // The workers share an engine loaded here; one that cannot be loaded fails their jobs.
    for (const Job& job : jobs)
        if (job.engine == Engine::simgrid) {
            try {
                simgrid::load_engine();
            } catch (const simgrid::EngineUnavailable&) {
            }
            break;
        }
    PoolJobs pool;
    pool.count = jobs.size();
    pool.run = [&](std::size_t position) {
        try {
            return csv_row(run_job(jobs[position]));
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("job {}: {}", jobs[position].index, e.what()));
        }
    };
    // SimGrid allows one engine per process.
    pool.alone = [&](std::size_t position) { return jobs[position].engine == Engine::simgrid; };
    pool.parent_only_fds = parent_only_fds;
    run_worker_pool(pool, workers, [&](std::size_t position, const PoolOutcome& outcome) {
        done(position, job_result(jobs[position], outcome));
    });
}

std::vector<Result> run_jobs(const std::vector<Job>& jobs, int workers) {
    std::vector<Result> out(jobs.size());
    run_pool(jobs, workers, [&](std::size_t position, const Result& r) { out[position] = r; });
    return out;
}

namespace {

// Opens `path` to append to it and takes its lock, which a second sweep on the same file
// cannot take: -1 with errno set when that fails (EWOULDBLOCK: another sweep holds it). The
// lock is the file's, so it holds only while `path` still names the file it was taken on.
int open_locked(const std::string& path, int extra_flags) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | extra_flags, 0666);
    if (fd < 0) return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return -1;
    }
    // Replaced between the open and the lock: another sweep rewrote it, and holds the new one.
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) != 0 || ::stat(path.c_str(), &named) != 0 ||
        held.st_dev != named.st_dev || held.st_ino != named.st_ino) {
        ::close(fd);
        errno = EWOULDBLOCK;
        return -1;
    }
    return fd;
}

[[noreturn]] void cannot_lock(const std::string& output) {
    if (errno == EWOULDBLOCK)
        throw std::invalid_argument(fmt::format(
            "{}: another sweep is writing this results file; wait for it to end (then run "
            "again to resume), or give another -o",
            output));
    throw std::invalid_argument(fmt::format("cannot write {}: {}", output, std::strerror(errno)));
}

// Keeps the finished rows of the results file open (and locked) on `fd` for this grid, adding
// their jobs to `finished`; drops error rows, a job's second row and a row cut short by
// rewriting the file whole, which moves the lock to the new file. Returns the descriptor
// that holds the lock then.
int resume_results(int fd, const std::string& output, const std::vector<Job>& jobs,
                   const std::string& grid, int shards, std::set<std::string>& finished) {
    const ResultsFile existing = load_results(output);
    fileio::forget_input(output);  // this sweep appends to it, or rewrites it whole
    std::string kept = csv_header() + "\n";
    // An empty file has no header to append under.
    bool rewrite = existing.incomplete_tail || existing.rows.empty();
    for (const Result& r : existing.rows) {
        if (r.grid != grid)
            throw std::invalid_argument(fmt::format(
                "{} holds results of another grid (grid {}, job {}; this grid is {}, or a "
                "model, GPU or cluster file it names has changed since): resume a sweep with "
                "the grid and files that wrote it, or give another -o",
                output, r.grid, r.job.index, grid));
        // An error is run again; a job's second row (files joined by hand) dropped.
        if (r.status == Status::error || finished.count(job_key(r.job))) {
            rewrite = true;
            continue;
        }
        kept += csv_row(r) + "\n";
        finished.insert(job_key(r.job));
    }
    // The grid is this one, so in a shard's run a row whose job it does not take belongs to
    // another shard (it was called "not one of the grid's jobs").
    std::set<int> taken;
    for (const Job& j : jobs)
        taken.insert(j.index);
    for (const Result& r : existing.rows)
        if (shards > 1 && !taken.count(r.job.index))
            throw std::invalid_argument(fmt::format(
                "{}: its row of job {} ({} p={} m={}) belongs to another shard of this grid "
                "than the jobs this run takes: resume each shard (--shard I/N) with the -o file "
                "it wrote",
                output, r.job.index, r.job.schedule, r.job.p, r.job.m));
    check_rows_match_jobs(jobs, existing.rows, output);
    if (!rewrite) return fd;
    fileio::write_file_atomically(output, kept);
    const int fresh = open_locked(output, 0);
    if (fresh < 0) cannot_lock(output);
    ::close(fd);
    return fresh;
}

// The results file, created with its header or resumed (resume_results), open to append and
// locked from before it is read until the sweep closes it: two sweeps on one results file
// would run every job twice.
int claim_results_file(const std::string& output, const std::vector<Job>& jobs,
                       const std::string& grid, int shards, std::set<std::string>& finished) {
    struct stat st {};
    const bool exists = ::stat(output.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        throw std::invalid_argument(fmt::format(
            "{} is not a regular file: a sweep appends its rows to a results file, and resumes "
            "from it",
            output));
    // A new results file: a folder that takes none is named so (an existing one is appended
    // to, which its folder need not allow).
    if (!exists) fileio::check_writable_path(output);
    int fd = open_locked(output, O_CREAT | O_EXCL);
    const bool created = fd >= 0;
    if (!created && errno == EEXIST) fd = open_locked(output, 0);
    if (fd < 0) cannot_lock(output);
    try {
        if (!created) return resume_results(fd, output, jobs, grid, shards, finished);
        if (const int error = fileio::write_all(fd, csv_header() + "\n"); error != 0)
            throw std::invalid_argument(  // as fileio's writes report it: exit code 2
                fmt::format("cannot write {}: {}", output, std::strerror(error)));
        return fd;
    } catch (...) {
        ::close(fd);
        if (created) ::unlink(output.c_str());  // its header could not be written whole
        throw;
    }
}

}  // namespace

SweepSummary run_sweep(const std::vector<Job>& jobs, const std::string& output,
                       const SweepOptions& options) {
    SweepSummary summary;
    summary.total = static_cast<int>(jobs.size());
    std::set<std::string> finished;
    const int fd = claim_results_file(output, jobs, options.grid, options.shards, finished);

    std::vector<Job> pending;
    for (const Job& j : jobs) {
        if (finished.count(job_key(j))) {
            ++summary.skipped;
            continue;
        }
        finished.insert(job_key(j));  // a job listed twice runs once
        pending.push_back(j);
    }

    const bool terminal = options.progress_stream && ::isatty(::fileno(options.progress_stream));
    const bool bar = options.progress == ProgressStyle::bar ||
                     (options.progress == ProgressStyle::automatic && terminal);
    detail::Progress progress(options.progress_stream, options.progress != ProgressStyle::none, bar,
                              static_cast<int>(pending.size()));
    try {
        run_pool(pending, options.workers,
                 [&](std::size_t, const Result& finished_job) {
                     Result r = finished_job;
                     r.grid = options.grid;
                     // One write per row: a kill never splits one.
                     if (const int error = fileio::write_all(fd, csv_row(r) + "\n"); error != 0)
                         throw std::invalid_argument(  // a full disk: exit code 2
                             fmt::format("cannot write {}: {}", output, std::strerror(error)));
                     ++summary.ran;
                     switch (r.status) {
                         case Status::ok:
                             ++summary.ok;
                             break;
                         case Status::over_memory:
                             ++summary.over_memory;
                             break;
                         case Status::infeasible:
                             ++summary.infeasible;
                             break;
                         case Status::error:
                             ++summary.errors;
                             break;
                     }
                     progress.job_done(r.status);
                 },
                 {fd});
    } catch (...) {
        ::close(fd);
        throw;
    }
    progress.finish();
    ::close(fd);
    return summary;
}

}  // namespace pipesim::sweep
