#pragma once
// Schedule validation: shape, every op exactly once, dependency order, no deadlock.

#include <optional>
#include <stdexcept>
#include <string>

#include "schedules/schedule.hpp"

namespace pipesim {

/// What is wrong with a schedule. `device` and `position` locate the offending op in the
/// per-device order (−1 when the problem is not tied to one op, e.g. a missing op).
struct ValidationIssue {
    int device = -1;
    int position = -1;
    std::string message;
};

/// Thrown by functions that require a valid schedule. Derives from std::invalid_argument:
/// the schedule is bad input, not an internal failure.
class InvalidSchedule : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// Checks that `schedule` can run:
///  - shape: p, m, v ≥ 1; one op list per device; placement in range;
///  - each op's microbatch and stage are in range and the op sits on its stage's device;
///  - every (microbatch, stage) of the microbatch's stage range (all stages unless
///    Schedule::microbatch_stages says otherwise) has exactly one F and either one BW or one B
///    and one W, and there are no ops outside the range;
///  - dependencies F(mb,s) ← F(mb,s−1); B/BW(mb,s) ← F(mb,s), B/BW(mb,s+1); W(mb,s) ← B(mb,s)
///    (within the microbatch's range: its first stage's F and last stage's B have no
///    predecessor on another stage) are met in each device's order, and the devices' orders
///    together cannot deadlock.
/// Returns the first problem found, or nothing if the schedule is valid. A deadlock message
/// names the wait cycle: each device, its position, the op it is at and the op it waits for.
std::optional<ValidationIssue> validate(const Schedule& schedule);

/// The checks of validate() that need no dependency walk: shape, ranges, placement, every op
/// exactly once. A schedule that passes them can be given to DependencyWalker, whose run()
/// reports the rest (order and deadlock) with the same messages; engines use this pair so
/// that validation and timing share one walk.
std::optional<ValidationIssue> validate_structure(const Schedule& schedule);

/// validate(), throwing InvalidSchedule with the issue's message if there is one.
void require_valid(const Schedule& schedule);

}  // namespace pipesim
