#include "analysis/child_run.hpp"

#include <poll.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::analysis {

namespace {

// The child's answer: one byte ('o' ok, 'i' bad input, 'e' failure), then the text.
bool write_all(int fd, const std::string& text) {
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        written += static_cast<std::size_t>(n);
    }
    return true;
}

[[noreturn]] void child(int fd, const std::function<std::string()>& work) {
    std::string answer;
    try {
        answer = "o" + work();
    } catch (const std::invalid_argument& e) {
        answer = std::string("i") + e.what();
    } catch (const std::exception& e) {
        answer = std::string("e") + e.what();
    } catch (...) {
        answer = "eunknown exception";
    }
    std::fflush(nullptr);
    ::_exit(write_all(fd, answer) ? 0 : 1);
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& work,
                         const std::function<bool()>& interrupted) {
    int fds[2];
    if (::pipe(fds) != 0)
        throw std::runtime_error(fmt::format("pipe failed: {}", std::strerror(errno)));
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
    }
    if (pid == 0) {
        ::close(fds[0]);
        std::signal(SIGINT, SIG_DFL);  // the parent decides what an interrupt means
        child(fds[1], work);
    }
    ::close(fds[1]);
    std::string answer;
    char buffer[1 << 16];
    while (true) {
        if (interrupted) {
            pollfd readable{fds[0], POLLIN, 0};
            const int ready = ::poll(&readable, 1, 200);
            if (ready == 0 || (ready < 0 && errno == EINTR)) {
                if (!interrupted()) continue;
                ::kill(pid, SIGKILL);
                ::close(fds[0]);
                int status = 0;
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                throw std::runtime_error("interrupted");
            }
        }
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        throw std::runtime_error(fmt::format("the simulation process was killed by signal {} ({})",
                                             WTERMSIG(status), strsignal(WTERMSIG(status))));
    if (answer.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(
            fmt::format("the simulation process exited with status {} and no answer",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    const std::string text = answer.substr(1);
    if (answer[0] == 'o') return text;
    if (answer[0] == 'i') throw std::invalid_argument(text);
    throw std::runtime_error(text);
}

}  // namespace pipesim::analysis
