#pragma once
// Schedule files: pipesim's schedule JSON and PyTorch pipelining CSV, chosen by extension.
// The formats are described in docs/schedule-format.md.

#include <cstddef>
#include <string>
#include <string_view>

#include "schedules/schedule.hpp"

namespace pipesim {

/// Caps on what a schedule file may claim, so a hostile or mistaken file is rejected before
/// anything is allocated for it (e.g. "microbatches": 1000000000000).
struct ScheduleFileLimits {
    /// File size: 5·10⁷ ops of a large schedule take some 600 MB (12 bytes an op in JSON).
    std::size_t max_bytes = std::size_t{1} << 30;
    int max_devices = 4096;            ///< p
    int max_chunks = 64;               ///< v
    int max_microbatches = 1 << 20;    ///< m
    std::size_t max_ops = 50'000'000;  ///< ops over all devices
};

/// Reads a schedule from `path`: ".json" is pipesim's schedule JSON, ".csv" PyTorch's
/// pipelining CSV (compute-only or with communication actions). The schedule is validated.
/// Throws ParseError (a std::invalid_argument) "path:line:column: what was expected" for
/// input that does not parse or is invalid (the position is that of the offending op when
/// validation names one), and std::invalid_argument for an unknown extension or unreadable
/// file. `-` (standard input) and a name without an extension are read by their content: JSON
/// starts with '{', anything else is read as CSV.
Schedule read_schedule_file(const std::string& path, const ScheduleFileLimits& limits = {});

/// The schedule in `text`, read from `path` (for messages and the format, as
/// read_schedule_file; `-` for standard input), e.g. for a caller that has read standard input
/// once and tries several formats on it. Throws like read_schedule_file.
Schedule parse_schedule_file(std::string_view text, const std::string& path,
                             const ScheduleFileLimits& limits = {});

/// Writes `schedule` to `path` in `format` ("json" or "csv") or, when `format` is empty, in
/// the format its extension names (".json" or ".csv"), atomically (the old file or the new
/// one, never a part); `-` is standard output. Throws InvalidSchedule if the schedule is
/// invalid, std::invalid_argument for an unknown format or extension or a failed write.
void write_schedule_file(const Schedule& schedule, const std::string& path,
                         std::string_view format = {});

/// The text write_schedule_file() writes, without writing it: a caller with other outputs
/// makes it first, so that a schedule the format cannot hold leaves no file written. Throws
/// like write_schedule_file.
std::string schedule_file_text(const Schedule& schedule, const std::string& path,
                               std::string_view format = {});

/// What write_schedule_file() checks before it has a schedule: `format`, or without one the
/// extension of `path`. Throws std::invalid_argument as write_schedule_file does.
void check_schedule_file_name(const std::string& path, std::string_view format = {});

/// Whether `text`, read by content (standard input, a name without an extension), is JSON:
/// pipesim's schedule JSON is an object (so is a saved timeline); PyTorch's CSV starts with
/// a cell.
bool starts_as_json_object(std::string_view text);

/// What writing `schedule` to `path` in `format` (picked as write_schedule_file picks it)
/// leaves out, as one line for a warning; empty when nothing is lost. PyTorch's CSV has no
/// F&B pairs (DualPipe's overlapped F and B): they are written as two ops, which run one
/// after the other when the file is read back.
std::string schedule_file_loss(const Schedule& schedule, const std::string& path,
                               std::string_view format = {});

/// About the memory schedule_file_text() takes per op, for a check before the run: an op's
/// token at its longest for `microbatches` and `stages` (a two-letter pass, both numbers and
/// two separators), four times over: JSON's device lines, and the text growing by doubling
/// (its old and new buffers at once). Measured for zb-h1 at p 64, m 8000: 29 bytes an op
/// at the peak for JSON and 26 for CSV, against 40 from here.
double schedule_file_bytes_per_op(int microbatches, int stages);

/// Whether `format` names a schedule file format: "json" or "csv".
bool is_schedule_file_format(std::string_view format);

}  // namespace pipesim
