#pragma once
// Everything a command can ask to have written about a timeline (`--timeline`, `--dep-graph`,
// `--trace`, `--save-timeline`, `--gantt`), produced in one call. Implemented by `viz_render`.

#include <optional>
#include <string>

#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"
#include "viz/chrome_trace.hpp"
#include "viz/gantt.hpp"
#include "viz/timeline_picture.hpp"

namespace pipesim::viz {

/// Which outputs to produce; an empty path means "not asked for".
struct VizOutputs {
    std::string timeline_picture;  ///< .svg, .png, .pdf or .dot: the timeline picture
    std::string dependency_graph;  ///< .svg, .png, .pdf or .dot: the dependency DAG
    std::string trace;             ///< Chrome trace JSON
    std::string saved_timeline;    ///< saved Timeline JSON (docs/timeline-format.md)
    /// The picture format ("svg", "png", "pdf", "dot") of a picture path without an
    /// extension, such as `-` (standard output); a path's extension always wins.
    std::string format_without_extension;
    TimelinePictureOptions picture;
    ChromeTraceOptions trace_options;
    std::optional<GanttOptions> gantt;  ///< the terminal Gantt chart, returned as text

    bool any() const {
        return !timeline_picture.empty() || !dependency_graph.empty() || !trace.empty() ||
               !saved_timeline.empty() || gantt.has_value();
    }
};

/// Checks the requested file names before any work is done: picture extensions must be known
/// and, without Graphviz, .dot. Throws std::invalid_argument naming the flag's file.
void check_outputs(const VizOutputs& outputs);

/// Writes each requested file (each whole or not at all) and returns the Gantt chart's text
/// (empty if not asked for). `memory` has one entry per virtual stage. Throws like
/// write_picture, timeline_dot and dependency_graph_dot. The pictures are drawn before any
/// file is written, so that one they refuse (too many ops to draw) leaves no other behind; a
/// file that cannot be written leaves those written before it.
std::string write_outputs(const Timeline& timeline, const MemoryModel& memory,
                          const VizOutputs& outputs);

}  // namespace pipesim::viz
