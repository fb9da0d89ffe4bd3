// libFuzzer target: sweep grid JSON (docs/sweep-format.md). Any input must either parse into
// a grid of at most max_jobs jobs, or be rejected with ParseError; anything else is a bug.
// A small grid is also expanded: expand() must give job_count() jobs numbered from 0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fileio/parse_error.hpp"
#include "sweep/grid.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    pipesim::sweep::Grid grid;
    try {
        grid = pipesim::sweep::parse_grid("fuzz.json", text);
    } catch (const pipesim::fileio::ParseError&) {
        return 0;
    }
    const std::size_t count = pipesim::sweep::job_count(grid);
    if (count > pipesim::sweep::max_jobs) std::abort();
    if (count > 4096) return 0;  // expanding a large grid costs time, not coverage
    const std::vector<pipesim::sweep::Job> jobs = pipesim::sweep::expand(grid);
    if (jobs.size() != count) std::abort();
    for (std::size_t i = 0; i < jobs.size(); ++i)
        if (jobs[i].index != static_cast<int>(i)) std::abort();
    return 0;
}
