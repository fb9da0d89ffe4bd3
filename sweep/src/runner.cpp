#include "sweep/runner.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
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
              const std::function<void(std::size_t, const Result&)>& done) {
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
    run_worker_pool(pool, workers, [&](std::size_t position, const PoolOutcome& outcome) {
        done(position, job_result(jobs[position], outcome));
    });
}

std::vector<Result> run_jobs(const std::vector<Job>& jobs, int workers) {
    std::vector<Result> out(jobs.size());
    run_pool(jobs, workers, [&](std::size_t position, const Result& r) { out[position] = r; });
    return out;
}

SweepSummary run_sweep(const std::vector<Job>& jobs, const std::string& output,
                       const SweepOptions& options) {
    SweepSummary summary;
    summary.total = static_cast<int>(jobs.size());
    std::set<std::string> finished;
    if (std::filesystem::exists(output)) {
        const ResultsFile existing = load_results(output);
        std::string kept = csv_header() + "\n";
        bool dropped = existing.incomplete_tail;
        for (const Result& r : existing.rows) {
            if (r.grid != options.grid)
                throw std::invalid_argument(fmt::format(
                    "{} holds results of another grid (grid {}, job {}; this grid is {}): "
                    "resume a sweep with the grid that wrote it, or give another -o",
                    output, r.grid, r.job.index, options.grid));
            if (r.status == Status::error) {
                dropped = true;  // rerun it
                continue;
            }
            kept += csv_row(r) + "\n";
            finished.insert(job_key(r.job));
        }
        check_rows_match_jobs(jobs, existing.rows, output);
        if (dropped) fileio::write_file_atomically(output, kept);
    } else {
        fileio::write_file_atomically(output, csv_header() + "\n");
    }

    std::vector<Job> pending;
    for (const Job& j : jobs) {
        if (finished.count(job_key(j))) {
            ++summary.skipped;
            continue;
        }
        finished.insert(job_key(j));  // a job listed twice runs once
        pending.push_back(j);
    }

    const int fd = ::open(output.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        throw std::invalid_argument(
            fmt::format("cannot write {}: {}", output, std::strerror(errno)));
    const bool terminal = options.progress_stream && ::isatty(::fileno(options.progress_stream));
    const bool bar = options.progress == ProgressStyle::bar ||
                     (options.progress == ProgressStyle::automatic && terminal);
    detail::Progress progress(options.progress_stream, options.progress != ProgressStyle::none, bar,
                              static_cast<int>(pending.size()));
    try {
        run_pool(pending, options.workers, [&](std::size_t, const Result& finished_job) {
            Result r = finished_job;
            r.grid = options.grid;
            // One write per row: a kill never splits one.
            if (const int error = fileio::write_all(fd, csv_row(r) + "\n"); error != 0)
                throw std::runtime_error(
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
        });
    } catch (...) {
        ::close(fd);
        throw;
    }
    progress.finish();
    ::close(fd);
    return summary;
}

}  // namespace pipesim::sweep
