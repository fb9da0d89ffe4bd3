#include "schedule_file_common.hpp"

#include <fmt/format.h>

#include "schedules/validate.hpp"

namespace pipesim::detail {

long long read_decimal(std::string_view s, std::size_t& i, long long limit) {
    const std::size_t start = i;
    long long value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value = value * 10 + (s[i] - '0');
        if (value >= limit) return too_big;
        ++i;
    }
    return i == start ? -1 : value;
}

void check_op_budget(const Schedule& schedule, std::size_t ops, const std::string& file) {
    const auto pairs = static_cast<std::size_t>(schedule.microbatches) *
                       static_cast<std::size_t>(schedule.stages());
    // Slack keeps validate()'s precise "X is missing" message for ordinary small files.
    constexpr std::size_t slack = std::size_t{1} << 16;
    if (pairs > ops + slack)
        throw ParseError(file, TextPosition{},
                         fmt::format("the file lists {} ops, but {} microbatches × {} stages "
                                     "need at least {} (an F and a backward each)",
                                     ops, schedule.microbatches, schedule.stages(), 2 * pairs));
}

void validate_parsed(const Schedule& schedule, const OpPositions& positions,
                     const std::string& file) {
    const auto issue = validate(schedule);
    if (!issue) return;
    TextPosition where;
    if (issue->device >= 0 && static_cast<std::size_t>(issue->device) < positions.size()) {
        const auto& device = positions[static_cast<std::size_t>(issue->device)];
        if (issue->position >= 0 && static_cast<std::size_t>(issue->position) < device.size())
            where = device[static_cast<std::size_t>(issue->position)];
    }
    throw ParseError(file, where, "invalid schedule: " + issue->message);
}

}  // namespace pipesim::detail
