#pragma once
// Runs the pipesim binary in a test and captures exit code, stdout and stderr.

#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <sys/wait.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace pipesim::test {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// The lines of `text`, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

/// Runs `program <args>` through the shell (args are shell words; quote as needed), with
/// `input_file` as standard input.
inline CommandResult run_program(const std::string& program, const std::string& args,
                                 const std::string& input_file = "/dev/null") {
    const auto dir = std::filesystem::temp_directory_path();
    const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(std::rand());
    const auto out_path = dir / ("pipesim_test_out_" + tag);
    const auto err_path = dir / ("pipesim_test_err_" + tag);
    const std::string command = program + " " + args + " >" + out_path.string() + " 2>" +
                                err_path.string() + " <" + input_file;
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_file(out_path);
    result.err = read_file(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return result;
}

/// Runs `PIPESIM_BINARY <args>` (see run_program).
inline CommandResult run_pipesim(const std::string& args,
                                 const std::string& input_file = "/dev/null") {
    return run_program(PIPESIM_BINARY, args, input_file);
}

/// Starts `PIPESIM_BINARY <args>` (each one argument, no shell) without waiting for it: for a
/// test that signals the run while it works. Returns its process id, 0 if it did not start.
/// With `output_file`, its standard output and error go to that file.
inline pid_t start_pipesim(std::vector<std::string> args, const std::string& output_file = {}) {
    args.insert(args.begin(), PIPESIM_BINARY);
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    if (!output_file.empty()) {
        ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_file.c_str(),
                                           O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    }
    pid_t pid = 0;
    const int failed = ::posix_spawn(&pid, PIPESIM_BINARY, &actions, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    return failed == 0 ? pid : 0;
}

/// Runs `PIPESIM_BINARY <args>` (each one argument) with its standard error on a terminal (a
/// pseudo-terminal) and its standard output discarded, as a user at a terminal sees the
/// status lines; returns the exit code (−1 if it did not start or end normally) and what the
/// terminal received.
inline CommandResult run_pipesim_on_terminal(std::vector<std::string> args) {
    args.insert(args.begin(), PIPESIM_BINARY);
    CommandResult result;
    int terminal = -1;
    const pid_t pid = ::forkpty(&terminal, nullptr, nullptr, nullptr);
    if (pid < 0) return result;
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        std::vector<char*> argv;
        for (std::string& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(PIPESIM_BINARY, argv.data());
        ::_exit(127);
    }
    char buffer[4096];
    for (ssize_t n; (n = ::read(terminal, buffer, sizeof buffer)) > 0;)  // EIO once it ends
        result.err.append(buffer, static_cast<std::size_t>(n));
    ::close(terminal);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace pipesim::test
