// pipesim convert IN -o OUT: schedule files between pipesim JSON and PyTorch pipelining CSV.
#include <array>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "flag_table.hpp"
#include "schedules/placement.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* convert_help = R"(usage: pipesim convert IN -o OUT

Reads the schedule in IN and writes it to OUT, each in the format its extension names:
.json (pipesim schedule JSON) or .csv (PyTorch pipelining CSV, compute-only on output).
The schedule is validated on the way. PyTorch's B is pipesim's BW, I is B, W is W.

)";

using ConvertFlag = FlagSpec<std::string>;

const std::array convert_flags = {
    ConvertFlag{"-o", "--output", "OUT",
                "file to write (replaced whole, or left untouched on error)",
                [](std::string& output, const std::string&, const std::string& v) { output = v; }},
};

}  // namespace

int run_convert(const std::vector<std::string>& args) {
    std::string input, output;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (read_flag(convert_flags, flag, reader, output)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}", convert_help, flags_help(convert_flags));
            return 0;
        } else if (!flag.empty() && flag[0] == '-') {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim convert --help')", quote_arg(flag)));
        } else if (input.empty()) {
            input = flag;
        } else {
            throw UsageError(fmt::format("one input file only, got {} and {}", quote_arg(input),
                                         quote_arg(flag)));
        }
    }
    if (input.empty()) throw UsageError("missing IN: the schedule file to convert");
    if (output.empty()) throw UsageError("missing -o OUT: the file to write");

    const Schedule schedule = read_schedule_file(input);
    write_schedule_file(schedule, output);
    fmt::print("{}: {} p={} m={} v={} ({} placement, {} ops)\n", output, schedule.name,
               schedule.devices, schedule.microbatches, schedule.chunks,
               placement_name(classify_placement(schedule.stage_device, schedule.devices)),
               schedule.op_count());
    return 0;
}

}  // namespace pipesim::cli
