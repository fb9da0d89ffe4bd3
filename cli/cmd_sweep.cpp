// pipesim sweep: run a grid of configurations into a resumable results CSV.
#include <array>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "progress_flag.hpp"
#include "sweep/grid.hpp"
#include "sweep/runner.hpp"
#include "sweep/slurm.hpp"
#include "sweep_html.hpp"
#include "viz/html_report.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* sweep_usage = R"(usage: pipesim sweep GRID.json -o RESULTS.csv [options]

Runs every configuration of the grid (docs/sweep-format.md), each in its own worker process,
and appends one CSV row per job as it finishes. An existing RESULTS.csv is resumed: its
finished rows are kept and their jobs skipped; error rows are rerun.

)";

std::pair<int, int> parse_shard(const std::string& flag, const std::string& text) {
    if (text == "auto") {
        const auto [shard, shards] = sweep::slurm_array_shard(
            [](const char* name) -> const char* { return std::getenv(name); });
        if (shards > bounds::max_shards)
            throw UsageError(fmt::format("{} auto: the Slurm array has {} tasks, more than {}",
                                         flag, shards, bounds::max_shards));
        return {shard, shards};
    }
    const auto slash = text.find('/');
    if (slash == std::string::npos)
        throw UsageError(fmt::format("{}: expected I/N or auto, got '{}'", flag, text));
    // Each half named: in "a/b" both are wrong, and the message says which it read.
    const int shards = parse_int(flag + " I/N: N", text.substr(slash + 1), 1, bounds::max_shards);
    const int shard = parse_int(flag + " I/N: I", text.substr(0, slash), 0, shards - 1);
    return {shard, shards};
}

// What the flags set.
struct SweepFlags {
    std::string output;
    sweep::SweepOptions options;
    bool dry_run = false;
    std::string html;
};

using SweepFlag = FlagSpec<SweepFlags>;

const std::array sweep_flags = {
    SweepFlag{"-o", "--output", "FILE", "results CSV (created, or resumed when it exists)",
              [](SweepFlags& s, const std::string&, const std::string& v) { s.output = v; }},
    SweepFlag{"-j", "--jobs", "N", "worker processes at a time (default: the number of CPUs)",
              [](SweepFlags& s, const std::string& f, const std::string& v) {
                  s.options.workers = parse_int(f, v, 1, bounds::max_workers);
              }},
    SweepFlag{"", "--shard", "I/N|auto",
              "run only the jobs whose index mod N is I (0 ≤ I < N); 'auto' takes I and N\n"
              "from the Slurm job array this task belongs to (SLURM_ARRAY_TASK_ID, _COUNT,\n"
              "_MIN, _MAX); join the shards with 'pipesim merge'",
              [](SweepFlags& s, const std::string& f, const std::string& v) {
                  std::tie(s.options.shard, s.options.shards) = parse_shard(f, v);
              }},
    SweepFlag{"", "--progress", "MODE",
              "auto (a bar on a terminal, plain lines otherwise), bar, lines, none",
              [](SweepFlags& s, const std::string& f, const std::string& v) {
                  s.options.progress = parse_progress(f, v);
              }},
    SweepFlag{"", "--dry-run", "", "print how many jobs would run, run none",
              [](SweepFlags& s, const std::string&, const std::string&) { s.dry_run = true; }},
    SweepFlag{"", "--html", "FILE.html",
              "afterwards, an HTML report: every row, and the timelines of the\n"
              "3 rows with the highest throughput (run again)",
              [](SweepFlags& s, const std::string&, const std::string& v) { s.html = v; }},
};

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
    std::string grid_file;
    SweepFlags flags;
    flags.options.workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (read_flag(sweep_flags, flag, reader, flags)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}", sweep_usage, flags_help(sweep_flags));
            return 0;
        } else if (flag.size() > 1 && flag[0] == '-') {  // '-' alone: standard input
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim sweep --help')", quote_arg(flag)));
        } else if (grid_file.empty()) {
            grid_file = flag;
        } else {
            throw UsageError(fmt::format("one grid file only, got {} and {}", quote_arg(grid_file),
                                         quote_arg(flag)));
        }
    }
    const std::string& output = flags.output;
    sweep::SweepOptions& options = flags.options;
    const bool dry_run = flags.dry_run;
    if (grid_file.empty()) throw UsageError("missing GRID.json (see 'pipesim sweep --help')");
    if (output.empty() && !dry_run) throw UsageError("missing -o RESULTS.csv");
    if (fileio::is_standard_stream(output))
        throw UsageError(
            "-o -: a sweep appends each job's row to its results file as the job "
            "ends, and resumes from it: give a file");
    if (!flags.html.empty()) viz::check_html_report("--html", flags.html);
    // The grid itself as -o was read as a results file to resume, and refused as one with
    // the header a results file has.
    check_output_files({{"-o", output}, {"--html", flags.html}}, {grid_file});

    const sweep::Grid grid = sweep::load_grid(grid_file);
    if (dry_run) {
        // Counted, not expanded: a grid of a million jobs took 860 MB to say so. Shard I of N
        // holds the indices I, I + N, ...
        const std::size_t total = sweep::job_count(grid);
        const auto shard = static_cast<std::size_t>(options.shard);
        const auto shards = static_cast<std::size_t>(options.shards);
        fmt::print("{} jobs in the grid, {} in shard {}/{}\n", total,
                   total > shard ? (total - 1 - shard) / shards + 1 : 0, options.shard,
                   options.shards);
        return 0;
    }
    const std::vector<sweep::Job> all = sweep::expand(grid);
    const std::vector<sweep::Job> jobs = sweep::shard_jobs(all, options.shard, options.shards);
    options.grid = sweep::grid_id(all);
    const sweep::SweepSummary s = sweep::run_sweep(jobs, output, options);
    if (options.progress != sweep::ProgressStyle::none)
        fmt::print(stderr,
                   "sweep: {} jobs, {} already done, {} ran: {} ok, {} over memory, {} "
                   "infeasible, {} errors → {}\n",
                   s.total, s.skipped, s.ran, s.ok, s.over_memory, s.infeasible, s.errors, output);
    if (!flags.html.empty()) write_sweep_html(flags.html, args, grid_file, output);
    if (s.errors > 0) {
        fmt::print(stderr,
                   "pipesim sweep: {} job(s) failed (status 'error' in {}); run the same command "
                   "again to retry them\n",
                   s.errors, output);
        return 1;
    }
    return 0;
}

}  // namespace pipesim::cli
