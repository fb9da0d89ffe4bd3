// pipesim pareto: the Pareto picture of a sweep's results.
#include <algorithm>

#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "sweep/pareto.hpp"
#include "viz/render.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* pareto_usage =
    R"(usage: pipesim pareto RESULTS.csv -o FILE.svg|.png|.pdf|.dot [options]

Plots peak memory against throughput (or another pair of columns) for the rows with status
ok, marks the Pareto front (no other row has both less memory and more throughput) and prints
the front as a table.

  -o, --output FILE     picture; the format follows the extension
  --x COLUMN            lower is better: peak_memory (default with a model), peak_activation
  --y COLUMN            samples_per_s_per_gpu (default with a model), throughput,
                        bubble_rate or makespan
  --where COL=VALUE     keep only rows whose parameter column COL is VALUE (e.g. p=8,
                        model=zb-1.5b); repeatable
  --title TEXT          the picture's title (default: the file name)
)";

// Keeps the rows whose parameter column `column` reads `value`.
std::vector<sweep::Result> filter(const std::vector<sweep::Result>& rows,
                                  const std::string& condition) {
    const auto eq = condition.find('=');
    if (eq == std::string::npos)
        throw UsageError(fmt::format("--where: expected COLUMN=VALUE, got '{}'", condition));
    const std::string column = condition.substr(0, eq), value = condition.substr(eq + 1);
    const auto header = sweep::split_csv_line(sweep::csv_header()).value();
    const auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end()) throw UsageError(fmt::format("--where: no column '{}'", column));
    const auto index = static_cast<std::size_t>(it - header.begin());
    std::vector<sweep::Result> out;
    for (const sweep::Result& r : rows)
        if (sweep::split_csv_line(sweep::csv_row(r)).value()[index] == value) out.push_back(r);
    return out;
}

}  // namespace

int run_pareto(const std::vector<std::string>& args) {
    std::string input, output, title;
    std::string x_name, y_name;
    std::vector<std::string> conditions;
    ArgReader reader(args);
    std::string flag;
    while (reader.next(flag)) {
        if (flag == "-o" || flag == "--output") {
            output = reader.value(flag);
        } else if (flag == "--x") {
            x_name = reader.value(flag);
        } else if (flag == "--y") {
            y_name = reader.value(flag);
        } else if (flag == "--where") {
            conditions.push_back(reader.value(flag));
        } else if (flag == "--title") {
            title = reader.value(flag);
        } else if (flag == "-h" || flag == "--help") {
            fmt::print("{}", pareto_usage);
            return 0;
        } else if (!flag.empty() && flag[0] == '-') {
            throw UsageError(
                fmt::format("unknown option '{}' (see 'pipesim pareto --help')", flag));
        } else if (input.empty()) {
            input = flag;
        } else {
            throw UsageError(fmt::format("one results file only, got '{}' and '{}'", input, flag));
        }
    }
    if (input.empty()) throw UsageError("missing RESULTS.csv (see 'pipesim pareto --help')");
    if (output.empty()) throw UsageError("missing -o FILE.svg|.png|.pdf|.dot");
    std::vector<sweep::Result> rows = sweep::load_results(input).rows;
    for (const std::string& c : conditions)
        rows = filter(rows, c);
    const bool model = std::any_of(rows.begin(), rows.end(), [](const sweep::Result& r) {
        return r.status == sweep::Status::ok && r.peak_memory > 0;
    });
    sweep::ParetoOptions options;
    try {
        options.x = !x_name.empty()
                        ? sweep::parse_metric(x_name)
                        : (model ? sweep::Metric::peak_memory : sweep::Metric::peak_activation);
        options.y = !y_name.empty()
                        ? sweep::parse_metric(y_name)
                        : (model ? sweep::Metric::samples_per_gpu : sweep::Metric::throughput);
    } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("--x/--y: {}", e.what()));
    }
    options.title = title.empty() ? input : title;
    viz::write_picture(output, sweep::pareto_dot(rows, options));

    fmt::print("Pareto front ({} lower, {} {}):\n", sweep::metric_name(options.x),
               sweep::metric_name(options.y),
               sweep::higher_is_better(options.y) ? "higher" : "lower");
    for (std::size_t i : sweep::pareto_front(rows, options)) {
        const sweep::Result& r = rows[i];
        fmt::print("  job {:>5}  {:<18} p={:<4} m={:<5} v={:<2}  {} {:.6g}  {} {:.6g}\n",
                   r.job.index, r.job.schedule, r.job.p, r.job.m, r.chunks,
                   sweep::metric_name(options.x), sweep::metric_value(r, options.x),
                   sweep::metric_name(options.y), sweep::metric_value(r, options.y));
    }
    return 0;
}

}  // namespace pipesim::cli
