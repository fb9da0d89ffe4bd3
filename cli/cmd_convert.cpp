// pipesim convert IN -o OUT: schedule files between pipesim JSON and PyTorch pipelining CSV.
#include <array>
#include <optional>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "pipeline_flags.hpp"
#include "report.hpp"
#include "schedules/placement.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* convert_help = R"(usage: pipesim convert IN -o OUT

Reads the schedule in IN and writes it to OUT, each in the format its extension names:
.json (pipesim schedule JSON) or .csv (PyTorch pipelining CSV, compute-only on output).
The schedule is validated on the way. PyTorch's B is pipesim's BW, I is B, W is W.
IN '-' reads standard input (JSON or CSV, told by the content); OUT '-' writes standard
output, in the format --format names.

)";

struct ConvertOutput {
    std::string file;
    std::string format;  ///< for a file without an extension or `-`
};

using ConvertFlag = FlagSpec<ConvertOutput>;

const std::array convert_flags = {
    ConvertFlag{"-o", "--output", "OUT",
                "file to write (replaced whole, or left untouched on error)",
                [](ConvertOutput& o, const std::string&, const std::string& v) { o.file = v; }},
    ConvertFlag{"", "--format", "NAME",
                "json or csv: the format of OUT when it is '-' or has no extension",
                [](ConvertOutput& o, const std::string&, const std::string& v) { o.format = v; }},
};

}  // namespace

int run_convert(const std::vector<std::string>& args) {
    std::string input;
    ConvertOutput output;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (read_flag(convert_flags, flag, reader, output)) {
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}{}", convert_help, flags_help(convert_flags));
            return 0;
        } else if (flag.size() > 1 && flag[0] == '-') {  // '-' alone: standard input
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
    if (output.file.empty()) throw UsageError("missing -o OUT: the file to write");
    const bool named_format = !fileio::file_extension(output.file).empty();
    if (!named_format && output.format.empty())
        throw UsageError(
            fmt::format("-o {}: no extension to tell the format by; add --format json|csv",
                        quote_arg(output.file)));
    if (!named_format && !is_schedule_file_format(output.format))
        throw UsageError(fmt::format("--format {}: expected json or csv for -o {}",
                                     quote_arg(output.format), quote_arg(output.file)));
    if (named_format && !output.format.empty())
        throw UsageError(fmt::format("--format {}: -o {} takes its format from its extension",
                                     quote_arg(output.format), quote_arg(output.file)));

    // The phases on a terminal: reading and writing a large file take seconds.
    std::optional<PhaseLine> phases(std::in_place, "convert", large_input_file(input));
    if (reporting_phases()) report_phase(fmt::format("reading {}", input));
    const Schedule schedule = read_schedule_file(input);
    const auto saved = prepare_schedule_save(schedule, output.file, output.format);
    phases.reset();
    PipelineFlags::write_save(saved, "convert");
    if (fileio::is_standard_stream(output.file)) return 0;  // the schedule is the output
    fmt::print("{}: {} p={} m={} v={} ({} placement, {} ops)\n", output.file, schedule.name,
               schedule.devices, schedule.microbatches, schedule.chunks,
               placement_name(classify_placement(schedule.stage_device, schedule.devices)),
               schedule.op_count());
    return 0;
}

}  // namespace pipesim::cli
