#pragma once
// Work that must run in its own process: SimGrid allows one engine per process, so a front end
// that simulates several pipelines (compare --cluster, sweep --html, Python's simulate) runs
// each in a child.

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

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

/// start_child() with a connected stream socket instead of the pipe: `output` is the parent's
/// end, which it also writes to (send with MSG_NOSIGNAL: a child gone gives EPIPE, not
/// SIGPIPE; shutdown(SHUT_WR) gives the child end of file). The child closes
/// `close_in_child` first (the parent's ends of its other children: a child holding them
/// would keep those children from seeing end of file).
ChildProcess start_child_with_socket(const std::function<int(int fd)>& work,
                                     const std::vector<int>& close_in_child);

/// Runs `work` in a forked child and returns the text it returned. What the child throws is
/// thrown here with its message: std::invalid_argument as std::invalid_argument (bad input),
/// anything else as std::runtime_error; a child that dies without an answer gives a
/// std::runtime_error naming its signal or exit status. While waiting, `interrupted` (when
/// given) is asked every 200 ms; when it says yes the child is killed and
/// std::runtime_error "interrupted" is thrown.
std::string run_in_child(const std::function<std::string()>& work,
                         const std::function<bool()>& interrupted = {});

}  // namespace pipesim::analysis
