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
    std::string grid;
    for (const ResultsFile& file : files) {
        for (const Result& row : file.rows) {
            if (grid.empty()) grid = row.grid;
            if (row.grid != grid)
                throw std::invalid_argument(fmt::format(
                    "the inputs hold results of two grids ({} and {}, job {}): merge the shards "
                    "of one grid",
                    grid, row.grid, row.job.index));
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
            } else if (row.job.index != kept.job.index) {
                // Rows are matched by their parameters: an edited row named only the other.
                throw std::invalid_argument(fmt::format(
                    "the rows of job {} and job {} are one job ({} p={} m={}) with different "
                    "results (was one edited, or are they of different grids?)",
                    kept.job.index, row.job.index, row.job.schedule, row.job.p, row.job.m));
            } else {
                throw std::invalid_argument(fmt::format(
                    "job {} ({} p={} m={}) has two different finished rows (were the shards run "
                    "by different pipesim builds?)",
                    row.job.index, row.job.schedule, row.job.p, row.job.m));
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

void check_rows_match_jobs(const std::vector<Job>& jobs, const std::vector<Result>& rows,
                           const std::string& source) {
    const auto describe = [](const Job& j) {
        return fmt::format("{} p={} m={}", j.schedule, j.p, j.m);
    };
    std::map<int, const Job*> by_index;  // a shard's jobs keep their indices in the grid
    for (const Job& j : jobs)
        by_index.emplace(j.index, &j);
    for (const Result& r : rows) {
        const auto found = by_index.find(r.job.index);
        if (found == by_index.end())
            throw std::invalid_argument(
                fmt::format("{}: a row names job {} ({}), which is not one of the grid's jobs "
                            "here",
                            source, r.job.index, describe(r.job)));
        if (job_key(r.job) != job_key(*found->second))
            throw std::invalid_argument(
                fmt::format("{}: the row of job {} ({}) does not hold the grid's job {} ({}): "
                            "its parameters differ ({})",
                            source, r.job.index, describe(r.job), r.job.index,
                            describe(*found->second), key_difference(r.job, *found->second)));
    }
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
