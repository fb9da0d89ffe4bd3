#pragma once
// Sweep progress on stderr: a bar redrawn in place (rate, ETA) on a terminal, a plain line
// at most once a second otherwise.

#include <chrono>
#include <cstdio>

#include "sweep/results.hpp"

namespace pipesim::sweep::detail {

class Progress {
  public:
    /// `bar`: redraw one line in place; otherwise print plain lines. `enabled` false: silent.
    Progress(std::FILE* out, bool enabled, bool bar, int total);
    /// Counts one finished job.
    void job_done(Status status);
    /// Ends the bar's line and prints the summary line.
    void finish();

  private:
    void print(bool force);

    std::FILE* out_;
    bool enabled_;
    bool bar_;
    int total_;
    int done_ = 0;
    int failed_ = 0;  ///< infeasible, over-memory or error
    std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace pipesim::sweep::detail
