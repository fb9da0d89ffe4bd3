#pragma once
// Work that must run in its own process: SimGrid allows one engine per process, so a front end
// that simulates several pipelines (compare --cluster, sweep --html, Python's simulate) runs
// each in a child.

#include <functional>
#include <string>

namespace pipesim::analysis {

/// Runs `work` in a forked child and returns the text it returned. What the child throws is
/// thrown here with its message: std::invalid_argument as std::invalid_argument (bad input),
/// anything else as std::runtime_error; a child that dies without an answer gives a
/// std::runtime_error naming its signal or exit status. While waiting, `interrupted` (when
/// given) is asked every 200 ms; when it says yes the child is killed and
/// std::runtime_error "interrupted" is thrown.
std::string run_in_child(const std::function<std::string()>& work,
                         const std::function<bool()>& interrupted = {});

}  // namespace pipesim::analysis
