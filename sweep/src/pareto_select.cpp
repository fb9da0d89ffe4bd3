#include "sweep/pareto_select.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pipesim::sweep {

namespace {

// Columns whose values define the problem a row solves; a front compares rows of one problem.
// With a model the problem is the batch trained on as many GPUs: p and m (with mb, tp, dp and
// cp) are layout choices, and "sequences per iteration" (m·mb·dp, no column) must agree.
constexpr const char* problem_columns[] = {"engine", "model", "gpu",  "cluster",    "p",
                                           "m",      "costs", "comm", "mem_w_ratio"};
constexpr const char* model_problem_columns[] = {"engine",  "model",        "gpu",
                                                 "cluster", "global_batch", "gpus"};
// Not a results column: m·mb·dp, the sequences a row trains on per iteration (a grid's
// global_batch), offered to --where and --group-by after the CSV's columns.
constexpr const char* global_batch_column = "global_batch";
// Choices within one problem, shown in a front point's label when they vary.
constexpr const char* choice_columns[] = {"p",
                                          "m",
                                          "v",
                                          "mb",
                                          "tp",
                                          "dp",
                                          "recompute",
                                          "attention",
                                          "cp",
                                          "zero",
                                          "tp_comm_overlap",
                                          "overlap_grad_reduce",
                                          "overlap_param_gather",
                                          "post_validation",
                                          "overlap_p2p_communication",
                                          "first_stage_layers",
                                          "last_stage_layers",
                                          "nccl_algo",
                                          "mem_limit"};

std::size_t column_index(const std::string& flag, const std::string& column) {
    static const std::vector<std::string> header = [] {
        std::vector<std::string> columns = split_csv_line(csv_header()).value();
        columns.emplace_back(global_batch_column);
        return columns;
    }();
    const auto it = std::find(header.begin(), header.end(), column);
    if (it == header.end())
        throw std::invalid_argument(fmt::format("{}: no column '{}'", flag, column));
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

// A cell as the messages and group names show it: an empty one (no cluster on an analytic
// row, no model) as "(empty)" rather than nothing.
std::string shown_value(const std::string& cell) {
    return cell.empty() ? "(empty)" : cell;
}

// "c=v, d=w" for `columns` of a row.
std::string describe(const PlottedRow& row, const std::vector<std::string>& columns) {
    std::string out;
    for (const std::string& c : columns)
        out += fmt::format("{}{}={}", out.empty() ? "" : ", ", c,
                           shown_value(row.fields[column_index("--group-by", c)]));
    return out;
}

// Refuses rows of different problems in one group, naming the columns that differ.
void check_comparable(const RowGroups& groups) {
    const bool model = !groups.begin()->second.front().result->job.model.empty();
    std::vector<std::string> columns;
    if (model)
        columns.assign(std::begin(model_problem_columns), std::end(model_problem_columns));
    else
        columns.assign(std::begin(problem_columns), std::end(problem_columns));
    std::string differ;
    std::string in_group;  // with --group-by, the group of the first column that differs
    for (const std::string& column : columns) {
        const std::size_t c = column_index("pareto", column);
        std::vector<std::string> values;
        std::string group;
        for (const auto& [key, rows] : groups) {
            std::vector<std::string> here;
            for (const PlottedRow& r : rows)  // an empty cell named, not left out
                if (const std::string value = shown_value(r.fields[c]);
                    std::find(here.begin(), here.end(), value) == here.end())
                    here.push_back(value);
            if (here.size() > values.size()) values = here, group = key;
        }
        if (values.size() < 2) continue;
        if (differ.empty()) in_group = group;
        if (values.size() > 3) {
            values.resize(3);
            values.push_back("...");
        }
        differ += fmt::format("{}{} ({})", differ.empty() ? "" : ", ", column, joined(values));
    }
    if (!differ.empty())
        throw std::invalid_argument(
            in_group.empty()
                ? fmt::format("the rows differ in {}: pick one with --where COLUMN=VALUE or give "
                              "each its own front with --group-by COLUMNS",
                              differ)
                : fmt::format("the rows of the group {} differ in {}: pick one with --where "
                              "COLUMN=VALUE or add the column to --group-by",
                              in_group, differ));
}

// How `metric` is shown: byte columns in the largest binary unit below `largest` (with a
// model), the bubble rate in per cent.
ShownColumn shown(Metric metric, bool model, double largest) {
    switch (metric) {
        case Metric::peak_memory:
        case Metric::peak_activation: {
            ShownColumn s{
                metric == Metric::peak_memory ? "peak memory per GPU" : "peak activation memory",
                model ? "B" : "activation units", 1};
            if (!model) return s;
            for (const char* unit : {"KiB", "MiB", "GiB", "TiB"}) {
                if (largest < 1024 * s.divide) break;
                s.divide *= 1024;
                s.unit = unit;
            }
            return s;
        }
        case Metric::throughput:
            return {"throughput", model ? "microbatches/s" : "microbatches per time unit", 1};
        case Metric::samples_per_gpu:
            return {"samples per second per GPU", "samples/s", 1};
        case Metric::bubble_rate:
            return {"bubble rate", "%", 0.01};
        case Metric::makespan:
            return {"makespan", model ? "s" : "time units", 1};
    }
    return {};
}

}  // namespace

// A choice column's value: v as run (the CSV's v is 0 for "the schedule's default").
std::string choice_value(const PlottedRow& row, const std::string& column) {
    if (column == "v") return std::to_string(row.result->chunks);
    return row.fields[column_index("pareto", column)];
}

// The choice columns (not grouped by) whose values differ among the plotted rows.
std::vector<std::string> varying_choices(const ParetoSelection& s) {
    std::vector<std::string> out;
    for (const char* column : choice_columns) {
        if (std::find(s.group_by.begin(), s.group_by.end(), column) != s.group_by.end()) continue;
        std::string first;
        bool varies = false, seen = false;
        for (const auto& [key, rows] : s.groups)
            for (const PlottedRow& r : rows) {
                varies = varies || (seen && choice_value(r, column) != first);
                if (!seen) first = choice_value(r, column);
                seen = true;
            }
        if (varies) out.push_back(column);
    }
    return out;
}

// Keeps the ok rows matching every --where, groups them and picks the columns and units.
ParetoSelection select_rows(const std::string& source, const std::vector<Result>& results,
                            const std::vector<std::string>& conditions, const std::string& group_by,
                            const std::string& x_name, const std::string& y_name) {
    std::vector<std::pair<std::size_t, std::string>> wanted;
    for (const std::string& c : conditions) {
        const auto eq = c.find('=');
        if (eq == std::string::npos)
            throw std::invalid_argument(fmt::format("--where: expected COLUMN=VALUE, got '{}'", c));
        wanted.emplace_back(column_index("--where", c.substr(0, eq)), c.substr(eq + 1));
    }
    ParetoSelection s;
    if (!group_by.empty()) s.group_by = split_list(group_by);
    for (const std::string& c : s.group_by) {
        (void)column_index("--group-by", c);
        if (std::count(s.group_by.begin(), s.group_by.end(), c) > 1)
            throw std::invalid_argument(
                fmt::format("--group-by: column '{}' is given twice: name each column once", c));
    }
    // Per condition, the values the ok rows have in its column: what to say if none is kept.
    std::vector<std::set<std::string>> seen(wanted.size());
    bool any_ok = false;
    for (const Result& r : results) {
        if (r.status != Status::ok) continue;
        any_ok = true;
        PlottedRow row{&r, split_csv_line(csv_row(r)).value()};
        row.fields.push_back(std::to_string(static_cast<long long>(r.job.m) * r.job.mb * r.job.dp));
        for (std::size_t k = 0; k < wanted.size(); ++k)
            seen[k].insert(row.fields[wanted[k].first]);
        if (std::all_of(wanted.begin(), wanted.end(),
                        [&](const auto& w) { return row.fields[w.first] == w.second; }))
            s.groups[describe(row, s.group_by)].push_back(std::move(row));
    }
    if (!any_ok) {
        // Each status the rows have, with its count, in the order of Status.
        std::string statuses;
        for (const Status status : {Status::over_memory, Status::infeasible, Status::error}) {
            const auto count = std::count_if(results.begin(), results.end(),
                                             [&](const Result& r) { return r.status == status; });
            if (count > 0)
                statuses += fmt::format("{} {} {}", statuses.empty() ? ":" : ",", count,
                                        status_name(status));
        }
        throw std::invalid_argument(fmt::format("{}: no row with status ok to plot ({} row{}{})",
                                                source, results.size(),
                                                results.size() == 1 ? "" : "s", statuses));
    }
    if (s.groups.empty()) {
        for (std::size_t k = 0; k < wanted.size(); ++k) {
            if (seen[k].count(wanted[k].second) != 0) continue;
            constexpr std::size_t listed = 8;
            std::vector<std::string> values(seen[k].begin(), seen[k].end());
            // Numbers in numeric order (8 before 16), then the rest as text.
            std::stable_sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
                char* end_a = nullptr;
                char* end_b = nullptr;
                const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
                const bool na = !a.empty() && *end_a == '\0', nb = !b.empty() && *end_b == '\0';
                if (na != nb) return na;
                return na ? x < y : a < b;
            });
            const std::size_t more = values.size() > listed ? values.size() - listed : 0;
            values.resize(std::min(values.size(), listed));
            std::transform(values.begin(), values.end(), values.begin(), shown_value);
            throw std::invalid_argument(fmt::format(
                "--where {}: no row with status ok has {} '{}'; they have {}{}", conditions[k],
                conditions[k].substr(0, conditions[k].find('=')), wanted[k].second,
                fmt::join(values, ", "), more ? fmt::format(" and {} more", more) : ""));
        }
        throw std::invalid_argument(
            fmt::format("--where {}: no row with status ok matches all of these together",
                        fmt::join(conditions, " --where ")));
    }
    check_comparable(s.groups);
    const bool model = !s.groups.begin()->second.front().result->job.model.empty();
    for (const auto& [key, rows] : s.groups)
        for (const PlottedRow& r : rows)
            if (r.result->job.model.empty() == model)  // i.e. has a model ≠ the first row
                throw std::invalid_argument(
                    "rows with and without a model measure in different units: pick one with "
                    "--where model=NAME");
    try {
        s.options.x = !x_name.empty() ? parse_metric(x_name)
                                      : (model ? Metric::peak_memory : Metric::peak_activation);
        s.options.y = !y_name.empty() ? parse_metric(y_name)
                                      : (model ? Metric::samples_per_gpu : Metric::throughput);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(fmt::format("--x/--y: {}", e.what()));
    }
    if (s.options.x == s.options.y)
        throw std::invalid_argument(fmt::format(
            "--x/--y: both are {}: a front needs two different columns", metric_name(s.options.x)));
    // Without a model there are no bytes or samples: those columns are 0 on every row.
    for (const Metric metric : {s.options.x, s.options.y})
        if (!model && (metric == Metric::peak_memory || metric == Metric::samples_per_gpu))
            throw std::invalid_argument(fmt::format(
                "--x/--y: {} needs results with a model (--model in the grid); these rows have "
                "none: use peak_activation, throughput, bubble_rate or makespan",
                metric_name(metric)));
    double largest_x = 0, largest_y = 0;
    for (const auto& [key, rows] : s.groups)
        for (const PlottedRow& r : rows) {
            largest_x = std::max(largest_x, std::abs(metric_value(*r.result, s.options.x)));
            largest_y = std::max(largest_y, std::abs(metric_value(*r.result, s.options.y)));
        }
    s.x = shown(s.options.x, model, largest_x);
    s.y = shown(s.options.y, model, largest_y);
    return s;
}

}  // namespace pipesim::sweep
