// pipesim merge: join the results files of a sharded or resumed sweep.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "sweep/grid.hpp"
#include "sweep/merge.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* merge_usage =
    R"(usage: pipesim merge RESULTS.csv... -o MERGED.csv [--grid GRID.json]

Joins sweep results (e.g. the shards of 'pipesim sweep --shard I/N'): one row per job, in job
order. Identical duplicates are dropped, an error row gives way to a finished row of the same
job; two different finished rows of one job are an error.

)";

struct MergeFlags {
    std::string output, grid_file;
};

using MergeFlag = FlagSpec<MergeFlags>;

const std::array merge_flags = {
    MergeFlag{"-o", "--output", "FILE", "the merged CSV (written whole or not at all)",
              [](MergeFlags& m, const std::string&, const std::string& v) { m.output = v; }},
    MergeFlag{"", "--grid", "GRID.json",
              "also check that the inputs hold every job of the grid: if some\n"
              "are missing, name them and exit with code 2 (the merged file is\n"
              "still written, with the jobs that are there); inputs of another grid\n"
              "are refused before anything is written",
              [](MergeFlags& m, const std::string&, const std::string& v) { m.grid_file = v; }},
};

}  // namespace

int run_merge(const std::vector<std::string>& args) {
    std::vector<std::string> inputs;
    MergeFlags flags;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (read_flag(merge_flags, flag, reader, flags)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}", merge_usage, flags_help(merge_flags));
            return 0;
        } else if (flag.size() > 1 && flag[0] == '-') {  // '-' alone: standard input
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim merge --help')", quote_arg(flag)));
        } else {
            inputs.push_back(flag);
        }
    }
    const std::string& output = flags.output;
    const std::string& grid_file = flags.grid_file;
    if (inputs.empty()) throw UsageError("missing RESULTS.csv files to merge");
    if (output.empty()) throw UsageError("missing -o MERGED.csv");
    std::vector<sweep::ResultsFile> files;
    for (const std::string& in : inputs)
        files.push_back(sweep::load_results(in));
    std::vector<sweep::Job> jobs;
    if (!grid_file.empty()) {
        jobs = sweep::expand(sweep::load_grid(grid_file));
        const std::string grid = sweep::grid_id(jobs);
        // Each input on its own, so that a message names the file at fault.
        for (std::size_t i = 0; i < files.size(); ++i) {
            const auto other = std::find_if(files[i].rows.begin(), files[i].rows.end(),
                                            [&](const sweep::Result& r) { return r.grid != grid; });
            if (other != files[i].rows.end())
                throw UsageError(fmt::format("{} holds results of grid {}, not of {} (grid {})",
                                             inputs[i], other->grid, grid_file, grid));
            sweep::check_rows_match_jobs(jobs, files[i].rows, inputs[i]);
        }
    }
    sweep::MergeSummary summary;
    const std::vector<sweep::Result> rows = sweep::merge_results(files, summary);
    std::string text = sweep::csv_header() + "\n";
    for (const sweep::Result& r : rows)
        text += sweep::csv_row(r) + "\n";
    fileio::write_file_atomically(output, text);
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (files[i].incomplete_tail)
            fmt::print(stderr,
                       "merge: {}: its last row is cut short (a sweep stopped while writing it) "
                       "and is left out\n",
                       inputs[i]);
    const auto errors = std::count_if(rows.begin(), rows.end(), [](const sweep::Result& r) {
        return r.status == sweep::Status::error;
    });
    fmt::print(stderr, "merge: {} file{}, {} rows ({} duplicates, {} error rows replaced) → {}\n",
               inputs.size(), inputs.size() == 1 ? "" : "s", summary.rows, summary.duplicates,
               summary.replaced_errors, output);
    if (errors > 0)
        fmt::print(stderr,
                   "merge: {} row{} of jobs that failed (status error); 'pipesim sweep GRID.json "
                   "-o {}' runs them again\n",
                   errors, errors == 1 ? "" : "s", output);
    if (grid_file.empty()) return 0;
    const std::vector<sweep::Job> missing = sweep::missing_jobs(jobs, rows);
    if (missing.empty()) return 0;
    // Missing jobs are a fault of the input files, not of pipesim: exit code 2. The merged
    // file of the jobs that are there stands (the summary above names it), as --help says.
    fileio::commit_open_outputs();
    fmt::print(stderr,
               "pipesim merge: {} of the {} jobs of {} are missing from the inputs, e.g. job {} "
               "({} p={} m={}); run 'pipesim sweep' on the grid again to add them\n",
               missing.size(), jobs.size(), grid_file, missing.front().index,
               missing.front().schedule, missing.front().p, missing.front().m);
    return 2;
}

}  // namespace pipesim::cli
