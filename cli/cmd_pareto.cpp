// pipesim pareto: the Pareto front of a sweep's results, printed and drawn as a viz scatter plot.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "args.hpp"
#include "commands.hpp"
#include "fileio/files.hpp"
#include "sweep/pareto.hpp"
#include "sweep/pareto_select.hpp"
#include "viz/image_format.hpp"
#include "viz/render.hpp"
#include "viz/scatter_plot.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* pareto_usage =
    R"(usage: pipesim pareto RESULTS.csv -o FILE.svg|.png|.pdf|.dot [options]

Plots peak memory against throughput (or another pair of columns) for the rows with status
ok, marks the Pareto front (no other row has both less memory and more throughput) and prints
the front as a table, in the plot's units. Rows of different problems (engine, model, gpu,
cluster, p, m, costs, comm, mem_w_ratio) are not ranked against each other: pick one with
--where or give each its own front with --group-by.

  -o, --output FILE     picture; the format follows the extension ('-': standard output,
                        in the --format given, without the printed front)
  --format NAME         svg, png, pdf or dot: the format of -o '-' or of a name without one
  --x COLUMN            peak_memory (default with a model), peak_activation (default
                        without), or any --y column
  --y COLUMN            samples_per_s_per_gpu (default with a model), throughput (default
                        without), bubble_rate, makespan, or a memory column; each column is
                        ranked its own way (memory, bubble and makespan lower is better)
  --where COL=VALUE     keep only rows whose parameter column COL is VALUE (e.g. p=8,
                        model=zb-1.5b); repeatable
  --group-by COLUMNS    one series and one front per value of these columns (comma-separated,
                        e.g. p,m)
  --title TEXT          the picture's title (default: the file name and the --where
                        conditions)
)";

std::string point_label(const sweep::PlottedRow& row, const std::vector<std::string>& varying) {
    std::string out = row.result->job.schedule;
    for (const std::string& c : varying)
        out += fmt::format(" {}={}", c, sweep::choice_value(row, c));
    return out;
}

// A group's rows as results and the positions of its Pareto front among them.
struct Front {
    std::vector<sweep::Result> results;
    std::vector<std::size_t> front;
};

Front front_of(const std::vector<sweep::PlottedRow>& rows, const sweep::ParetoOptions& options) {
    Front f;
    for (const sweep::PlottedRow& r : rows)
        f.results.push_back(*r.result);
    f.front = sweep::pareto_front(f.results, options);
    return f;
}

std::string arrow(sweep::Metric metric) {
    return sweep::higher_is_better(metric) ? "higher is better" : "lower is better";
}

viz::DataPoint at(const sweep::ParetoSelection& s, const sweep::Result& r) {
    return {sweep::metric_value(r, s.options.x) / s.x.divide,
            sweep::metric_value(r, s.options.y) / s.y.divide};
}

// The plot: without --group-by one series per schedule and one front; with it one series
// and one front per group, in the series' colour.
viz::ScatterPlot make_plot(const sweep::ParetoSelection& s, const std::string& title) {
    viz::ScatterPlot plot;
    plot.title = title;
    plot.x = {s.x.title, s.x.unit, arrow(s.options.x)};
    plot.y = {s.y.title, s.y.unit, arrow(s.options.y)};
    const bool grouped = !s.group_by.empty();
    plot.legend_title = grouped ? fmt::format("{}", fmt::join(s.group_by, ", ")) : "schedule";
    const std::vector<std::string> varying = sweep::varying_choices(s);
    std::map<std::string, std::size_t> series_of;  // schedule → series, without groups
    for (const auto& [key, rows] : s.groups) {
        const auto [results, front] = front_of(rows, s.options);
        if (grouped) plot.series.push_back({key, {}});
        plot.lines.push_back({grouped ? "" : "Pareto front",
                              grouped ? static_cast<int>(plot.series.size() - 1) : -1,
                              {}});
        for (std::size_t i : front)
            plot.lines.back().vertices.push_back(at(s, results[i]));
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const sweep::Result& r = results[i];
            std::size_t series = plot.series.size() - 1;
            if (!grouped) {
                const auto [it, added] = series_of.emplace(r.job.schedule, series_of.size());
                if (added) plot.series.push_back({r.job.schedule, {}});
                series = it->second;
            }
            const bool on_front = std::find(front.begin(), front.end(), i) != front.end();
            const viz::DataPoint p = at(s, r);
            plot.series[series].points.push_back(
                {p, on_front ? point_label(rows[i], varying) : "",
                 fmt::format("job {}: {} p={} m={} v={}: {:.6g} {}, {:.6g} {}{}", r.job.index,
                             r.job.schedule, r.job.p, r.job.m, r.chunks, p.x, s.x.unit, p.y,
                             s.y.unit, on_front ? " (Pareto front)" : "")});
        }
    }
    if (grouped) {
        // Said only of the lines drawn: where every group's front was one point, the legend
        // promised lines that were not there.
        const auto single = static_cast<std::size_t>(
            std::count_if(plot.lines.begin(), plot.lines.end(),
                          [](const viz::ScatterLine& l) { return l.vertices.size() < 2; }));
        if (single == plot.lines.size())
            plot.notes.push_back("each group's Pareto front is a single point (no lines)");
        else if (single > 0)
            plot.notes.push_back(
                fmt::format("lines: the Pareto front of each ({} of {} are a single point)", single,
                            plot.lines.size()));
        else
            plot.notes.push_back("lines: the Pareto front of each");
    }
    return plot;
}

void print_front(const sweep::ParetoSelection& s) {
    fmt::print("Pareto front ({} in {}, {}; {} in {}, {}):\n", sweep::metric_name(s.options.x),
               s.x.unit, arrow(s.options.x), sweep::metric_name(s.options.y), s.y.unit,
               arrow(s.options.y));
    // The choices that vary besides p, m and v (mb, tp, ...), as the plot's labels name them.
    std::vector<std::string> varying = sweep::varying_choices(s);
    std::erase_if(varying, [](const std::string& c) { return c == "p" || c == "m" || c == "v"; });
    for (const auto& [key, rows] : s.groups) {
        if (!s.group_by.empty()) fmt::print("{}:\n", key);
        const auto [results, front] = front_of(rows, s.options);
        for (std::size_t i : front) {
            const sweep::Result& r = results[i];
            const viz::DataPoint p = at(s, r);
            std::string choices;
            for (const std::string& c : varying)
                choices += fmt::format("{}={:<3} ", c, sweep::choice_value(rows[i], c));
            fmt::print(
                "  job {:>5}  {:<18} p={:<4} m={:<5} v={:<2}  {}{} {:.6g} {}  {} {:.6g} {}\n",
                r.job.index, r.job.schedule, r.job.p, r.job.m, r.chunks, choices,
                sweep::metric_name(s.options.x), p.x, s.x.unit, sweep::metric_name(s.options.y),
                p.y, s.y.unit);
        }
    }
}

}  // namespace

int run_pareto(const std::vector<std::string>& args) {
    std::string input, output, format, title, x_name, y_name, group_by;
    std::vector<std::string> conditions;
    ArgReader reader(args);
    reader.allow_repeats({"--where"});
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "-o" || flag == "--output") {
            reader.claim_once("--output", flag);
            output = reader.value(flag);
        } else if (flag == "--format") {
            reader.claim_once("--format", flag);
            format = reader.value(flag);
        } else if (flag == "--x") {
            reader.claim_once("--x", flag);
            x_name = reader.value(flag);
        } else if (flag == "--y") {
            reader.claim_once("--y", flag);
            y_name = reader.value(flag);
        } else if (flag == "--where") {
            conditions.push_back(reader.value(flag));
        } else if (flag == "--group-by") {
            reader.claim_once("--group-by", flag);
            group_by = reader.value(flag);
        } else if (flag == "--title") {
            reader.claim_once("--title", flag);
            title = reader.value(flag);
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}", pareto_usage);
            return 0;
        } else if (flag.size() > 1 && flag[0] == '-') {  // '-' alone: standard input
            throw UsageError(
                fmt::format("unknown option {} (see 'pipesim pareto --help')", quote_arg(flag)));
        } else if (input.empty()) {
            input = flag;
        } else {
            throw UsageError(fmt::format("one results file only, got {} and {}", quote_arg(input),
                                         quote_arg(flag)));
        }
    }
    if (input.empty()) throw UsageError("missing RESULTS.csv (see 'pipesim pareto --help')");
    if (output.empty()) throw UsageError("missing -o FILE.svg|.png|.pdf|.dot");
    // --format names the format of '-' or of a name without an extension (it was ignored,
    // even an unknown one, beside an extension).
    if (!format.empty() && !fileio::file_extension(output).empty())
        throw UsageError(fmt::format("--format {}: -o {} takes its format from its extension",
                                     quote_arg(format), quote_arg(output)));
    (void)viz::image_format_for_path(output, format);  // an unknown format before any work
    // A row given twice (files joined by hand) is one point: it was drawn and listed twice.
    std::vector<sweep::Result> results;
    std::set<std::string> rows_seen;
    for (sweep::Result& row : sweep::load_results(input).rows)
        if (rows_seen.insert(sweep::csv_row(row)).second) results.push_back(std::move(row));
    const sweep::ParetoSelection s =
        sweep::select_rows(input, results, conditions, group_by, x_name, y_name);
    // By default the file and the rows kept: "r.csv, gpus=16, p=8".
    if (title.empty())
        title =
            conditions.empty() ? input : fmt::format("{}, {}", input, fmt::join(conditions, ", "));
    viz::write_picture(output, viz::scatter_plot_dot(make_plot(s, title)), format);
    if (!fileio::is_standard_stream(output)) print_front(s);
    return 0;
}

}  // namespace pipesim::cli
