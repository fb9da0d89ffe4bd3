#include "viz_flags.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include <fmt/format.h>

#include "bounds.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "schedules/schedule_file.hpp"
#include "viz/chrome_trace.hpp"
#include "viz/image_format.hpp"

namespace pipesim::cli {

namespace {

using VizFlag = FlagSpec<viz::VizOutputs>;

const std::array viz_flags = {
    VizFlag{"", "--timeline", "FILE",
            "the timeline picture: .svg (with tooltips), .png, .pdf or .dot",
            [](viz::VizOutputs& o, const std::string&, const std::string& v) {
                o.timeline_picture = v;
            }},
    VizFlag{"", "--dep-graph", "FILE",
            "the ops as a dependency graph with the critical path (small runs)",
            [](viz::VizOutputs& o, const std::string&, const std::string& v) {
                o.dependency_graph = v;
            }},
    VizFlag{"", "--trace", "FILE.json", "Chrome trace for Perfetto or chrome://tracing",
            [](viz::VizOutputs& o, const std::string&, const std::string& v) { o.trace = v; }},
    VizFlag{"", "--trace-flows", "", "arrows along the dependencies in the --trace file",
            [](viz::VizOutputs& o, const std::string&, const std::string&) {
                o.trace_options.flows = true;
            }},
    VizFlag{
        "", "--save-timeline", "FILE.json", "the timeline, for 'pipesim render' later",
        [](viz::VizOutputs& o, const std::string&, const std::string& v) { o.saved_timeline = v; }},
    VizFlag{"", "--format", "NAME",
            "format of an output written to '-' (standard output) or to a name without an\n"
            "extension: svg, png, pdf or dot for pictures; json or csv for --save where\n"
            "the command has it",
            [](viz::VizOutputs& o, const std::string&, const std::string& v) {
                o.format_without_extension = v;
            }},
    VizFlag{"", "--gantt", "", "print a text Gantt chart fitted to the terminal",
            [](viz::VizOutputs& o, const std::string&, const std::string&) {
                o.gantt =
                    viz::GanttOptions{terminal_width(), ::isatty(STDOUT_FILENO) == 1 &&
                                                            std::getenv("NO_COLOR") == nullptr};
            }},
    VizFlag{"", "--transfers", "",
            "draw transfers between devices as arrows in the timeline picture",
            [](viz::VizOutputs& o, const std::string&, const std::string&) {
                o.picture.transfers = true;
            }},
    VizFlag{"", "--critical-path", "", "outline the critical path's ops in the timeline picture",
            [](viz::VizOutputs& o, const std::string&, const std::string&) {
                o.picture.critical_path = true;
            }},
    VizFlag{"", "--lifespan", "MB",
            "highlight microbatch MB's activation lifespans (F start to W end) in the\n"
            "timeline picture",
            [](viz::VizOutputs& o, const std::string& f, const std::string& v) {
                o.picture.lifespan_microbatch = parse_int(f, v, 0, bounds::max_microbatches - 1);
            }},
    VizFlag{"", "--no-memory", "", "leave the memory curves out of the timeline picture",
            [](viz::VizOutputs& o, const std::string&, const std::string&) {
                o.picture.memory = false;
            }},
};

}  // namespace

const std::string viz_flags_help =
    "pictures and traces (see docs/timeline-format.md):\n" + flags_help(viz_flags);

bool read_viz_flag(const std::string& flag, ArgReader& reader, viz::VizOutputs& outputs) {
    return read_flag(viz_flags, flag, reader, outputs);
}

void check_viz_flags(const viz::VizOutputs& outputs, std::string_view picture_flag) {
    const viz::TimelinePictureOptions defaults;
    const viz::TimelinePictureOptions& p = outputs.picture;
    const char* option = p.transfers != defaults.transfers                       ? "--transfers"
                         : p.critical_path != defaults.critical_path             ? "--critical-path"
                         : p.memory != defaults.memory                           ? "--no-memory"
                         : p.lifespan_microbatch != defaults.lifespan_microbatch ? "--lifespan"
                                                                                 : nullptr;
    if (option && outputs.timeline_picture.empty())
        throw UsageError(
            fmt::format("{} changes the timeline picture: give {} FILE too", option, picture_flag));
    if (outputs.trace_options.flows && outputs.trace.empty())
        throw UsageError("--trace-flows adds arrows to the trace: give --trace FILE.json too");
    viz::check_outputs(outputs);
}

analysis::AnalyticEngine analytic_engine_for(const viz::VizOutputs& outputs, bool html) {
    analysis::AnalyticEngine engine;
    engine.record_ops = outputs.any() || html;
    engine.record_transfers = !outputs.trace.empty() || !outputs.saved_timeline.empty() ||
                              (!outputs.timeline_picture.empty() &&
                               (outputs.picture.transfers || outputs.picture.critical_path));
    if (!outputs.trace.empty())
        engine.output_bytes_per_op = viz::chrome_trace_bytes_per_op(outputs.trace_options);
    return engine;
}

bool check_run_outputs(const viz::VizOutputs& outputs, bool json, const std::string& save_file,
                       const std::vector<std::string>& inputs) {
    if (json && outputs.gantt) throw UsageError("--gantt prints text; it cannot go with --json");
    auto files = output_files(outputs);
    files.emplace_back("--save", save_file);
    check_output_files(files, inputs);
    check_output_formats(outputs, save_file);
    check_viz_flags(outputs);
    return check_standard_output(files, json, outputs.gantt.has_value());
}

bool check_standard_output(const std::vector<std::pair<std::string_view, std::string>>& files,
                           bool json, bool gantt) {
    for (const auto& [flag, file] : files) {
        if (!fileio::is_standard_stream(file)) continue;
        if (json)
            throw UsageError(fmt::format("{} - and --json both print to standard output", flag));
        if (gantt)
            throw UsageError(fmt::format("{} - and --gantt both print to standard output", flag));
        return false;
    }
    return true;
}

void check_output_formats(const viz::VizOutputs& outputs, const std::string& save_file) {
    // The outputs whose format follows the extension, and the names --format may give them.
    struct Typed {
        std::string_view flag;
        const std::string& file;
        bool picture;
    };
    const std::array typed = {Typed{"--timeline", outputs.timeline_picture, true},
                              Typed{"--dep-graph", outputs.dependency_graph, true},
                              Typed{"--save", save_file, false}};
    const std::string& format = outputs.format_without_extension;
    bool used = false;
    for (const Typed& output : typed) {
        if (output.file.empty() || !fileio::file_extension(output.file).empty()) continue;
        const char* expected = output.picture ? "svg, png, pdf or dot" : "json or csv";
        if (format.empty())
            throw UsageError(fmt::format(
                "{} {}: no extension to tell the format by; add --format {}", output.flag,
                quote_arg(output.file), output.picture ? "svg|png|pdf|dot" : "json|csv"));
        const bool fits = output.picture ? viz::image_format_named(format).has_value()
                                         : is_schedule_file_format(format);
        if (!fits)
            throw UsageError(fmt::format("--format {}: {} {} takes {}", quote_arg(format),
                                         output.flag, quote_arg(output.file), expected));
        used = true;
    }
    if (!format.empty() && !used) {
        // A trace or saved timeline named without an extension: JSON whatever --format says
        // (the message said no output had such a name).
        for (const auto& [flag, file] :
             {std::pair<std::string_view, const std::string&>{"--trace", outputs.trace},
              {"--save-timeline", outputs.saved_timeline}})
            if (!file.empty() && fileio::file_extension(file).empty())
                throw UsageError(
                    fmt::format("--format {}: {} {} is always JSON; --format names "
                                "the format of a picture or of --save",
                                quote_arg(format), flag, quote_arg(file)));
        throw UsageError(fmt::format(
            "--format {}: no output is written to '-' or to a name without an extension; the "
            "others take their format from the extension",
            quote_arg(format)));
    }
    // The JSON outputs: an extension that names another format would mislabel the file.
    for (const auto& [flag, file] :
         {std::pair<std::string_view, const std::string&>{"--trace", outputs.trace},
          {"--save-timeline", outputs.saved_timeline}})
        if (const std::string ext = fileio::file_extension(file); !ext.empty() && ext != ".json")
            throw UsageError(
                fmt::format("{} {}: it writes JSON; name it .json (or leave the "
                            "extension out)",
                            flag, quote_arg(file)));
}

std::vector<std::pair<std::string_view, std::string>> output_files(const viz::VizOutputs& outputs) {
    return {{"--timeline", outputs.timeline_picture},
            {"--dep-graph", outputs.dependency_graph},
            {"--trace", outputs.trace},
            {"--save-timeline", outputs.saved_timeline}};
}

int terminal_width() {
    // A chart wider than any screen is unreadable, and its rows are allocated: COLUMNS of
    // 2^31 once took 8 GB and never finished.
    constexpr long narrowest = 20, widest = 1000;
    if (const char* columns = std::getenv("COLUMNS")) {
        const long width = std::strtol(columns, nullptr, 10);
        if (width >= narrowest) return static_cast<int>(std::min(width, widest));
    }
    winsize size{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= narrowest)
        return static_cast<int>(std::min<long>(size.ws_col, widest));
    return 100;
}

void describe_run(viz::TimelinePictureOptions& picture, const analysis::Analysis& result) {
    picture.memory_in_bytes = result.model.has_value();
    picture.iteration_time = result.iteration_time;
    picture.iteration_is_period = result.post_validation;
}

}  // namespace pipesim::cli
