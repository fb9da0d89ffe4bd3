#pragma once
// Choosing what a Pareto picture plots from sweep results: the ok rows that match conditions,
// grouped so that a front only ranks rows of one problem, with the plotted columns and the
// units they are shown in.

#include <map>
#include <string>
#include <vector>

#include "sweep/pareto.hpp"
#include "sweep/results.hpp"

namespace pipesim::sweep {

/// A results row and its CSV fields, then its global_batch (m·mb·dp, no CSV column), for
/// selecting and grouping by column name.
struct PlottedRow {
    const Result* result;
    std::vector<std::string> fields;
};

/// Orders "p=4, m=8" before "p=16, m=8": numbers compare as numbers, the rest as text.
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

/// The plotted rows by group ("c=v, d=w" of the --group-by columns; "" without).
using RowGroups = std::map<std::string, std::vector<PlottedRow>, NaturalLess>;

/// How a column is shown: values are divided by `divide` and written in `unit`.
struct ShownColumn {
    std::string title;
    std::string unit;
    double divide = 1;
};

/// The plotted rows, their grouping and how the two columns are shown.
struct ParetoSelection {
    RowGroups groups;
    std::vector<std::string> group_by;
    ParetoOptions options;
    ShownColumn x, y;
};

/// Keeps the ok rows of `results` that match every "COLUMN=VALUE" condition, groups them by
/// `group_by` (comma-separated columns; empty: one group), refuses rows of different problems
/// (engine, model, gpu, cluster, p, m, costs, comm, mem_w_ratio) in one group and rows with
/// and without a model, and picks the columns (`x_name`, `y_name`; empty: the defaults) and
/// their units. Throws std::invalid_argument with one line naming the flag (--where,
/// --group-by, --x/--y) or the columns that differ; `source` (the results file) names the
/// file that holds no finished row.
ParetoSelection select_rows(const std::string& source, const std::vector<Result>& results,
                            const std::vector<std::string>& conditions, const std::string& group_by,
                            const std::string& x_name, const std::string& y_name);

/// A choice column's value in `row` (v as run: the CSV's v is 0 for "the schedule's default").
std::string choice_value(const PlottedRow& row, const std::string& column);

/// The choice columns (v, mb, tp, dp, recompute, attention, ...) not grouped by whose values
/// differ among the selected rows: a front point's label names them.
std::vector<std::string> varying_choices(const ParetoSelection& selection);

}  // namespace pipesim::sweep
