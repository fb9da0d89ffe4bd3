#pragma once
// The critical path of a timeline: the chain of dependencies that sets its makespan.

#include <vector>

#include "schedules/timeline.hpp"

namespace pipesim::viz {

/// An op of a timeline by where it sits: its device and its position in that device's list.
struct OpRef {
    int device = 0;
    int position = 0;

    bool operator==(const OpRef&) const = default;
};

/// The chain that ends with the last op to finish and goes back, op by op, through the
/// predecessor that let each op start: whichever of its inputs (F(mb, s−1) for an F, …; see
/// DESIGN.md) and its device's previous op became available last. An input is available when
/// its transfer to the op's device ends (when the timeline records transfers) or when it ends.
/// Ties go to the input, so the path shows the cross-device chain.
struct CriticalPath {
    std::vector<OpRef> ops;  ///< first to last in time
    double busy = 0;         ///< sum of the ops' durations
    double waiting = 0;      ///< rest of the path's span: transfers and other waits
};

/// Computes the critical path. Throws std::invalid_argument if the timeline's op order is not
/// a valid schedule (its dependencies are then undefined), naming the problem. An empty
/// timeline has an empty path.
CriticalPath critical_path(const Timeline& timeline);

}  // namespace pipesim::viz
