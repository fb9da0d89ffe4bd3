#pragma once
// Runs a piece of a test in a forked child process. SimGrid allows one engine per process,
// so a test that simulates several configurations runs each in its own child.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <string>

namespace pipesim::test {

/// Runs `body` (returning a string) in a child process and returns that string, or
/// "exception: WHAT" if it threw, or "child died: ..." if the child did not exit normally.
template <class Body>
std::string run_in_child(Body&& body) {
    int fds[2];
    if (::pipe(fds) != 0) return "child died: pipe failed";
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return "child died: fork failed";
    if (pid == 0) {
        ::close(fds[0]);
        std::string out;
        try {
            out = body();
        } catch (const std::exception& e) {
            out = std::string("exception: ") + e.what();
        }
        std::size_t written = 0;
        while (written < out.size()) {
            const ssize_t n = ::write(fds[1], out.data() + written, out.size() - written);
            if (n <= 0) break;
            written += static_cast<std::size_t>(n);
        }
        ::close(fds[1]);
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0)
        out.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "child died: status " + std::to_string(status) + "; output: " + out;
    return out;
}

/// In a child process: caps this process's address space (ulimit -v) at what it uses now plus
/// `extra_bytes`. False if the cap could not be set.
inline bool cap_address_space(std::size_t extra_bytes) {
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (statm == nullptr) return false;
    unsigned long pages = 0;
    const bool read = std::fscanf(statm, "%lu", &pages) == 1;
    std::fclose(statm);
    if (!read) return false;
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max =
        static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + extra_bytes;
    return ::setrlimit(RLIMIT_AS, &limit) == 0;
}

}  // namespace pipesim::test
