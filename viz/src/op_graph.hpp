#pragma once
// The ops of a timeline as a dependency graph, indexed densely: flat index = first op of the
// device + position. Shared by the critical path and the dependency-graph picture.

#include <array>
#include <cstdint>
#include <vector>

#include "schedules/timeline.hpp"
#include "viz/critical_path.hpp"

namespace pipesim::viz::detail {

struct OpGraph {
    std::vector<std::size_t> first;  ///< per device (and one past the end): first flat index
    std::vector<OpRef> ref;          ///< flat index → (device, position)
    std::vector<const TimedOp*> op;  ///< flat index → the op in the timeline
    /// Flat indices of each op's data inputs (−1: none).
    std::vector<std::array<std::int32_t, 2>> inputs;
    /// When each input is available on the op's device: its transfer's end if recorded, else
    /// the input's end.
    std::vector<std::array<double, 2>> arrival;
    /// The predecessor (input or device-previous op) that became available last: the one
    /// that let the op start (−1 for an op with no predecessor). Ties go to an input.
    std::vector<std::int32_t> binding;

    std::size_t size() const { return ref.size(); }
    std::size_t flat(OpRef r) const {
        return first[static_cast<std::size_t>(r.device)] + static_cast<std::size_t>(r.position);
    }
    /// The device-previous op of flat index `i`, or −1.
    std::int32_t previous(std::size_t i) const {
        return ref[i].position > 0 ? static_cast<std::int32_t>(i) - 1 : -1;
    }
};

/// Builds the graph. Throws std::invalid_argument if the op order is not a valid schedule.
OpGraph build_op_graph(const Timeline& timeline);

/// Flat indices of the critical path (see CriticalPath), first to last.
std::vector<std::size_t> critical_chain(const OpGraph& graph);

}  // namespace pipesim::viz::detail
