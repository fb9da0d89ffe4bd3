#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "html_flag.hpp"
#include "html_output.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* analyze_usage = R"(usage: pipesim analyze -s NAME -p P -m M [options]
       pipesim analyze --schedule-file FILE [options]

)";

}  // namespace

int run_analyze(const std::vector<std::string>& args) {
    PipelineFlags pipeline(/*layout_without_model=*/false);
    bool json = false;
    bool kernels = false;
    GradReduceFlags grad_reduce;
    viz::VizOutputs viz_outputs;
    std::string html;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "--json") {
            json = true;
        } else if (flag == "--kernels") {
            kernels = true;
        } else if (pipeline.read(flag, reader) ||
                   read_grad_reduce_flag(flag, reader, grad_reduce)) {
        } else if (read_viz_flag(flag, reader, viz_outputs) || read_html_flag(flag, reader, html)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print(
                "{}{}  --json                print one JSON object instead of the "
                "table\n  --kernels             with --model: one layer's kernels, each with its "
                "work,\n                        bound and time (operator rooflines), then the "
                "first and last\n                        stage's extra ones\n\n{}{}\n{}{}",
                analyze_usage, schedule_flags_help(), model_flags_help(), grad_reduce_flags_help(),
                viz_flags_help, html_flag_help);
            return 0;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim analyze --help')", quote_arg(flag)));
        }
    }
    pipeline.finish();
    const bool report =
        check_run_outputs(viz_outputs, json, pipeline.save_file(), pipeline.input_files());
    check_html_flag(html, viz_outputs, pipeline.save_file(), pipeline.input_files());
    pipeline.check_save(viz_outputs.format_without_extension);
    check_picture_ops(pipeline.spec(), !viz_outputs.timeline_picture.empty() || !html.empty(),
                      viz_outputs.picture.max_ops);

    const analysis::PipelineSpec& spec = pipeline.spec();
    check_grad_reduce_flag(grad_reduce, spec);
    if (kernels && !(spec.costs.model && analysis::uses_operator_model(*spec.costs.model)))
        throw UsageError(
            "--kernels shows the operator-level model's kernels: give --model, --gpu and --mb, "
            "without --calibration or --efficiency");
    analysis::AnalyticEngine engine = analytic_engine_for(viz_outputs, !html.empty());
    engine.output_bytes_per_op += pipeline.save_bytes_per_op();
    engine.overlap_grad_reduce = grad_reduce.overlap;
    engine.overlap_param_gather = grad_reduce.overlap_param_gather;
    engine.post_validation = grad_reduce.post_validation;
    // The phases on a terminal, the outputs' included: drawing a large timeline takes seconds.
    std::optional<PhaseLine> phases(
        std::in_place, "analyze", spec, true,
        viz_outputs.any() || !html.empty() || !pipeline.save_file().empty());
    const analysis::Analysis result = analysis::run_with_baseline(spec, engine);
    describe_run(viz_outputs.picture, result);
    // The saved schedule and the pictures first: they may still refuse (DualPipe as CSV, a
    // dependency graph too large to draw), and then no file is written.
    const auto saved = pipeline.prepare_save(result.schedule, viz_outputs.format_without_extension);
    const std::string html_text =
        html.empty() ? std::string()
                     : single_html("analyze", command_line("analyze", args), spec, result);
    const std::string gantt = viz::write_outputs(result.timeline, result.memory, viz_outputs);
    if (!html.empty()) fileio::write_file_atomically(html, html_text);
    phases.reset();
    PipelineFlags::write_save(saved, "analyze");
    // Warnings once every output is written: an output that fails is then the one line.
    print_warnings(result, "analyze");
    if (!report) return 0;  // a file went to standard output
    if (json) {
        nlohmann::ordered_json j = analysis_json(result, spec);
        if (kernels)
            j["layer_kernels"] = analysis::layer_kernels_json(layer_kernels(*result.model));
        fmt::print("{}\n", analysis::json_text(j, 2));
    } else {
        fmt::print("{}", analysis_table(result, spec));
        if (kernels) fmt::print("{}", kernel_table(layer_kernels(*result.model), *result.model));
    }
    if (!gantt.empty()) fmt::print("\n{}", gantt);
    return 0;
}

}  // namespace pipesim::cli
