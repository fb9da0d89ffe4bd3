#include "viz_flags.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

namespace pipesim::cli {

const char* const viz_flags_help =
    R"(pictures and traces (see docs/timeline-format.md):
  --timeline FILE       the timeline picture: .svg (with tooltips), .png, .pdf or .dot
  --dep-graph FILE      the ops as a dependency graph with the critical path (small runs)
  --trace FILE.json     Chrome trace for Perfetto or chrome://tracing
  --save-timeline FILE.json   the timeline, for 'pipesim render' later
  --gantt               print a text Gantt chart fitted to the terminal
  --transfers           draw transfers between devices as arrows in the timeline picture
  --critical-path       outline the critical path's ops in the timeline picture
  --no-memory           leave the memory curves out of the timeline picture
)";

bool read_viz_flag(const std::string& flag, ArgReader& reader, viz::VizOutputs& outputs) {
    if (flag == "--timeline")
        outputs.timeline_picture = reader.value(flag);
    else if (flag == "--dep-graph")
        outputs.dependency_graph = reader.value(flag);
    else if (flag == "--trace")
        outputs.trace = reader.value(flag);
    else if (flag == "--save-timeline")
        outputs.saved_timeline = reader.value(flag);
    else if (flag == "--gantt")
        outputs.gantt = viz::GanttOptions{
            terminal_width(), ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr};
    else if (flag == "--transfers")
        outputs.picture.transfers = true;
    else if (flag == "--critical-path")
        outputs.picture.critical_path = true;
    else if (flag == "--no-memory")
        outputs.picture.memory = false;
    else
        return false;
    return true;
}

int terminal_width() {
    if (const char* columns = std::getenv("COLUMNS")) {
        const int width = std::atoi(columns);
        if (width >= 20) return width;
    }
    winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
    return 100;
}

}  // namespace pipesim::cli
