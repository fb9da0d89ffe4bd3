#include "sweep/runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/child_run.hpp"
#include "fileio/files.hpp"
#include "progress.hpp"
#include "sim/simgrid/simulate.hpp"
#include "sweep/job.hpp"

namespace pipesim::sweep {

namespace {

struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::size_t job = 0;
    std::string out;
};

// Forks a worker that runs one job and writes its CSV row to a pipe.
Worker start_worker(const std::vector<Job>& jobs, std::size_t index) {
    const analysis::ChildProcess child = analysis::start_child([&](int fd) {
        std::signal(SIGPIPE, SIG_DFL);
        try {
            const std::string row = csv_row(run_job(jobs[index]));
            if (const int error = fileio::write_all(fd, row); error != 0) {
                std::fprintf(stderr, "pipesim: worker for job %d: cannot write its result: %s\n",
                             jobs[index].index, std::strerror(error));
                return 1;
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "pipesim: worker for job %d failed: %s\n", jobs[index].index,
                         e.what());
            return 1;
        } catch (...) {
            std::fprintf(stderr, "pipesim: worker for job %d failed with an unknown exception\n",
                         jobs[index].index);
            return 1;
        }
        return 0;
    });
    Worker w;
    w.pid = child.pid;
    w.fd = child.output;
    w.job = index;
    return w;
}

Result error_result(const Job& job, std::string reason) {
    Result r;
    r.job = job;
    r.status = Status::error;
    r.reason = std::move(reason);
    return r;
}

// Reaps a worker whose pipe reached end of file and turns its output into a result.
Result finish_worker(Worker& w, const Job& job) {
    ::close(w.fd);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return error_result(job, fmt::format("worker killed by signal {} ({})", WTERMSIG(status),
                                             strsignal(WTERMSIG(status))));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || w.out.empty())
        return error_result(job, fmt::format("worker exited with status {} and no result",
                                             WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    try {
        ResultsFile parsed = parse_results("worker", csv_header() + "\n" + w.out + "\n");
        if (parsed.rows.size() == 1) return parsed.rows.front();
    } catch (const std::exception&) {
    }
    return error_result(job, "worker wrote a malformed row");
}

void pool_loop(const std::vector<Job>& jobs, int workers,
               const std::function<void(std::size_t, const Result&)>& done,
               std::vector<Worker>& running) {
    std::size_t next = 0;
    while (next < jobs.size() || !running.empty()) {
        while (running.size() < static_cast<std::size_t>(workers) && next < jobs.size()) {
            running.push_back(start_worker(jobs, next));
            ++next;
        }
        std::vector<pollfd> fds;
        for (const Worker& w : running)
            fds.push_back({w.fd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(fmt::format("poll failed: {}", std::strerror(errno)));
        }
        for (std::size_t i = fds.size(); i-- > 0;) {
            if (fds[i].revents == 0) continue;
            Worker& w = running[i];
            char buffer[4096];
            const ssize_t n = ::read(w.fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n > 0) {
                w.out.append(buffer, static_cast<std::size_t>(n));
                continue;
            }
            const std::size_t position = w.job;
            const Result r = finish_worker(w, jobs[position]);
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
            done(position, r);
        }
    }
}

// Kills and reaps the workers still running.
void stop_workers(std::vector<Worker>& running) {
    for (Worker& w : running) {
        ::kill(w.pid, SIGKILL);
        ::close(w.fd);
        while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    running.clear();
}

}  // namespace

void run_pool(const std::vector<Job>& jobs, int workers,
              const std::function<void(std::size_t, const Result&)>& done) {
    if (workers < 1) throw std::invalid_argument("at least one worker is needed");
    // The workers share an engine loaded here; one that cannot be loaded fails their jobs.
    for (const Job& job : jobs)
        if (job.engine == Engine::simgrid) {
            try {
                simgrid::load_engine();
            } catch (const simgrid::EngineUnavailable&) {
            }
            break;
        }
    std::vector<Worker> running;
    try {
        pool_loop(jobs, workers, done, running);
    } catch (...) {
        stop_workers(running);  // leave no orphans behind when `done` or the pool fails
        throw;
    }
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
