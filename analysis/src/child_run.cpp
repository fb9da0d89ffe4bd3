#include "analysis/child_run.hpp"

#include <poll.h>

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"

namespace pipesim::analysis {

namespace {

// The child's answer: one byte ('o' ok, 'i' bad input, 'e' failure), then the text.
int answer(int fd, const std::function<std::string()>& work) {
    std::string text;
    try {
        text = "o" + work();
    } catch (const std::invalid_argument& e) {
        text = std::string("i") + e.what();
    } catch (const std::exception& e) {
        text = std::string("e") + e.what();
    } catch (...) {
        text = "eunknown exception";
    }
    return fileio::write_all(fd, text) == 0 ? 0 : 1;
}

// Forks a child that closes `parent_end` and `close_in_child`, runs `work(child_end)` and exits
// with what it returns (1 if it throws); the parent closes `child_end`.
ChildProcess fork_child(int parent_end, int child_end, const std::function<int(int)>& work,
                        const std::vector<int>& close_in_child) {
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        ::close(parent_end);
        ::close(child_end);
        throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(error)));
    }
    if (pid == 0) {
        // The child never returns into the parent's stack: every way out is _exit.
        // It ends with the thread that forked it, which waits for it: a parent killed (or a
        // Python session ended) leaves no simulation running on. A parent gone before the
        // signal was set is seen as a new parent process.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(1);
        ::close(parent_end);
        for (int fd : close_in_child)
            ::close(fd);
        int status = 1;
        try {
            status = work(child_end);
        } catch (...) {
        }
        std::fflush(nullptr);
        ::_exit(status);
    }
    ::close(child_end);
    return ChildProcess{pid, parent_end};
}

}  // namespace

ChildProcess start_child(const std::function<int(int)>& work) {
    int fds[2];
    if (::pipe(fds) != 0)
        throw std::runtime_error(fmt::format("pipe failed: {}", std::strerror(errno)));
    return fork_child(fds[0], fds[1], work, {});
}

ChildProcess start_child_with_socket(const std::function<int(int)>& work,
                                     const std::vector<int>& close_in_child) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
        throw std::runtime_error(fmt::format("socketpair failed: {}", std::strerror(errno)));
    return fork_child(fds[0], fds[1], work, close_in_child);
}

std::string run_in_child(const std::function<std::string()>& work,
                         const std::function<bool()>& interrupted) {
    const ChildProcess child = start_child([&](int fd) {
        std::signal(SIGINT, SIG_DFL);  // the parent decides what an interrupt means
        return answer(fd, work);
    });
    const pid_t pid = child.pid;
    const int output = child.output;
    std::string text;
    char buffer[1 << 16];
    while (true) {
        if (interrupted) {
            pollfd readable{output, POLLIN, 0};
            const int ready = ::poll(&readable, 1, 200);
            if (ready == 0 || (ready < 0 && errno == EINTR)) {
                if (!interrupted()) continue;
                ::kill(pid, SIGKILL);
                ::close(output);
                int status = 0;
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                throw std::runtime_error("interrupted");
            }
        }
        const ssize_t n = ::read(output, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(output);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        throw std::runtime_error(fmt::format("the simulation process was killed by signal {} ({})",
                                             WTERMSIG(status), strsignal(WTERMSIG(status))));
    if (text.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(
            fmt::format("the simulation process exited with status {} and no answer",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    const std::string message = text.substr(1);
    if (text[0] == 'o') return message;
    if (text[0] == 'i') throw std::invalid_argument(message);
    throw std::runtime_error(message);
}

}  // namespace pipesim::analysis
