// libFuzzer target: sweep results CSV (docs/sweep-format.md). Any input must either parse, or
// be rejected with ParseError; anything else is a bug. What parses must round-trip: the
// rows written again with csv_header() and csv_row() read back to the same rows, field for
// field.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fileio/parse_error.hpp"
#include "sweep/results.hpp"

namespace {

using pipesim::sweep::Result;

bool same_result(const Result& a, const Result& b) {
    return a.job.index == b.job.index &&
           pipesim::sweep::job_key(a.job) == pipesim::sweep::job_key(b.job) &&
           a.status == b.status && a.reason == b.reason && a.chunks == b.chunks &&
           a.makespan == b.makespan && a.bubble_rate == b.bubble_rate &&
           a.bubble_time == b.bubble_time && a.peak_activation == b.peak_activation &&
           a.peak_memory == b.peak_memory && a.throughput == b.throughput && a.gpus == b.gpus &&
           a.samples_per_second == b.samples_per_second &&
           a.samples_per_second_per_gpu == b.samples_per_second_per_gpu &&
           a.tokens_per_second == b.tokens_per_second && a.mfu == b.mfu &&
           a.iteration_time == b.iteration_time && a.grid == b.grid;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    pipesim::sweep::ResultsFile parsed;
    try {
        parsed = pipesim::sweep::parse_results("fuzz.csv", text);
    } catch (const pipesim::fileio::ParseError&) {
        return 0;
    }
    std::string written = pipesim::sweep::csv_header() + "\n";
    for (const Result& r : parsed.rows)
        written += pipesim::sweep::csv_row(r) + "\n";
    const pipesim::sweep::ResultsFile again = pipesim::sweep::parse_results("again.csv", written);
    if (again.incomplete_tail || again.rows.size() != parsed.rows.size()) std::abort();
    for (std::size_t i = 0; i < parsed.rows.size(); ++i)
        if (!same_result(parsed.rows[i], again.rows[i])) std::abort();
    return 0;
}
