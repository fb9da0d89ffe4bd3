// pipesim search: the lowest-bubble schedule under an activation-memory cap.
#include <cstdio>

#include <array>

#include <fmt/format.h>

#include "analysis/search.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "flag_table.hpp"
#include "pipeline_flags.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* search_usage = R"(usage: pipesim search -p P -m M --mem-limit X [options]

Builds every registered schedule (the V shapes planned with the costs), V-shape building
blocks of offsets 1..6, V-shape blocks and round-based schedules planned with the costs under
the cap, and the automatic scheduler under the cap (v = 1, 3 looped, v = 2 V-shape), replays
each with the costs and ranks them: those whose peak activation stays within X first, by
bubble rate, then peak (docs/automatic-schedules.md).

)";

struct SearchCommand {
    SearchOptions search;
    analysis::PipelineSpec spec;
    std::string save;
    bool json = false;
    bool have_p = false, have_m = false, have_cap = false;
};

using SearchFlag = FlagSpec<SearchCommand>;

const std::array search_flags = {
    SearchFlag{"-p", "--stages", "P", "pipeline devices",
               [](SearchCommand& c, const std::string& f, const std::string& v) {
                   c.search.devices = parse_int(f, v, 1, bounds::max_devices);
                   c.have_p = true;
               }},
    SearchFlag{"-m", "--microbatches", "M", "microbatches per iteration",
               [](SearchCommand& c, const std::string& f, const std::string& v) {
                   c.search.microbatches = parse_int(f, v, 1, bounds::max_microbatches);
                   c.have_m = true;
               }},
    SearchFlag{"", "--mem-limit", "X",
               "activation cap per device, in full-stage microbatches, > 0 (1F1B needs P)",
               [](SearchCommand& c, const std::string& f, const std::string& v) {
                   c.search.memory_limit = parse_positive(f, v);
                   c.have_cap = true;
               }},
};

const std::array output_flags = {
    SearchFlag{"", "--save", "FILE",
               "write the best schedule to FILE (.json or .csv), e.g. for analyze\n"
               "--schedule-file FILE --timeline OUT.svg",
               [](SearchCommand& c, const std::string&, const std::string& v) { c.save = v; }},
    SearchFlag{"", "--json", "", "print one JSON object instead of the table",
               [](SearchCommand& c, const std::string&, const std::string&) { c.json = true; }},
};

SearchCommand parse_search_args(const std::vector<std::string>& args, bool& help) {
    SearchCommand c;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (read_flag(search_flags, flag, reader, c) || read_flag(output_flags, flag, reader, c)) {
        } else if (read_cost_flag(flag, reader, c.spec)) {
            if (flag == "--costs" && c.spec.costs.passes.size() != 1)
                throw UsageError(fmt::format("{}: search takes one triple F,B,W", flag));
        } else if (flag == "-h" || flag == "--help") {
            help = true;
            return c;
        } else {
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim search --help')", quote_arg(flag)));
        }
    }
    if (!c.have_p) throw UsageError("missing -p P (number of pipeline devices)");
    if (!c.have_m) throw UsageError("missing -m M (number of microbatches)");
    if (!c.have_cap) throw UsageError("missing --mem-limit X (activations per device)");
    c.search.costs = c.spec.costs.passes.front();
    c.search.comm_latency = c.spec.comm_latency;
    c.search.mem_w_ratio = c.spec.costs.mem_w_ratio;
    return c;
}

}  // namespace

int run_search(const std::vector<std::string>& args) {
    bool help = false;
    const SearchCommand c = parse_search_args(args, help);
    if (help) {
        fmt::print("{}{}{}{}", search_usage, flags_help(search_flags), cost_flags_help(),
                   flags_help(output_flags));
        return 0;
    }
    const SearchResult result = analysis::search(c.search);
    if (!c.save.empty()) write_schedule_file(result.best, c.save);
    if (c.json) {
        fmt::print("{}\n", analysis::search_json(result, c.search).dump(2));
        return 0;
    }
    const SearchEntry& best = result.ranking.front();
    fmt::print("best within {:g}: {} — bubble {:.2f} %, makespan {:g}, peak {:g}\n\n",
               c.search.memory_limit, best.label, 100 * best.evaluation.bubble_rate,
               best.evaluation.makespan, best.evaluation.peak_activation_max);
    fmt::print("{:<28} {:<10} {:>9} {:>10} {:>6}  {}\n", "candidate", "kind", "bubble %",
               "makespan", "peak", "fits");
    for (const SearchEntry& e : result.ranking)
        fmt::print("{:<28} {:<10} {:>9.2f} {:>10.4g} {:>6.4g}  {}\n", e.label, e.kind,
                   100 * e.evaluation.bubble_rate, e.evaluation.makespan,
                   e.evaluation.peak_activation_max, e.fits ? "yes" : "no");
    return 0;
}

}  // namespace pipesim::cli
