#pragma once
// Sweep results as CSV: one header line, one row per job. Parameters first (they identify
// the job), then the outcome. Numbers are written in their shortest exact form, so a job
// always gives the same row (docs/sweep-format.md lists the columns).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sweep/grid.hpp"

namespace pipesim::sweep {

/// How a job ended.
///  - ok: ran; metrics filled.
///  - over-memory: ran, but a device's peak exceeds the GPU's memory or the grid's cap;
///    metrics filled, `reason` names the device and the figures.
///  - infeasible: cannot run (the schedule cannot take that p/m/v, the layout needs more
///    GPUs than the cluster has, the model cannot be split so); `reason` says why.
///  - error: the worker failed (an internal error or a crash); retried on resume.
enum class Status { ok, over_memory, infeasible, error };
const char* status_name(Status status);

/// One row. Metrics are 0 when not applicable (no model: no bytes, no samples).
struct Result {
    Job job;
    Status status = Status::ok;
    std::string reason;
    int chunks = 0;  ///< v as run
    double makespan = 0;
    double bubble_rate = 0;
    double bubble_time = 0;      ///< idle time of the device with the largest bubble rate
    double peak_activation = 0;  ///< max over devices (units, or bytes with a model)
    double peak_memory = 0;      ///< bytes with a model (static + activation), max over devices
    double throughput = 0;  ///< microbatches per time unit of makespan (post-validation: period)
    int gpus = 0;
    double samples_per_second = 0;
    double samples_per_second_per_gpu = 0;
    double tokens_per_second = 0;
    double mfu = 0;
    double iteration_time = 0;  ///< simgrid: whole iteration incl. gradient all-reduce
    double efficiency = 0;      ///< busy over all devices / (p × makespan)
    double speedup_1f1b = 0;    ///< 1F1B's iteration time for the same inputs / this one's
    double lifespan_max = 0;    ///< longest activation lifespan (F start to W end), any stage
    double lifespan_mean = 0;   ///< mean activation lifespan over (microbatch, stage) pairs
    /// grid_id() of the grid the job came from: a results file holds the rows of one grid.
    /// Empty for a row not written by a sweep (a worker's, before the sweep stamps it).
    std::string grid;
};

/// The identity of a grid: 16 hexadecimal digits hashing every job (index and parameters) of
/// its whole expansion and the contents of the model, GPU and cluster files they name, the
/// same for all its shards. Reads those files (std::invalid_argument when one cannot be read).
std::string grid_id(const std::vector<Job>& jobs);
/// Whether `text` has the form of a grid_id().
bool is_grid_id(std::string_view text);

/// The CSV header line (no newline).
std::string csv_header();
/// A row (no newline); fields with commas or quotes are quoted as RFC 4180 asks.
std::string csv_row(const Result& result);

/// A job's identity: its parameters, independent of its index. Two jobs with the same key
/// are the same configuration.
std::string job_key(const Job& job);
/// Where two jobs' keys differ: the first differing parameter's column and both values
/// ("p is 7, the grid's 8"); empty when the keys are the same.
std::string key_difference(const Job& row, const Job& grid);

/// A results file read back. Rows keep their order; `incomplete_tail` is set when the file
/// did not end with a newline (a row cut short when a sweep was killed); that row is dropped.
struct ResultsFile {
    std::vector<Result> rows;
    bool incomplete_tail = false;
    /// The file's name as given and each row's line in it (for messages; empty when the rows
    /// were not parsed from a file).
    std::string file;
    std::vector<int> lines;
};

/// Parses results CSV text; `file` names it in messages. Throws ParseError
/// ("file:line:column: ...") for a different header or a malformed row.
ResultsFile parse_results(const std::string& file, const std::string& text);
/// Reads a results file (capped at 1 GiB), an input no output of the run may then replace
/// (fileio::guard_inputs).
ResultsFile load_results(const std::string& path);

/// Splits one CSV line into fields (RFC 4180 quoting). Returns nullopt if a quote is open
/// at the end of the line. If `starts` is given, it receives the byte offset (from 0) in
/// `line` where each field begins, for locating errors.
std::optional<std::vector<std::string>> split_csv_line(const std::string& line,
                                                       std::vector<std::size_t>* starts = nullptr);

}  // namespace pipesim::sweep
