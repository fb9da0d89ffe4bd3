#pragma once
// What the schedule readers share: op positions for messages, the allocation budget, and
// validation with the offending op's position.

#include <string>
#include <string_view>
#include <vector>

#include "fileio/parse_error.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::detail {

/// Where each op of a parsed schedule was written, parallel to Schedule::device_ops.
using OpPositions = std::vector<std::vector<TextPosition>>;

/// The unsigned decimal at s[i], advancing i past its digits. −1 if s[i] is not a digit;
/// `too_big` (with i at the digit that made it so) if the number reaches `limit`, so a
/// claimed 10^12 never overflows or allocates.
inline constexpr long long too_big = -2;
long long read_decimal(std::string_view s, std::size_t& i, long long limit);

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
