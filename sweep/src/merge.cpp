#include "sweep/merge.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::sweep {

namespace {

// Two rows of one job say the same when they differ at most in the job index.
bool same_outcome(Result a, const Result& b) {
    a.job.index = b.job.index;
    return csv_row(a) == csv_row(b);
}

}  // namespace

std::vector<Result> merge_results(const std::vector<ResultsFile>& files, MergeSummary& summary) {
    summary = {};
    std::map<std::string, Result> by_key;
    for (const ResultsFile& file : files) {
        for (const Result& row : file.rows) {
            const std::string key = job_key(row.job);
            const auto [it, inserted] = by_key.emplace(key, row);
            if (inserted) continue;
            Result& kept = it->second;
            if (same_outcome(row, kept)) {
                ++summary.duplicates;
            } else if (kept.status == Status::error) {
                kept = row;
                ++summary.replaced_errors;
            } else if (row.status == Status::error) {
                ++summary.replaced_errors;
            } else {
                throw std::invalid_argument(fmt::format(
                    "job {} ({} p={} m={}) has two different results:\n  {}\n  {}\n(were the "
                    "shards run with different grids or pipesim builds?)",
                    row.job.index, row.job.schedule, row.job.p, row.job.m, csv_row(kept),
                    csv_row(row)));
            }
        }
    }
    std::vector<Result> out;
    for (auto& [key, row] : by_key)
        out.push_back(row);
    std::stable_sort(out.begin(), out.end(),
                     [](const Result& a, const Result& b) { return a.job.index < b.job.index; });
    summary.rows = static_cast<int>(out.size());
    return out;
}

std::vector<Job> missing_jobs(const std::vector<Job>& jobs, const std::vector<Result>& rows) {
    std::set<std::string> have;
    for (const Result& r : rows)
        have.insert(job_key(r.job));
    std::vector<Job> out;
    for (const Job& j : jobs)
        if (!have.count(job_key(j))) out.push_back(j);
    return out;
}

}  // namespace pipesim::sweep
