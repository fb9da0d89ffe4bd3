#pragma once
// Work that must run in its own process: SimGrid allows one engine per process, so a front end
// that simulates several pipelines (compare --cluster, sweep --html, Python's simulate) runs
// each in a child.

#include <sys/types.h>

#include <functional>
#include <string>

namespace pipesim::analysis {

/// A forked child and the read end of the pipe it writes to.
struct ChildProcess {
    pid_t pid = -1;
    int output = -1;
};

/// Forks a child that runs `work` with the pipe's write end and exits with what `work`
/// returns (1 if it throws); the parent gets the child and the read end, to read until end of
/// file and then reap with waitpid. Standard streams are flushed first. Throws std::runtime_error
/// when the pipe or fork fails.
ChildProcess start_child(const std::function<int(int fd)>& work);

/// Runs `work` in a forked child and returns the text it returned. What the child throws is
/// thrown here with its message: std::invalid_argument as std::invalid_argument (bad input),
/// anything else as std::runtime_error; a child that dies without an answer gives a
/// std::runtime_error naming its signal or exit status. While waiting, `interrupted` (when
/// given) is asked every 200 ms; when it says yes the child is killed and
/// std::runtime_error "interrupted" is thrown.
std::string run_in_child(const std::function<std::string()>& work,
                         const std::function<bool()>& interrupted = {});

}  // namespace pipesim::analysis
