// pipesim render: pictures, traces and Gantt charts from a saved timeline or a schedule file.
#include <optional>

#include <fmt/format.h>

#include "analysis/run.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "html_output.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "schedules/schedule_file.hpp"
#include "viz/timeline_file.hpp"
#include "viz/timeline_picture.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* render_help =
    R"(usage: pipesim render FILE -o OUT.svg|.png|.pdf|.dot [options]

  FILE                  a saved timeline (.json from 'pipesim analyze --save-timeline'), or a
                        schedule file (pipesim schedule .json or PyTorch pipelining .csv),
                        which is replayed first with --costs and --comm
                        ('-' reads standard input)
  -o, --output OUT      the timeline picture (same as --timeline OUT; '-' with --format
                        writes it to standard output)
schedule files (--mem-w-ratio also for saved timelines without a memory model):
)";

// The timeline in `path` and its memory model: a saved timeline as is, a schedule replayed.
viz::SavedTimeline load(const std::string& path, analysis::PipelineSpec spec,
                        const std::string& timing_flag, bool have_mem_w_ratio,
                        const viz::VizOutputs& outputs) {
    // Standard input and JSON files are read once, then tried as a timeline and as a schedule.
    const bool standard_input = fileio::is_standard_stream(path);
    const std::string source = standard_input ? "standard input" : path;
    if (!standard_input && fileio::file_extension(path) == ".csv") {
        spec.given = read_schedule_file(path);
    } else if (const std::string text =
                   fileio::read_text_file(path, viz::TimelineFileLimits{}.max_bytes);
               !starts_as_json_object(text)) {
        if (text.find_first_not_of(" \t\r\n") == std::string::npos)
            throw std::invalid_argument(
                fmt::format("{}: empty file: expected a saved timeline (JSON) or a schedule file "
                            "(pipesim JSON or PyTorch pipelining CSV)",
                            source));
        // Not a JSON object, so not a saved timeline: PyTorch's CSV on standard input or in a
        // file without an extension (or a JSON schedule file's own error).
        spec.given = parse_schedule_file(text, path);
    } else {
        // A saved timeline too large for the picture is refused from its header, before the
        // whole file is parsed (p = m = 1,024: 40 s and 3.7 GB only to be refused).
        const std::size_t max_ops = outputs.picture.max_ops;
        if (const auto least = viz::timeline_min_ops(text);
            !outputs.timeline_picture.empty() && least && *least > static_cast<double>(max_ops))
            throw viz::too_many_ops(fmt::format("{}'s header says at least {:.0f} ops (an F "
                                                "and a backward per microbatch and stage),",
                                                source, *least),
                                    max_ops);
        try {
            viz::SavedTimeline saved = viz::parse_timeline_json(text, source);
            // Named as given (--a2a was told that --costs and --comm did not apply).
            if (!timing_flag.empty())
                throw UsageError(
                    fmt::format("{} is a saved timeline: its times are fixed, so {} does not apply",
                                path, timing_flag));
            // A saved memory model is drawn as saved: the ratio was ignored without a word.
            if (saved.memory && have_mem_w_ratio)
                throw UsageError(
                    fmt::format("{} is a saved timeline with its memory model: --mem-w-ratio "
                                "applies only to schedule files and timelines saved without one",
                                path));
            if (!saved.memory)
                saved.memory = unit_memory_model(
                    saved.timeline.devices, saved.timeline.chunks, spec.costs.mem_w_ratio,
                    chunks_per_microbatch(saved.timeline.devices, saved.timeline.chunks,
                                          saved.timeline.microbatch_stages));
            return saved;
        } catch (const viz::NotATimeline&) {
            // Valid JSON without the timeline tag: read it as a schedule below.
        }
        spec.given = parse_schedule_file(text, path);
    }
    // A picture of too many ops is refused before the replay (11.5 million ops replayed for
    // 5 s, then refused).
    check_picture_ops(spec, !outputs.timeline_picture.empty(), outputs.picture.max_ops);
    analysis::Analysis result = analysis::run(spec);
    return viz::SavedTimeline{
        std::move(result.timeline), std::move(result.memory), result.model.has_value(), {}};
}

}  // namespace

int run_render(const std::vector<std::string>& args) {
    std::string input;
    viz::VizOutputs outputs;
    analysis::PipelineSpec spec;
    std::string timing_flag;  // the first cost or communication flag given
    bool have_mem_w_ratio = false;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "-o" || flag == "--output") {
            reader.claim_once("--timeline", flag);  // -o is --timeline's other name here
            outputs.timeline_picture = reader.value(flag);
        } else if (read_cost_flag(flag, reader, spec)) {
            if (flag == "--mem-w-ratio")
                have_mem_w_ratio = true;
            else if (timing_flag.empty())
                timing_flag = flag;
        } else if (read_viz_flag(flag, reader, outputs)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}\n{}", render_help, cost_flags_help(), viz_flags_help);
            return 0;
        } else if (flag.size() > 1 && flag[0] == '-') {  // '-' alone: standard input
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim render --help')", quote_arg(flag)));
        } else if (input.empty()) {
            input = flag;
        } else {
            throw UsageError(
                fmt::format("render takes one input file, got '{}' and '{}'", input, flag));
        }
    }
    if (input.empty()) throw UsageError("missing the input file (see 'pipesim render --help')");
    if (!outputs.any())
        throw UsageError(
            "nothing to write: give -o OUT.svg|.png|.pdf|.dot (or --dep-graph, "
            "--trace, --gantt, --save-timeline)");
    check_output_formats(outputs);
    check_viz_flags(outputs, "-o");
    check_output_files(output_files(outputs), {input});
    // The picture on standard output with the Gantt chart after it was a corrupt picture.
    check_standard_output(output_files(outputs), /*json=*/false, outputs.gantt.has_value());
    // The phases on a terminal: reading, replaying and drawing a large file take seconds.
    std::optional<PhaseLine> phases(std::in_place, "render", large_input_file(input));
    if (reporting_phases()) report_phase(fmt::format("reading {}", input));
    const viz::SavedTimeline saved = load(input, spec, timing_flag, have_mem_w_ratio, outputs);
    outputs.picture.memory_in_bytes = saved.memory_in_bytes;
    const std::string gantt = viz::write_outputs(saved.timeline, *saved.memory, outputs);
    phases.reset();
    fmt::print("{}", gantt);
    // After the outputs, as analyze's: a warning and then an error would be two lines.
    for (const std::string& warning : saved.warnings)
        fmt::print(stderr, "pipesim render: warning: {}\n", warning);
    return 0;
}

}  // namespace pipesim::cli
