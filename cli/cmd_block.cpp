// pipesim block: a schedule from a building-block file, its metrics and lifespan bound.
#include <cstdio>

#include <fmt/format.h>

#include "analysis/run.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "schedules/block_json.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* block_help = R"(usage: pipesim block BLOCK.json -m M [options]

Repeats the building block in BLOCK.json (see docs/block-format.md) for M microbatches,
squeezes out idle slots, replays the schedule and reports its metrics and, per device, the
lifespan bound sum(ceil(l_s/T) * M_B(s)) next to the measured peak activation.

  -m, --microbatches M  microbatches (a multiple of the block's group)
  --costs F,B,W         pass times of one full stage, split evenly over the chunks
                        (default 1,1,1); or p·v triples F,B,W:F,B,W:... one per virtual stage
  --comm C              latency of every cross-device dependency (default 0)
  --mem-w-ratio R       share of a stage's activations held from B until W, 0..1 (default 1)
  --reorder             reorder warm-up and cool-down (never raises peak memory)
  --fill                instead, fill idle warm-up and cool-down slots with later ops of each
                        device's order, within the lifespan bound (what v-zb does)
  --json                print one JSON object instead of the table
)";

struct BlockCommand {
    std::string file;
    int microbatches = 0;
    bool reorder = false;
    bool fill = false;
    bool json = false;
    analysis::PipelineSpec spec;
};

BlockCommand parse_block_args(const std::vector<std::string>& args, bool& help) {
    BlockCommand c;
    bool have_m = false;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "-m" || flag == "--microbatches") {
            c.microbatches = parse_int(flag, reader.value(flag), 1, bounds::max_microbatches);
            have_m = true;
        } else if (read_cost_flag(flag, reader, c.spec)) {
        } else if (flag == "--reorder") {
            c.reorder = true;
        } else if (flag == "--fill") {
            c.fill = true;
        } else if (flag == "--json") {
            c.json = true;
        } else if (flag == "-h" || flag == "--help") {
            help = true;
            return c;
        } else if (!flag.empty() && flag[0] == '-') {
            throw UsageError(fmt::format("unknown option '{}' (see 'pipesim block --help')", flag));
        } else if (c.file.empty()) {
            c.file = flag;
        } else {
            throw UsageError(fmt::format("one block file only, got '{}' and '{}'", c.file, flag));
        }
    }
    if (c.file.empty()) throw UsageError("missing BLOCK.json (see 'pipesim block --help')");
    if (!have_m) throw UsageError("missing -m M (number of microbatches)");
    return c;
}

}  // namespace

int run_block(const std::vector<std::string>& args) {
    bool help = false;
    BlockCommand c = parse_block_args(args, help);
    if (help) {
        fmt::print("{}", block_help);
        return 0;
    }
    const BuildingBlock block = read_block_file(c.file);
    c.spec.given = schedule_from_block(
        block, c.microbatches, BlockScheduleOptions{.reorder = c.reorder, .fill_idle = c.fill});
    const analysis::Analysis result = analysis::run(c.spec);
    const Lifespan life = block_lifespan(block, result.memory);
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
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    fmt::print("{}", analysis_table(result, c.spec));
    fmt::print("\nblock '{}': interval T = {} slots, {} microbatch(es) per block{}\n", block.name,
               block.interval, block.group, c.fill ? ", filled" : (c.reorder ? ", reordered" : ""));
    fmt::print("{:>8}  {:>14}  {:>13}\n", "device", "lifespan bound", "measured peak");
    for (int d = 0; d < block.devices; ++d)
        fmt::print("{:>8}  {:>14.4g}  {:>13.4g}\n", d, life.device_bound[d],
                   result.metrics.devices[d].peak_activation);
    return 0;
}

}  // namespace pipesim::cli
