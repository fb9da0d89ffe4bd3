#pragma once
// pipesim's schedule JSON: shape, placement and every device's op order, exactly.

#include <string>
#include <string_view>

#include "schedules/schedule.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim {

/// Parses schedule JSON (format "pipesim-schedule", version 1; see docs/schedule-format.md)
/// and validates the schedule. `file` names the input in messages; a document without a
/// "name" gets `default_name`. Throws ParseError "file:line:column: what was expected" for
/// malformed JSON, unknown or missing keys, values of the wrong type or out of range, bad op
/// tokens, and (at the offending op) for a schedule that validate() rejects.
Schedule parse_schedule_json(std::string_view text, const std::string& file,
                             const std::string& default_name = "schedule",
                             const ScheduleFileLimits& limits = {});

/// The schedule as schedule JSON, ending in a newline. parse_schedule_json() of the result
/// gives back an equal Schedule. Precondition: the schedule is valid (not checked here).
std::string schedule_to_json(const Schedule& schedule);

}  // namespace pipesim
