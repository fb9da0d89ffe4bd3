#pragma once
// Runs the pipesim binary in a test and captures exit code, stdout and stderr.

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
inline pid_t start_pipesim(std::vector<std::string> args) {
    args.insert(args.begin(), PIPESIM_BINARY);
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    return ::posix_spawn(&pid, PIPESIM_BINARY, nullptr, nullptr, argv.data(), environ) == 0 ? pid
                                                                                            : 0;
}

}  // namespace pipesim::test
