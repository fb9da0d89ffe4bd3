#include "sweep/worker_pool.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "analysis/child_run.hpp"
#include "fileio/files.hpp"
#include "schedules/heap.hpp"

namespace pipesim::sweep {

namespace {

// Parent and worker speak over one stream socket: the parent sends a job's position (8
// bytes), the worker answers with its answer's length (8 bytes) and the answer. The parent's
// shutdown of its sending side tells the worker that no job follows.
using Word = std::uint64_t;

// Reads exactly `size` bytes; false at end of file or on an error.
bool read_exactly(int fd, void* data, std::size_t size) {
    auto* out = static_cast<char*>(data);
    while (size > 0) {
        const ssize_t n = ::read(fd, out, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        out += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// A worker's life: jobs until the parent sends no more. Returns its exit status.
int worker_loop(int fd, const PoolJobs& jobs) {
    std::signal(SIGPIPE, SIG_DFL);
    // Memory a job frees stays with the worker for its next jobs instead of going back to the
    // kernel, to be faulted in again (pipesim's main() has done this already).
    tune_heap();
    Word position = 0;
    while (read_exactly(fd, &position, sizeof position)) {
        std::string answer;
        try {
            answer = jobs.run(static_cast<std::size_t>(position));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "pipesim: sweep worker failed: %s\n", e.what());
            return 1;
        } catch (...) {
            std::fprintf(stderr, "pipesim: sweep worker failed with an unknown exception\n");
            return 1;
        }
        const Word length = answer.size();
        std::string frame(sizeof length, '\0');
        std::memcpy(frame.data(), &length, sizeof length);
        frame += answer;
        if (const int error = fileio::write_all(fd, frame); error != 0) {
            std::fprintf(stderr, "pipesim: sweep worker cannot send its answer: %s\n",
                         std::strerror(error));
            return 1;
        }
    }
    return 0;
}

struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::optional<std::size_t> job;  ///< the job it runs now
    int ran = 0;                     ///< jobs sent to it
    bool retiring = false;           ///< sent its last job (or none will come)
    std::string in;                  ///< bytes received, not yet a whole answer
};

// Waits for a worker that has closed its end and says how it ended.
std::string reap(Worker& w) {
    ::close(w.fd);
    w.fd = -1;
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return fmt::format("worker killed by signal {} ({})", WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    return fmt::format("worker exited with status {} and no result",
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

class Pool {
  public:
    Pool(const PoolJobs& jobs, int workers,
         const std::function<void(std::size_t, const PoolOutcome&)>& done)
        : jobs_(jobs), workers_(workers), done_(done) {}

    ~Pool() {
        // Left early (`done` threw, a fork failed): no orphans.
        for (Worker& w : pool_) {
            ::kill(w.pid, SIGKILL);
            reap(w);
        }
    }

    void run() {
        while (true) {
            hand_out();
            if (pool_.empty()) return;
            wait_and_read();
        }
    }

  private:
    bool alone(std::size_t position) const { return jobs_.alone && jobs_.alone(position); }

    // Sends the next jobs to idle workers, starting workers up to the limit; retires idle
    // workers when no job is left for them.
    void hand_out() {
        while (next_ < jobs_.count) {
            Worker* idle = nullptr;
            int active = 0;
            for (Worker& w : pool_) {
                if (w.job || !w.retiring) ++active;  // a retired worker with no job is leaving
                if (!w.job && !w.retiring && idle == nullptr) idle = &w;
            }
            if (idle != nullptr && alone(next_) && idle->ran > 0) {
                retire(*idle);  // an alone job wants a fresh process
                continue;
            }
            if (idle == nullptr) {
                if (active >= workers_) break;
                idle = &start_worker();
            }
            send(*idle, next_++);
        }
        if (next_ == jobs_.count)
            for (Worker& w : pool_)
                if (!w.job && !w.retiring) retire(w);
    }

    Worker& start_worker() {
        std::vector<int> others = jobs_.parent_only_fds;
        for (const Worker& w : pool_)
            others.push_back(w.fd);
        const analysis::ChildProcess child = analysis::start_child_with_socket(
            [this](int fd) { return worker_loop(fd, jobs_); }, others);
        Worker w;
        w.pid = child.pid;
        w.fd = child.output;
        pool_.push_back(std::move(w));
        return pool_.back();
    }

    void send(Worker& w, std::size_t position) {
        const Word word = position;
        w.job = position;
        ++w.ran;
        // A worker gone already refuses it (EPIPE); its end of file then fails the job.
        (void)::send(w.fd, &word, sizeof word, MSG_NOSIGNAL);
        if (alone(position)) retire(w);
    }

    static void retire(Worker& w) {
        ::shutdown(w.fd, SHUT_WR);
        w.retiring = true;
    }

    void wait_and_read() {
        std::vector<pollfd> fds;
        fds.reserve(pool_.size());
        for (const Worker& w : pool_)
            fds.push_back({w.fd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) return;
            throw std::runtime_error(fmt::format("poll failed: {}", std::strerror(errno)));
        }
        for (std::size_t i = fds.size(); i-- > 0;) {
            if (fds[i].revents == 0) continue;
            Worker& w = pool_[i];
            char buffer[4096];
            const ssize_t n = ::read(w.fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n > 0) {
                w.in.append(buffer, static_cast<std::size_t>(n));
                take_answers(w);
                continue;
            }
            // End of file (or a broken socket): the worker is done or dead.
            const std::optional<std::size_t> lost = w.job;
            std::string failure = reap(w);
            pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(i));
            if (lost) done_(*lost, PoolOutcome{false, {}, std::move(failure)});
        }
    }

    // Passes on each whole answer `w` has sent.
    void take_answers(Worker& w) {
        while (w.in.size() >= sizeof(Word)) {
            Word length = 0;
            std::memcpy(&length, w.in.data(), sizeof length);
            if (w.in.size() - sizeof length < length) return;
            if (!w.job) throw std::runtime_error("a sweep worker answered a job it was not sent");
            const std::size_t position = *w.job;
            w.job.reset();
            PoolOutcome outcome{true, w.in.substr(sizeof length, length), {}};
            w.in.erase(0, sizeof length + length);
            done_(position, outcome);
        }
    }

    const PoolJobs& jobs_;
    int workers_;
    const std::function<void(std::size_t, const PoolOutcome&)>& done_;
    std::vector<Worker> pool_;
    std::size_t next_ = 0;
};

}  // namespace

void run_worker_pool(const PoolJobs& jobs, int workers,
                     const std::function<void(std::size_t, const PoolOutcome&)>& done) {
    if (workers < 1) throw std::invalid_argument("at least one worker is needed");
    Pool pool(jobs, workers, done);
    pool.run();
}

}  // namespace pipesim::sweep
