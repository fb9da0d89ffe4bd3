#include "schedules/schedule_file.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "schedule_file_common.hpp"
#include "schedules/pytorch_csv.hpp"
#include "schedules/schedule_json.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

enum class ScheduleFormat { json, csv };

// The format `path`'s extension names; nullopt for `-` and names without an extension.
std::optional<ScheduleFormat> format_of_name(const std::string& path) {
    const std::string ext = fileio::file_extension(path);
    if (ext == ".json") return ScheduleFormat::json;
    if (ext == ".csv") return ScheduleFormat::csv;
    if (ext.empty()) return std::nullopt;
    throw std::invalid_argument(fmt::format(
        "{}: unknown schedule file type '{}': expected .json (pipesim schedule) or .csv "
        "(PyTorch pipelining)",
        path, ext));
}

ScheduleFormat format_of_content(std::string_view text) {
    return starts_as_json_object(text) ? ScheduleFormat::json : ScheduleFormat::csv;
}

std::optional<ScheduleFormat> parse_format(std::string_view format) {
    if (format == "json") return ScheduleFormat::json;
    if (format == "csv") return ScheduleFormat::csv;
    return std::nullopt;
}

}  // namespace

bool starts_as_json_object(std::string_view text) {
    const std::size_t first = detail::json_text_start(text);
    return first != std::string_view::npos && text[first] == '{';
}

bool is_schedule_file_format(std::string_view format) {
    return parse_format(format).has_value();
}

Schedule read_schedule_file(const std::string& path, const ScheduleFileLimits& limits) {
    (void)format_of_name(path);  // an unknown extension is refused before reading
    return parse_schedule_file(fileio::read_text_file(path, limits.max_bytes), path, limits);
}

Schedule parse_schedule_file(std::string_view text, const std::string& path,
                             const ScheduleFileLimits& limits) {
    const std::optional<ScheduleFormat> named = format_of_name(path);
    const std::string shown = fileio::is_standard_stream(path) ? "standard input" : path;
    if (named.value_or(format_of_content(text)) == ScheduleFormat::json)
        return parse_schedule_json(text, shown, fileio::file_stem(path), limits);
    return parse_pytorch_csv(text, shown, fileio::file_stem(path), limits).schedule;
}

std::string schedule_file_loss(const Schedule& schedule, const std::string& path,
                               std::string_view format) {
    const std::optional<ScheduleFormat> chosen =
        format.empty() ? (fileio::is_standard_stream(path) ? std::nullopt : format_of_name(path))
                       : parse_format(format);
    if (chosen != ScheduleFormat::csv) return {};
    std::size_t pairs = 0;
    for (const auto& device : schedule.fb_pairs)
        pairs += device.size();
    if (pairs == 0) return {};
    return fmt::format(
        "{}: the CSV is written with no F&B pairs (PyTorch's OVERLAP_F_B groups run only in "
        "its runtime schedule, and pipesim reads them as two ops): {}'s {} overlapped pairs are "
        "written as separate ops, which run one after the other when it is read back (save as "
        ".json to keep them)",
        fileio::is_standard_stream(path) ? "standard output" : path, schedule.name, pairs);
}

namespace {

ScheduleFormat named_format(const std::string& path, std::string_view format_name) {
    std::optional<ScheduleFormat> format;
    if (!format_name.empty()) {
        format = parse_format(format_name);
        if (!format)
            throw std::invalid_argument(fmt::format(
                "{}: unknown schedule file format '{}': expected json or csv", path, format_name));
    } else {
        format = format_of_name(path);
        if (!format)
            throw std::invalid_argument(fmt::format(
                "{}: no .json or .csv extension to tell the schedule file format by; name it "
                "(json or csv)",
                fileio::is_standard_stream(path) ? "standard output" : path));
    }
    return *format;
}

}  // namespace

void check_schedule_file_name(const std::string& path, std::string_view format) {
    (void)named_format(path, format);
}

std::string schedule_file_text(const Schedule& schedule, const std::string& path,
                               std::string_view format_name) {
    const ScheduleFormat format = named_format(path, format_name);
    require_valid(schedule);
    // What the readers would refuse is not written (85 MB of 1F1B at p = 1,024 and m = 4,096
    // were saved, then refused when read).
    const ScheduleFileLimits limits;
    if (schedule.op_count() > limits.max_ops)
        throw std::invalid_argument(fmt::format(
            "{}: schedule '{}' has {} ops, more than the {} a schedule file may hold to be read "
            "back (ScheduleFileLimits)",
            path, schedule.name, schedule.op_count(), limits.max_ops));
    std::string text = format == ScheduleFormat::json ? schedule_to_json(schedule)
                                                      : schedule_to_pytorch_csv(schedule);
    if (text.size() > limits.max_bytes)
        throw std::invalid_argument(
            fmt::format("{}: schedule '{}' would take {} bytes, more than the {} a schedule file "
                        "may hold to be read back (ScheduleFileLimits)",
                        path, schedule.name, text.size(), limits.max_bytes));
    return text;
}

double schedule_file_bytes_per_op(int microbatches, int stages) {
    const auto digits = [](int n) {
        int count = 1;
        for (; n >= 10; n /= 10)
            ++count;
        return count;
    };
    const int token =
        2 + digits(std::max(microbatches - 1, 0)) + 1 + digits(std::max(stages - 1, 0)) + 1;
    return 4.0 * token;
}

void write_schedule_file(const Schedule& schedule, const std::string& path,
                         std::string_view format_name) {
    fileio::write_file_atomically(path, schedule_file_text(schedule, path, format_name));
}

}  // namespace pipesim
