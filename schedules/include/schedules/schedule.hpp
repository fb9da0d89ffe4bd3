#pragma once
// The schedule IR: which ops each device runs, in which order.

#include <string>
#include <vector>

#include "schedules/op.hpp"

namespace pipesim {

/// A pipeline schedule: `devices` pipeline devices, `chunks` virtual stages per device
/// (p·v virtual stages in all), `microbatches` microbatches, and for each device the ordered
/// list of ops it runs. Dependencies are implied by the ops (see dependencies.hpp).
/// A Schedule is a plain value: build it, validate it, then treat it as immutable.
struct Schedule {
    std::string name;
    int devices = 0;
    int microbatches = 0;
    int chunks = 1;
    /// Device that holds each virtual stage; size devices·chunks.
    std::vector<int> stage_device;
    /// Per device, the ops in the order the device runs them.
    std::vector<std::vector<Op>> device_ops;

    int stages() const { return devices * chunks; }
    std::size_t op_count() const;

    bool operator==(const Schedule&) const = default;
};

/// An empty schedule (no ops yet) with the given shape and placement; the generators'
/// starting point. Precondition: placement.size() == devices·chunks.
Schedule make_empty_schedule(std::string name, int devices, int microbatches, int chunks,
                             std::vector<int> placement);

}  // namespace pipesim
