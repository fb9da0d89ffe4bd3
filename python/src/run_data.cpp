#include "run_data.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "analysis/result_json.hpp"
#include "schedules/schedule_json.hpp"
#include "viz/timeline_file.hpp"

namespace pipesim::python {

namespace {

// The child's answer: one status byte ('O' ok, 'V' bad input, 'R' failure), then sections,
// each "LENGTH\n" and that many bytes: with 'O' the JSON, the schedule JSON and the saved
// timeline; otherwise the message.
void append_section(std::string& out, std::string_view text) {
    out += fmt::format("{}\n", text.size());
    out += text;
}

std::string_view next_section(std::string_view& in) {
    const auto newline = in.find('\n');
    if (newline == std::string_view::npos) throw std::runtime_error("simulation: truncated answer");
    const std::size_t size = std::stoul(std::string(in.substr(0, newline)));
    if (size > in.size() - newline - 1) throw std::runtime_error("simulation: truncated answer");
    const std::string_view section = in.substr(newline + 1, size);
    in.remove_prefix(newline + 1 + size);
    return section;
}

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

[[noreturn]] void child(int fd, analysis::Pipeline pipeline,
                        const analysis::SimGridEngine& engine) {
    std::string out;
    try {
        const analysis::PipelineSpec spec = pipeline.spec;
        const RunData data =
            run_data(analysis::run_with_baseline(std::move(pipeline), engine), spec);
        out = "O";
        append_section(out, data.json);
        append_section(out, schedule_to_json(data.schedule));
        append_section(out, viz::timeline_json(data.timeline, &data.memory));
    } catch (const std::invalid_argument& e) {
        out = "V";
        append_section(out, e.what());
    } catch (const std::exception& e) {
        out = "R";
        append_section(out, e.what());
    }
    ::_exit(write_all(fd, out) ? 0 : 1);
}

void reap(pid_t pid, int& status) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

}  // namespace

RunData run_data(const analysis::Analysis& result, const analysis::PipelineSpec& spec) {
    return RunData{analysis::analysis_json(result, spec).dump(), result.schedule, result.timeline,
                   result.memory};
}

RunData simulate_in_child(analysis::Pipeline pipeline, const analysis::SimGridEngine& engine,
                          bool (*interrupted)()) {
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
        std::signal(SIGINT, SIG_DFL);
        child(fds[1], std::move(pipeline), engine);
    }
    ::close(fds[1]);
    std::string answer;
    char buffer[1 << 16];
    while (true) {
        pollfd p{fds[0], POLLIN, 0};
        const int ready = ::poll(&p, 1, 200);
        if (ready == 0 || (ready < 0 && errno == EINTR)) {
            if (interrupted && interrupted()) {
                ::kill(pid, SIGKILL);
                ::close(fds[0]);
                int status = 0;
                reap(pid, status);
                throw std::runtime_error("interrupted");
            }
            continue;
        }
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        answer.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    reap(pid, status);
    if (answer.empty()) {
        if (WIFSIGNALED(status))
            throw std::runtime_error(
                fmt::format("the simulation process was killed by signal {} ({})", WTERMSIG(status),
                            strsignal(WTERMSIG(status))));
        throw std::runtime_error(
            fmt::format("the simulation process exited with status {} and no result",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    }
    std::string_view in(answer);
    const char kind = in.front();
    in.remove_prefix(1);
    if (kind == 'V') throw std::invalid_argument(std::string(next_section(in)));
    if (kind != 'O') throw std::runtime_error(std::string(next_section(in)));
    RunData data;
    data.json = std::string(next_section(in));
    data.schedule = parse_schedule_json(next_section(in), "simulation");
    viz::SavedTimeline saved =
        viz::parse_timeline_json(std::string(next_section(in)), "simulation");
    data.timeline = std::move(saved.timeline);
    data.memory = std::move(*saved.memory);
    return data;
}

}  // namespace pipesim::python
