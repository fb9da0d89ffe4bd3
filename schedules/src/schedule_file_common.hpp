#pragma once
// What the schedule readers share: op positions for messages, the allocation budget, and
// validation with the offending op's position.

#include <string>
#include <vector>

#include "fileio/parse_error.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::detail {

/// Where each op of a parsed schedule was written, parallel to Schedule::device_ops.
using OpPositions = std::vector<std::vector<TextPosition>>;

/// Validation keeps dense per-(microbatch, stage) arrays. Throws ParseError unless their size
/// stays proportional to the ops the file really lists (a valid schedule has at least two
/// ops per microbatch and stage), so a file claiming 10^6 microbatches with a handful of ops
/// is refused before anything large is allocated.
void check_op_budget(const Schedule& schedule, std::size_t ops, const std::string& file);

/// validate(), throwing ParseError "invalid schedule: ..." at the offending op when the issue
/// names one, else for the file as a whole.
void validate_parsed(const Schedule& schedule, const OpPositions& positions,
                     const std::string& file);

}  // namespace pipesim::detail
