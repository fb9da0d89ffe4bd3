// pipesim search: the lowest-bubble schedule under an activation-memory cap.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "analysis/device_cap.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "analysis/search.hpp"
#include "args.hpp"
#include "bounds.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "flag_table.hpp"
#include "models/byte_size.hpp"
#include "pipeline_flags.hpp"
#include "progress_flag.hpp"
#include "schedules/schedule_file.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

namespace {

// The best candidate's warnings, as analyze gives them (devices over their GPU's memory
// among them: a cap above the GPU's memory lets the best need more than the GPU holds).
void print_search_warnings(const analysis::Analysis& best) {
    for (const std::string& w : analysis::run_warnings(best))
        fmt::print(stderr, "pipesim search: warning: {}\n", w);
}

constexpr const char* search_usage = R"(usage: pipesim search -p P -m M --mem-limit X [options]

Builds every registered schedule (the V shapes planned with the costs), V-shape building
blocks of offsets 1..6, V-shape blocks and round-based schedules planned with the costs under
the cap, and the automatic scheduler under the cap (v = 1, 3 looped, v = 2 V-shape), replays
each with the costs and ranks them: those whose peak activation stays within X first, by
bubble rate (with a model: by iteration time), then peak (docs/automatic-schedules.md).
Above the ranking it shows what the cap's memory buys: the candidates within X that no
other beats in both bubble and peak, from the best down to the lowest peak (--json: front);
where the best alone is on that front (no lower peak within X), the table is left out.

--mem-limit X without a unit caps activations, in full-stage microbatches (M_B). With a unit
(B, KiB, MiB, GiB, TiB, KB, MB, GB, TB) and --model/--gpu/--mb it caps each whole device:
weights, optimizer state and peak activations, as 'pipesim analyze --model' counts them.

)";

struct SearchCommand {
    SearchOptions search;
    analysis::PipelineSpec spec;
    std::string save;
    std::string save_format;  ///< --format: for a --save file without an extension, or '-'
    bool json = false;
    bool have_p = false, have_m = false, have_cap = false;
    double cap_bytes = 0;          ///< --mem-limit with a unit: the whole device's memory
    bool post_validation = false;  ///< --post-validation
    bool unit_costs = false;
    sweep::ProgressStyle progress = sweep::ProgressStyle::automatic;
    PipelineFlags::State model_flags;
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
               "activation cap per device, in full-stage microbatches, > 0 (1F1B needs\n"
               "P); with a unit (e.g. 60GiB) and a model: each whole device's memory",
               [](SearchCommand& c, const std::string& f, const std::string& v) {
                   const std::optional<double> bytes =
                       parse_flag_value(f, v, models::parse_byte_size);
                   if (bytes)
                       c.cap_bytes = *bytes;
                   else
                       c.search.memory_limit = parse_positive(f, v);
                   c.have_cap = true;
               }},
    SearchFlag{
        "", "--post-validation", "",
        "time every candidate (and 1F1B) by its period with optimizer\n"
        "post-validation (docs/models.md, \"Optimizer post-validation\")",
        [](SearchCommand& c, const std::string&, const std::string&) { c.post_validation = true; }},
};

const std::array output_flags = {
    SearchFlag{"", "--save", "FILE",
               "write the best schedule to FILE (.json or .csv), e.g. for analyze\n"
               "--schedule-file FILE --timeline OUT.svg; '-' with --format: standard output",
               [](SearchCommand& c, const std::string&, const std::string& v) { c.save = v; }},
    SearchFlag{
        "", "--format", "NAME",
        "json or csv: the format of --save's file when it is '-' or has no extension",
        [](SearchCommand& c, const std::string&, const std::string& v) { c.save_format = v; }},
    SearchFlag{"", "--json", "", "print one JSON object instead of the table",
               [](SearchCommand& c, const std::string&, const std::string&) { c.json = true; }},
    SearchFlag{"", "--progress", "MODE",
               "on stderr, the candidate being built: auto (a redrawn line on a\n"
               "terminal without --json, nothing otherwise), bar (that line), lines\n"
               "(a line as a candidate starts 10 s or more after the last, for logs), none",
               [](SearchCommand& c, const std::string& f, const std::string& v) {
                   c.progress = parse_progress(f, v);
               }},
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
            c.unit_costs = c.unit_costs || flag == "--costs" || flag == "--mem-w-ratio";
        } else if (PipelineFlags::read_model_flag(flag, reader, c.model_flags)) {
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
    c.spec.costs.model = PipelineFlags::model_of(c.model_flags);
    c.spec.tp = c.model_flags.spec.tp;
    if (c.spec.costs.model) check_sharding_flags(*c.spec.costs.model, c.spec, /*with_dp=*/false);
    if (c.spec.costs.model && c.unit_costs)
        throw UsageError(
            "--costs and --mem-w-ratio cannot be combined with --model (the model gives the "
            "costs and memory)");
    if (c.cap_bytes > 0 && !c.spec.costs.model)
        throw UsageError(
            "--mem-limit with a unit caps a whole device: give --model NAME, --gpu NAME and "
            "--mb B (or a plain number, in full-stage microbatches)");
    if (c.cap_bytes == 0 && c.spec.costs.model)
        throw UsageError(
            "with --model, give --mem-limit with a unit (e.g. 60GiB): the cap of each whole "
            "device");
    if (c.model_flags.have_layout && !c.spec.costs.model)
        throw UsageError("-t sets the model's layout: give --model NAME, --gpu NAME and --mb B");
    if (!c.save.empty()) {
        viz::VizOutputs save_only;  // --save is the only file search writes
        save_only.format_without_extension = c.save_format;
        check_output_formats(save_only, c.save);
        check_output_files({{"--save", c.save}});
        if (fileio::is_standard_stream(c.save) && c.json)
            throw UsageError("--save - and --json both print to standard output");
    } else if (!c.save_format.empty()) {
        throw UsageError("--format names the format of --save's file: give --save too");
    }
    c.search.costs = c.spec.costs.passes.front();
    c.search.comm_latency = c.spec.comm_latency;
    c.search.mem_w_ratio = c.spec.costs.mem_w_ratio;
    return c;
}

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

using analysis::DeviceCap;

std::string cap_summary(const DeviceCap& cap, const std::string& label,
                        const analysis::Analysis& a) {
    const analysis::ModelAnalysis& model = *a.model;
    const double most = *std::max_element(model.total_bytes.begin(), model.total_bytes.end());
    // The best's own weights and optimizer state: the cap's (1F1B's split) read 20.13 GiB where
    // a V-shape best holds 20.54 on its first device.
    const double weights = *std::max_element(model.static_bytes.begin(), model.static_bytes.end());
    return fmt::format(
        "best within {:.4g} GiB per device: {} — {:.4g} GiB on its fullest device "
        "(weights+optimizer up to {:.4g} GiB)\n  {} {:.6g} s (with the optimizer step "
        "{:.6g} s), {:.6g} samples/s, {:.6g} tokens/s, bubble {:.2f} %\n",
        cap.bytes / gib, label, most / gib, weights / gib,
        a.post_validation ? "period" : "iteration", a.iteration_time, model.step_time,
        model.samples_per_second, model.tokens_per_second, 100 * a.metrics.bubble_rate);
}

}  // namespace

int run_search(const std::vector<std::string>& args) {
    bool help = false;
    SearchCommand c = parse_search_args(args, help);
    if (help) {
        fmt::print("{}{}{}{}\n{}", search_usage, flags_help(search_flags),
                   cost_flags_help(/*with_replay_options=*/true, /*one_triple=*/true),
                   flags_help(output_flags), model_flags_help(/*with_dp=*/false));
        return 0;
    }
    // Which candidate is being built and timed (p = m = 1024 takes minutes): a redrawn line
    // on a terminal, or for a log a line as a candidate starts 10 s or more after the last.
    using sweep::ProgressStyle;
    const bool lines = c.progress == ProgressStyle::lines;
    const bool show_progress =
        c.progress == ProgressStyle::bar ||
        (c.progress == ProgressStyle::automatic && !c.json && ::isatty(STDERR_FILENO));
    using clock = std::chrono::steady_clock;
    if (lines)
        c.search.progress = [started = clock::now(), last_line = clock::now()](
                                std::size_t done, std::size_t total,
                                const std::string& label) mutable {
            const clock::time_point now = clock::now();
            if (done == total || now - last_line < std::chrono::seconds(10)) return;
            last_line = now;
            fmt::print(stderr, "  search: {} ({} of {}), {:.0f} s so far\n", label, done + 1, total,
                       std::chrono::duration<double>(now - started).count());
        };
    else if (show_progress)
        c.search.progress = [](std::size_t done, std::size_t total, const std::string& label) {
            if (done < total)
                fmt::print(stderr, "\r\033[K  search: {} ({} of {})...", label, done + 1, total);
            else
                fmt::print(stderr, "\r\033[K");
        };
    const analysis::SearchReport report = [&] {
        try {
            return analysis::search_report(c.search, c.spec, c.cap_bytes, c.post_validation);
        } catch (...) {
            if (show_progress) fmt::print(stderr, "\r\033[K");
            throw;
        }
    }();
    const SearchResult& result = report.result;
    const std::optional<DeviceCap>& cap = report.cap;
    const analysis::Analysis& best = report.best;
    const analysis::Analysis& baseline = report.baseline;
    if (!c.save.empty()) {
        save_schedule("search", result.best, c.save,
                      fileio::file_extension(c.save).empty() ? c.save_format : "");
        if (fileio::is_standard_stream(c.save)) return 0;  // the schedule is the output
    }
    if (c.json) {
        fmt::print("{}\n", analysis::json_text(analysis::search_json(report), 2));
        print_search_warnings(best);
        return 0;
    }
    auto efficiency = [&](const SearchEntry& e) { return report.efficiency(e); };
    auto speedup = [&](const SearchEntry& e) { return report.speedup_1f1b(e); };
    auto peak = [&](const SearchEntry& e) { return report.peak(e); };
    const SearchEntry& top = result.ranking.front();
    // Each candidate's time: its iteration with a model, else its makespan, or its period with
    // post-validation.
    const char* time_label = cap ? (report.post_validation ? "period s" : "iter. s")
                             : report.post_validation ? "period"
                                                      : "makespan";
    if (cap)
        fmt::print("{}", cap_summary(*cap, top.label, best));
    else
        fmt::print("best within {:g}: {} — bubble {:.2f} %, {} {:g}, peak {:g}\n",
                   report.options.memory_limit, top.label, 100 * top.evaluation.bubble_rate,
                   time_label, top.evaluation.makespan, top.evaluation.peak_activation_max);
    fmt::print(
        "  efficiency {:.2f} %, {:.3f}× 1F1B's speed ({:.6g} {}), lifespan max {:.6g} {}\n\n",
        100 * efficiency(top), speedup(top), baseline.iteration_time, baseline.timeline.time_unit,
        best.metrics.lifespan_max, best.timeline.time_unit);
    if (result.front.size() > 1) {
        // What the cap's memory buys: the lower peaks and what each costs in bubble.
        fmt::print(
            "what memory buys within the cap (the candidates no other beats in both {} and "
            "peak):\n",
            report.options.rank_by_time ? "iteration time" : "bubble");
        fmt::print("  {:>8} {:>9} {:>10}  {}\n", cap ? "peak GiB" : "peak", "bubble %", time_label,
                   "candidate");
        for (std::size_t k : result.front) {
            const SearchEntry& e = result.ranking[k];
            fmt::print("  {:>8.4g} {:>9.2f} {:>10.4g}  {}\n", cap ? peak(e) / gib : peak(e),
                       100 * e.evaluation.bubble_rate, e.evaluation.makespan, e.label);
        }
        fmt::print("\n");
    }
    // The candidates' column as wide as its longest label ("interleaved-1f1b (v=3, group 8)"
    // pushed its row out of line at a fixed 28); fmt counts code points, as here.
    std::size_t label_width = 28;
    for (const SearchEntry& e : result.ranking)
        label_width = std::max<std::size_t>(
            label_width,
            static_cast<std::size_t>(std::count_if(e.label.begin(), e.label.end(), [](char byte) {
                return (static_cast<unsigned char>(byte) & 0xC0) != 0x80;
            })));
    fmt::print("{:<{}} {:<10} {:>9} {:>10} {:>7} {:>8} {:>8}  {}\n", "candidate", label_width,
               "kind", "bubble %", time_label, "effic.", "vs 1F1B", cap ? "peak GiB" : "peak",
               "fits");
    for (const SearchEntry& e : result.ranking)
        fmt::print("{:<{}} {:<10} {:>9.2f} {:>10.4g} {:>6.2f}% {:>7.3f}x {:>8.4g}  {}\n", e.label,
                   label_width, e.kind, 100 * e.evaluation.bubble_rate, e.evaluation.makespan,
                   100 * efficiency(e), speedup(e), cap ? peak(e) / gib : peak(e),
                   e.fits ? "yes" : "no");
    print_search_warnings(best);
    return 0;
}

}  // namespace pipesim::cli
