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

// Where row k of `file` is, "FILE:LINE", or empty for rows not read from a file.
std::string origin(const ResultsFile& file, std::size_t k) {
    if (file.file.empty() || k >= file.lines.size()) return {};
    return fmt::format("{}:{}", file.file, file.lines[k]);
}

// The columns two rows of one job differ in, with both values: "makespan 0.2 against 0.9".
std::string row_difference(const Result& a, const Result& b) {
    const auto header = split_csv_line(csv_header());
    const auto x = split_csv_line(csv_row(a)), y = split_csv_line(csv_row(b));
    if (!header || !x || !y || x->size() != y->size() || x->size() != header->size()) return {};
    std::vector<std::string> differences;
    for (std::size_t i = 0; i < x->size(); ++i)
        if ((*x)[i] != (*y)[i])
            differences.push_back(fmt::format("{} {} against {}", (*header)[i], (*x)[i], (*y)[i]));
    constexpr std::size_t shown = 3;
    std::string out;
    for (std::size_t i = 0; i < differences.size() && i < shown; ++i)
        out += (i ? ", " : "") + differences[i];
    if (differences.size() > shown) out += fmt::format(" and {} more", differences.size() - shown);
    return out;
}

}  // namespace

std::vector<Result> merge_results(const std::vector<ResultsFile>& files, MergeSummary& summary) {
    summary = {};
    std::map<std::string, Result> by_key;
    std::map<std::string, std::string> origins;  // where each kept row was read
    std::string grid;
    for (const ResultsFile& file : files) {
        for (std::size_t k = 0; k < file.rows.size(); ++k) {
            const Result& row = file.rows[k];
            if (grid.empty()) grid = row.grid;
            if (row.grid != grid)
                throw std::invalid_argument(fmt::format(
                    "the inputs hold results of two grids ({} and {}, job {}): merge the shards "
                    "of one grid",
                    grid, row.grid, row.job.index));
            const std::string key = job_key(row.job);
            const auto [it, inserted] = by_key.emplace(key, row);
            if (inserted) {
                origins[key] = origin(file, k);
                continue;
            }
            Result& kept = it->second;
            // "(a.csv:3 and b.csv:2)" where both rows came from files.
            const std::string here = origin(file, k), there = origins[key];
            const std::string where = here.empty() || there.empty()
                                          ? std::string()
                                          : fmt::format(" ({} and {})", there, here);
            if (same_outcome(row, kept)) {
                ++summary.duplicates;
            } else if (kept.status == Status::error) {
                kept = row;
                origins[key] = here;
                ++summary.replaced_errors;
            } else if (row.status == Status::error) {
                ++summary.replaced_errors;
            } else if (row.job.index != kept.job.index) {
                // Rows are matched by their parameters: an edited row named only the other.
                throw std::invalid_argument(fmt::format(
                    "the rows of job {} and job {}{} are one job ({} p={} m={}) with different "
                    "results (was one edited, or are they of different grids?)",
                    kept.job.index, row.job.index, where, row.job.schedule, row.job.p, row.job.m));
            } else {
                throw std::invalid_argument(fmt::format(
                    "job {} ({} p={} m={}) has two different finished rows{}: {} (were the "
                    "shards run by different pipesim builds?)",
                    row.job.index, row.job.schedule, row.job.p, row.job.m, where,
                    row_difference(kept, row)));
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
