#include "schedules/schedule_file.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "schedules/pytorch_csv.hpp"
#include "schedules/schedule_json.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

enum class ScheduleFormat { json, csv };

ScheduleFormat format_of(const std::string& path) {
    const std::string ext = fileio::file_extension(path);
    if (ext == ".json") return ScheduleFormat::json;
    if (ext == ".csv") return ScheduleFormat::csv;
    throw std::invalid_argument(fmt::format(
        "{}: unknown schedule file type '{}': expected .json (pipesim schedule) or .csv "
        "(PyTorch pipelining)",
        path, ext));
}

}  // namespace

Schedule read_schedule_file(const std::string& path, const ScheduleFileLimits& limits) {
    const ScheduleFormat format = format_of(path);
    const std::string text = fileio::read_text_file(path, limits.max_bytes);
    if (format == ScheduleFormat::json)
        return parse_schedule_json(text, path, fileio::file_stem(path), limits);
    return parse_pytorch_csv(text, path, fileio::file_stem(path), limits).schedule;
}

void write_schedule_file(const Schedule& schedule, const std::string& path) {
    const ScheduleFormat format = format_of(path);
    require_valid(schedule);
    fileio::write_file_atomically(path, format == ScheduleFormat::json
                                            ? schedule_to_json(schedule)
                                            : schedule_to_pytorch_csv(schedule));
}

}  // namespace pipesim
