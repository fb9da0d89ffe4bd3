#pragma once
// Joining the results files of a sharded (or resumed) sweep.

#include <string>
#include <vector>

#include "sweep/grid.hpp"
#include "sweep/results.hpp"

namespace pipesim::sweep {

struct MergeSummary {
    int rows = 0;             ///< rows written
    int duplicates = 0;       ///< identical rows of the same job seen more than once
    int replaced_errors = 0;  ///< error rows dropped for a finished row of the same job
};

/// Merges result rows: one row per job key, ordered by job index then key. A job's
/// error row gives way to a finished one; two different finished rows of one job throw
/// std::invalid_argument naming the job (the shards came from different grids or builds).
std::vector<Result> merge_results(const std::vector<ResultsFile>& files, MergeSummary& summary);

/// Throws std::invalid_argument naming `source` when a row's job index is not one of `jobs`
/// or names a job of other parameters (a results file edited by hand, or of another grid of
/// the same id): the row would stand for a job it did not run.
void check_rows_match_jobs(const std::vector<Job>& jobs, const std::vector<Result>& rows,
                           const std::string& source);

/// The keys of `jobs` missing from `rows` (to check a merge against its grid).
std::vector<Job> missing_jobs(const std::vector<Job>& jobs, const std::vector<Result>& rows);

}  // namespace pipesim::sweep
