// pipesim pareto: the Pareto front of a sweep's results, printed and drawn as a viz scatter plot.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "sweep/pareto.hpp"
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

  -o, --output FILE     picture; the format follows the extension
  --x COLUMN            lower is better: peak_memory (default with a model), peak_activation
  --y COLUMN            samples_per_s_per_gpu (default with a model), throughput,
                        bubble_rate or makespan
  --where COL=VALUE     keep only rows whose parameter column COL is VALUE (e.g. p=8,
                        model=zb-1.5b); repeatable
  --group-by COLUMNS    one series and one front per value of these columns (comma-separated,
                        e.g. p,m)
  --title TEXT          the picture's title (default: the file name)
)";

// Columns whose values define the problem a row solves; a front compares rows of one problem.
constexpr const char* problem_columns[] = {"engine", "model", "gpu",  "cluster",    "p",
                                           "m",      "costs", "comm", "mem_w_ratio"};
// Choices within one problem, shown in a front point's label when they vary.
constexpr const char* choice_columns[] = {"v", "mb", "tp", "dp", "recompute"};

// A row and its CSV fields, for selecting and grouping by column name.
struct Row {
    const sweep::Result* result;
    std::vector<std::string> fields;
};

std::size_t column_index(const std::string& flag, const std::string& column) {
    static const std::vector<std::string> header =
        sweep::split_csv_line(sweep::csv_header()).value();
    const auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end()) throw UsageError(fmt::format("{}: no column '{}'", flag, column));
    return static_cast<std::size_t>(it - header.begin());
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "" : ", ") + item;
    return out;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at <= text.size();) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        out.push_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

// Orders "p=4, m=8" before "p=16, m=8": numbers compare as numbers, the rest as text.
struct NaturalLess {
    bool operator()(const std::string& a, const std::string& b) const {
        std::size_t i = 0, j = 0;
        while (i < a.size() && j < b.size()) {
            if (std::isdigit(static_cast<unsigned char>(a[i])) &&
                std::isdigit(static_cast<unsigned char>(b[j]))) {
                char* a_end = nullptr;
                char* b_end = nullptr;
                const double x = std::strtod(a.c_str() + i, &a_end);
                const double y = std::strtod(b.c_str() + j, &b_end);
                if (x != y) return x < y;
                i = static_cast<std::size_t>(a_end - a.c_str());
                j = static_cast<std::size_t>(b_end - b.c_str());
            } else if (a[i] != b[j]) {
                return a[i] < b[j];
            } else {
                ++i, ++j;
            }
        }
        if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
        return a < b;  // equal numbers written differently ("1", "1.0") stay apart
    }
};

// The plotted rows by group ("c=v, d=w" of the --group-by columns; "" without).
using Groups = std::map<std::string, std::vector<Row>, NaturalLess>;

// "c=v, d=w" for `columns` of a row.
std::string describe(const Row& row, const std::vector<std::string>& columns) {
    std::string out;
    for (const std::string& c : columns)
        out += fmt::format("{}{}={}", out.empty() ? "" : ", ", c,
                           row.fields[column_index("--group-by", c)]);
    return out;
}

// Refuses rows of different problems in one group, naming the columns that differ.
void check_comparable(const Groups& groups) {
    std::string differ;
    for (const char* column : problem_columns) {
        const std::size_t c = column_index("pareto", column);
        std::vector<std::string> values;
        for (const auto& [key, rows] : groups) {
            std::vector<std::string> here;
            for (const Row& r : rows)
                if (std::find(here.begin(), here.end(), r.fields[c]) == here.end())
                    here.push_back(r.fields[c]);
            if (here.size() > values.size()) values = here;
        }
        if (values.size() < 2) continue;
        if (values.size() > 3) {
            values.resize(3);
            values.push_back("...");
        }
        differ += fmt::format("{}{} ({})", differ.empty() ? "" : ", ", column, joined(values));
    }
    if (!differ.empty())
        throw UsageError(fmt::format(
            "the rows differ in {}: pick one with --where COLUMN=VALUE or give each its own "
            "front with --group-by COLUMNS",
            differ));
}

// How a column is shown: values are divided by `divide` and written in `unit`.
struct Shown {
    std::string title;
    std::string unit;
    double divide = 1;
};

Shown shown(sweep::Metric metric, bool model, double largest) {
    switch (metric) {
        case sweep::Metric::peak_memory:
        case sweep::Metric::peak_activation: {
            Shown s{metric == sweep::Metric::peak_memory ? "peak memory per GPU"
                                                         : "peak activation memory",
                    model ? "B" : "activation units", 1};
            if (!model) return s;
            for (const char* unit : {"KiB", "MiB", "GiB", "TiB"}) {
                if (largest < 1024 * s.divide) break;
                s.divide *= 1024;
                s.unit = unit;
            }
            return s;
        }
        case sweep::Metric::throughput:
            return {"throughput", model ? "microbatches/s" : "microbatches per time unit", 1};
        case sweep::Metric::samples_per_gpu:
            return {"samples per second per GPU", "samples/s", 1};
        case sweep::Metric::bubble_rate:
            return {"bubble rate", "%", 0.01};
        case sweep::Metric::makespan:
            return {"makespan", model ? "s" : "time units", 1};
    }
    return {};
}

// The plotted rows, their grouping and how the two columns are shown.
struct Selection {
    Groups groups;
    std::vector<std::string> group_by;
    sweep::ParetoOptions options;
    Shown x, y;
};

// A choice column's value: v as run (the CSV's v is 0 for "the schedule's default").
std::string choice(const Row& row, const std::string& column) {
    if (column == "v") return std::to_string(row.result->chunks);
    return row.fields[column_index("pareto", column)];
}

std::string point_label(const Row& row, const std::vector<std::string>& varying) {
    std::string out = row.result->job.schedule;
    for (const std::string& c : varying)
        out += fmt::format(" {}={}", c, choice(row, c));
    return out;
}

// A group's rows as results and the positions of its Pareto front among them.
struct Front {
    std::vector<sweep::Result> results;
    std::vector<std::size_t> front;
};

Front front_of(const std::vector<Row>& rows, const sweep::ParetoOptions& options) {
    Front f;
    for (const Row& r : rows)
        f.results.push_back(*r.result);
    f.front = sweep::pareto_front(f.results, options);
    return f;
}

// The choice columns (not grouped by) whose values differ among the plotted rows.
std::vector<std::string> varying_choices(const Selection& s) {
    std::vector<std::string> out;
    for (const char* column : choice_columns) {
        if (std::find(s.group_by.begin(), s.group_by.end(), column) != s.group_by.end()) continue;
        std::string first;
        bool varies = false, seen = false;
        for (const auto& [key, rows] : s.groups)
            for (const Row& r : rows) {
                varies = varies || (seen && choice(r, column) != first);
                if (!seen) first = choice(r, column);
                seen = true;
            }
        if (varies) out.push_back(column);
    }
    return out;
}

std::string arrow(sweep::Metric metric) {
    return sweep::higher_is_better(metric) ? "higher is better" : "lower is better";
}

viz::DataPoint at(const Selection& s, const sweep::Result& r) {
    return {sweep::metric_value(r, s.options.x) / s.x.divide,
            sweep::metric_value(r, s.options.y) / s.y.divide};
}

// The plot: without --group-by one series per schedule and one front; with it one series
// and one front per group, in the series' colour.
viz::ScatterPlot make_plot(const Selection& s, const std::string& title) {
    viz::ScatterPlot plot;
    plot.title = title;
    plot.x = {s.x.title, s.x.unit, arrow(s.options.x)};
    plot.y = {s.y.title, s.y.unit, arrow(s.options.y)};
    const bool grouped = !s.group_by.empty();
    plot.legend_title = grouped ? joined(s.group_by) : "schedule";
    const std::vector<std::string> varying = varying_choices(s);
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
    if (grouped) plot.notes.push_back("lines: the Pareto front of each");
    return plot;
}

void print_front(const Selection& s) {
    fmt::print("Pareto front ({} in {}, {}; {} in {}, {}):\n", sweep::metric_name(s.options.x),
               s.x.unit, arrow(s.options.x), sweep::metric_name(s.options.y), s.y.unit,
               arrow(s.options.y));
    for (const auto& [key, rows] : s.groups) {
        if (!s.group_by.empty()) fmt::print("{}:\n", key);
        const auto [results, front] = front_of(rows, s.options);
        for (std::size_t i : front) {
            const sweep::Result& r = results[i];
            const viz::DataPoint p = at(s, r);
            fmt::print("  job {:>5}  {:<18} p={:<4} m={:<5} v={:<2}  {} {:.6g} {}  {} {:.6g} {}\n",
                       r.job.index, r.job.schedule, r.job.p, r.job.m, r.chunks,
                       sweep::metric_name(s.options.x), p.x, s.x.unit,
                       sweep::metric_name(s.options.y), p.y, s.y.unit);
        }
    }
}

// Keeps the ok rows matching every --where, groups them and picks the columns and units.
Selection select(const std::vector<sweep::Result>& results,
                 const std::vector<std::string>& conditions, const std::string& group_by,
                 const std::string& x_name, const std::string& y_name) {
    std::vector<std::pair<std::size_t, std::string>> wanted;
    for (const std::string& c : conditions) {
        const auto eq = c.find('=');
        if (eq == std::string::npos)
            throw UsageError(fmt::format("--where: expected COLUMN=VALUE, got '{}'", c));
        wanted.emplace_back(column_index("--where", c.substr(0, eq)), c.substr(eq + 1));
    }
    Selection s;
    if (!group_by.empty()) s.group_by = split_list(group_by);
    for (const std::string& c : s.group_by)
        (void)column_index("--group-by", c);
    for (const sweep::Result& r : results) {
        if (r.status != sweep::Status::ok) continue;
        Row row{&r, sweep::split_csv_line(sweep::csv_row(r)).value()};
        if (std::all_of(wanted.begin(), wanted.end(),
                        [&](const auto& w) { return row.fields[w.first] == w.second; }))
            s.groups[describe(row, s.group_by)].push_back(std::move(row));
    }
    if (s.groups.empty()) throw UsageError("no row with status ok to plot");
    check_comparable(s.groups);
    const bool model = !s.groups.begin()->second.front().result->job.model.empty();
    for (const auto& [key, rows] : s.groups)
        for (const Row& r : rows)
            if (r.result->job.model.empty() == model)  // i.e. has a model ≠ the first row
                throw UsageError(
                    "rows with and without a model measure in different units: pick one with "
                    "--where model=NAME");
    try {
        s.options.x = !x_name.empty()
                          ? sweep::parse_metric(x_name)
                          : (model ? sweep::Metric::peak_memory : sweep::Metric::peak_activation);
        s.options.y = !y_name.empty()
                          ? sweep::parse_metric(y_name)
                          : (model ? sweep::Metric::samples_per_gpu : sweep::Metric::throughput);
    } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("--x/--y: {}", e.what()));
    }
    double largest_x = 0, largest_y = 0;
    for (const auto& [key, rows] : s.groups)
        for (const Row& r : rows) {
            largest_x = std::max(largest_x, std::abs(sweep::metric_value(*r.result, s.options.x)));
            largest_y = std::max(largest_y, std::abs(sweep::metric_value(*r.result, s.options.y)));
        }
    s.x = shown(s.options.x, model, largest_x);
    s.y = shown(s.options.y, model, largest_y);
    return s;
}

}  // namespace

int run_pareto(const std::vector<std::string>& args) {
    std::string input, output, title, x_name, y_name, group_by;
    std::vector<std::string> conditions;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "-o" || flag == "--output") {
            reader.claim_once("--output", flag);
            output = reader.value(flag);
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
        } else if (!flag.empty() && flag[0] == '-') {
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
    const std::vector<sweep::Result> results = sweep::load_results(input).rows;
    const Selection s = select(results, conditions, group_by, x_name, y_name);
    viz::write_picture(output, viz::scatter_plot_dot(make_plot(s, title.empty() ? input : title)));
    print_front(s);
    return 0;
}

}  // namespace pipesim::cli
