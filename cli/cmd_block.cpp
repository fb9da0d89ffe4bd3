// pipesim block: a schedule from a building-block file, its metrics and lifespan bound.
#include <array>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "html_output.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "schedules/block_json.hpp"
#include "schedules/schedule_file.hpp"
#include "sim/memory_budget.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* block_usage = R"(usage: pipesim block BLOCK.json -m M [options]

Repeats the building block in BLOCK.json (see docs/block-format.md) for M microbatches,
squeezes out idle slots, replays the schedule and reports its metrics and, per device, the
lifespan bound sum(ceil(l_s/T) * M_B(s)) next to the measured peak activation.

)";

struct BlockCommand {
    std::string file;
    int microbatches = 0;
    bool have_m = false;
    bool reorder = false;
    bool fill = false;
    bool json = false;
    std::string save;         ///< --save: the schedule built, as analyze --save writes it
    viz::VizOutputs outputs;  ///< --timeline, --trace, --save-timeline, --gantt, ...
    analysis::PipelineSpec spec;
};

using BlockFlag = FlagSpec<BlockCommand>;

const std::array shape_flags = {
    BlockFlag{"-m", "--microbatches", "M", "microbatches (a multiple of the block's group)",
              [](BlockCommand& c, const std::string& f, const std::string& v) {
                  c.microbatches = parse_int(f, v, 1, bounds::max_microbatches);
                  c.have_m = true;
              }},
};

const std::array order_flags = {
    BlockFlag{"", "--reorder", "", "reorder warm-up and cool-down (never raises peak memory)",
              [](BlockCommand& c, const std::string&, const std::string&) { c.reorder = true; }},
    BlockFlag{"", "--fill", "",
              "instead, fill idle warm-up and cool-down slots with later ops of each\n"
              "device's order, within the lifespan bound (what v-zb does)",
              [](BlockCommand& c, const std::string&, const std::string&) { c.fill = true; }},
    BlockFlag{"", "--json", "", "print one JSON object instead of the table",
              [](BlockCommand& c, const std::string&, const std::string&) { c.json = true; }},
    BlockFlag{"", "--save", "FILE",
              "write the schedule built (.json or PyTorch .csv, docs/schedule-format.md;\n"
              "'-' for standard output with --format), for analyze --schedule-file",
              [](BlockCommand& c, const std::string&, const std::string& v) { c.save = v; }},
};

BlockCommand parse_block_args(const std::vector<std::string>& args, bool& help) {
    BlockCommand c;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (read_flag(shape_flags, flag, reader, c) || read_cost_flag(flag, reader, c.spec) ||
            read_flag(order_flags, flag, reader, c) || read_viz_flag(flag, reader, c.outputs)) {
        } else if (flag == "-h" || flag == "--help") {
            help = true;
            return c;
        } else if (flag.size() > 1 && flag[0] == '-') {  // '-' alone: standard input
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim block --help')", quote_arg(flag)));
        } else if (c.file.empty()) {
            c.file = flag;
        } else {
            throw UsageError(fmt::format("one block file only, got {} and {}", quote_arg(c.file),
                                         quote_arg(flag)));
        }
    }
    if (c.file.empty()) throw UsageError("missing BLOCK.json (see 'pipesim block --help')");
    if (!c.have_m) throw UsageError("missing -m M (number of microbatches)");
    if (c.reorder && c.fill)
        throw UsageError("--reorder and --fill are alternatives: give one of them");
    return c;
}

// The makespan of the block repeated and squeezed, unfilled, under `c`'s pass times (its
// spec before the schedule is given, so nothing is copied). The fill chooses in the block's
// slot lengths; under other pass times its order can run longer (zb-h1-p4 at m 12, --costs
// 2,1,1: 55 against 54), which is said, not undone: --fill asked for that order.
double unfilled_makespan(const BuildingBlock& block, const BlockCommand& c) {
    analysis::PipelineSpec plain = c.spec;
    plain.given = schedule_from_block(block, c.microbatches,
                                      BlockScheduleOptions{.reorder = false, .fill_idle = false});
    analysis::AnalyticEngine lean;
    lean.record_ops = false;
    lean.record_transfers = false;
    return analysis::run(plain, lean).metrics.makespan;
}

}  // namespace

int run_block(const std::vector<std::string>& args) {
    bool help = false;
    BlockCommand c = parse_block_args(args, help);
    if (help) {
        fmt::print("{}{}{}{}\n{}", block_usage, flags_help(shape_flags), cost_flags_help(),
                   flags_help(order_flags), viz_flags_help);
        return 0;
    }
    const bool report = check_run_outputs(c.outputs, c.json, c.save);
    const BuildingBlock block = read_block_file(c.file);
    // Refused before the schedule is built: its ops and the replay's state per pass
    // (-m 1,048,576 of a 4,096-device block once ran until the kernel killed it).
    analysis::AnalyticEngine engine = analytic_engine_for(c.outputs);
    sim::ReplayOptions records;
    records.record_ops = engine.record_ops;
    records.record_transfers = engine.record_transfers;
    const double ops = block_op_count(block, c.microbatches);
    if (!c.save.empty())
        engine.output_bytes_per_op += schedule_file_bytes_per_op(c.microbatches, block.stages());
    // And what laying the block out holds beside the schedule: a second order, and with --fill
    // the repeated block's timeline too (a 4,096-device ZB-H1 block at m 512, 6.3 million
    // ops: 278, 303 and 541 MB at the peak plain, reordered and filled, estimated 0.36, 0.36
    // and 0.56 GB; fewer devices fill in less: 4 devices, 1.6 million ops, 75 MB filled).
    const double layout_per_op =
        static_cast<double>(2 * sizeof(Op) + (c.fill ? sizeof(TimedOp) : 0));
    sim::check_memory(
        sim::replay_peak_bytes(ops, static_cast<double>(block.stages()) * c.microbatches, records) +
            ops * (layout_per_op + engine.output_bytes_per_op),
        sim::memory_budget(),
        fmt::format("block '{}' repeated for {} microbatches ({:.0f} ops)", block.name,
                    c.microbatches, ops));
    // Replayed before the filled order exists: the two are never held at once.
    const double unfilled = c.fill ? unfilled_makespan(block, c) : 0;
    c.spec.given = schedule_from_block(
        block, c.microbatches, BlockScheduleOptions{.reorder = c.reorder, .fill_idle = c.fill});
    check_picture_ops(c.spec, !c.outputs.timeline_picture.empty(), c.outputs.picture.max_ops);
    std::optional<PhaseLine> phases(std::in_place, "block", c.spec, true,
                                    c.outputs.any() || !c.save.empty());
    analysis::Analysis result = analysis::run_with_baseline(c.spec, engine);
    if (const double makespan = result.metrics.makespan; c.fill && unfilled < makespan * (1 - 1e-9))
        result.warnings.push_back(fmt::format(
            "--fill: with these pass times the filled order runs {:.6g}, {:.1f} % longer than "
            "the block unfilled ({:.6g}): the fill chooses in the block's slot lengths",
            makespan, 100 * (makespan / unfilled - 1), unfilled));
    result.block = analysis::block_lifespans(block, result.metrics, result.memory, c.microbatches);
    const Lifespan life = block_lifespan(block, result.memory);
    // The saved schedule and the pictures first: they may still refuse (a block of two model
    // copies as CSV, a dependency graph too large to draw), and then no file is written.
    std::optional<PipelineFlags::PendingSave> saved;
    if (!c.save.empty())
        saved = prepare_schedule_save(
            result.schedule, c.save,
            fileio::file_extension(c.save).empty() ? c.outputs.format_without_extension : "");
    describe_run(c.outputs.picture, result);
    const std::string gantt = viz::write_outputs(result.timeline, result.memory, c.outputs);
    phases.reset();
    PipelineFlags::write_save(saved, "block");
    print_warnings(result, "block");
    if (!report) return 0;  // a file went to standard output
    if (c.json) {
        nlohmann::ordered_json j = analysis_json(result, c.spec);
        j["block"] = {{"name", block.name},
                      {"interval", block.interval},
                      {"group", block.group},
                      {"reorder", c.reorder},
                      {"fill", c.fill},
                      {"stage_lifespan", life.stage_lifespan},
                      {"stage_in_flight", life.stage_in_flight},
                      {"lifespan_bound", life.device_bound},
                      {"lifespan_bound_max", life.max_bound}};
        fmt::print("{}\n", analysis::json_text(j, 2));
        return 0;
    }
    fmt::print("{}", analysis_table(result, c.spec));
    fmt::print("\nblock '{}': interval T = {} slots, {} microbatch(es) per block{}\n", block.name,
               block.interval, block.group, c.fill ? ", filled" : (c.reorder ? ", reordered" : ""));
    fmt::print("{:>8}  {:>14}  {:>13}\n", "device", "lifespan bound", "measured peak");
    for (int d = 0; d < block.devices; ++d)
        fmt::print("{:>8}  {:>14.4g}  {:>13.4g}\n", d, life.device_bound[d],
                   result.metrics.devices[d].peak_activation);
    if (!gantt.empty()) fmt::print("\n{}", gantt);
    return 0;
}

}  // namespace pipesim::cli
