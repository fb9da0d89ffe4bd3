#pragma once
// The ops of a (small) timeline as a dependency DAG with its critical path highlighted, so a
// user sees which chain of dependencies sets the makespan and what each bubble waits for.

#include <cstddef>
#include <string>

#include "schedules/timeline.hpp"

namespace pipesim::viz {

struct DependencyGraphOptions {
    /// Larger timelines are refused: a DAG of thousands of ops is unreadable and slow to lay
    /// out.
    std::size_t max_ops = 600;
};

/// DOT text (layout engine "dot", left to right). Nodes are the ops ("d<device>_<position>",
/// labelled "F3 s1" with device and times), coloured like the timeline picture. Solid edges
/// are data dependencies, dashed grey ones each device's order. In red: the critical path
/// (see critical_path.hpp). In orange: each dependency that kept a device idle (an op started
/// after a gap on its device because of that input); its tooltip names the idle interval.
/// Throws std::invalid_argument for a timeline over max_ops or one whose op order is not a
/// valid schedule.
std::string dependency_graph_dot(const Timeline& timeline,
                                 const DependencyGraphOptions& options = {});

}  // namespace pipesim::viz
