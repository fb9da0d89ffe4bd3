#include "viz/outputs.hpp"

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "schedules/phases.hpp"
#include "viz/chrome_trace.hpp"
#include "viz/dependency_graph.hpp"
#include "viz/render.hpp"
#include "viz/timeline_file.hpp"

namespace pipesim::viz {

namespace {

void check_picture(const std::string& path, const std::string& format_without_extension) {
    if (path.empty()) return;
    const ImageFormat format = image_format_for_path(path, format_without_extension);
    if (!graphviz_available()) (void)render_dot("", format);  // throws for all but .dot
}

}  // namespace

void check_outputs(const VizOutputs& outputs) {
    check_picture(outputs.timeline_picture, outputs.format_without_extension);
    check_picture(outputs.dependency_graph, outputs.format_without_extension);
}

void write_picture(const std::string& path, std::string_view dot,
                   std::string_view format_without_extension) {
    fileio::write_file_atomically(
        path, render_dot(dot, image_format_for_path(path, format_without_extension)));
}

std::string write_outputs(const Timeline& timeline, const MemoryModel& memory,
                          const VizOutputs& outputs) {
    check_outputs(outputs);
    // Drawn first: the pictures are what may still refuse (too many ops).
    const auto draw = [&](const std::string& path, const std::string& dot) {
        return render_dot(dot, image_format_for_path(path, outputs.format_without_extension));
    };
    // Each output a phase (schedules/phases.hpp): drawing a large timeline takes seconds.
    const auto phase = [&](std::string_view what) {
        if (!reporting_phases()) return;
        std::size_t ops = 0;
        for (const auto& device : timeline.device_ops)
            ops += device.size();
        report_phase(fmt::format("{} ({} ops)", what, ops));
    };
    std::string picture, graph;
    if (!outputs.timeline_picture.empty()) {
        phase("drawing the timeline");
        picture = draw(outputs.timeline_picture, timeline_dot(timeline, memory, outputs.picture));
    }
    if (!outputs.dependency_graph.empty()) {
        phase("drawing the dependency graph");
        graph = draw(outputs.dependency_graph, dependency_graph_dot(timeline));
    }
    if (!outputs.saved_timeline.empty()) {
        phase("saving the timeline");
        save_timeline_file(outputs.saved_timeline, timeline, &memory,
                           outputs.picture.memory_in_bytes);
    }
    if (!outputs.trace.empty()) {
        phase("writing the trace");
        fileio::write_file_atomically(outputs.trace, [&](const fileio::TextSink& sink) {
            write_chrome_trace(timeline, &memory, outputs.trace_options, sink);
        });
    }
    if (!outputs.timeline_picture.empty())
        fileio::write_file_atomically(outputs.timeline_picture, picture);
    if (!outputs.dependency_graph.empty())
        fileio::write_file_atomically(outputs.dependency_graph, graph);
    return outputs.gantt ? text_gantt(timeline, *outputs.gantt) : std::string();
}

}  // namespace pipesim::viz
