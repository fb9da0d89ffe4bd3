#pragma once
// Helpers shared by the reproductions: run a grid, look rows up, write markdown.

#include <functional>
#include <string>
#include <vector>

#include "sweep/results.hpp"

namespace pipesim::reproduce {

/// Where a reproduction reads its grids and writes its report.
struct Context {
    std::string dir;  ///< experiments/<name>
    int workers = 2;
};

/// Runs experiments/<name>/<grid> and returns the rows in grid order.
std::vector<sweep::Result> run_grid(const Context& context, const std::string& grid);

/// Runs `jobs` (numbered here, in order) and returns the rows in that order. Throws
/// std::runtime_error naming `what` and the job if one fails (status error).
std::vector<sweep::Result> run_checked(const Context& context, std::vector<sweep::Job> jobs,
                                       const std::string& what);

/// The first row satisfying `match`; throws std::runtime_error naming `what` if none.
const sweep::Result& find_row(const std::vector<sweep::Result>& rows,
                              const std::function<bool(const sweep::Result&)>& match,
                              const std::string& what);

/// A markdown table built row by row.
class Table {
  public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::string markdown() const;

  private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

/// `x` with `digits` decimals.
std::string fixed(double x, int digits);
/// `x` with `digits` decimals and its sign ("+0.0012", "-0.0012"; "0.0000" when it rounds to 0).
std::string signed_fixed(double x, int digits);
/// `x` as a signed percentage with one decimal ("+12.3%").
std::string percent(double x);
/// The line every report starts with after its title.
std::string generated_note(const std::string& grids);
/// Writes the report (atomically).
void write_report(const Context& context, const std::string& text);

int zero_bubble(const Context& context);
/// The zero-bubble report's section on the paper's profiled times (its Tables 9 and 5).
std::string zero_bubble_profiled(const Context& context);
int controllable_memory(const Context& context);
int megatron_interleaved(const Context& context);
int dualpipe(const Context& context);
int throughput(const Context& context);
/// experiments/fidelity: predicted against published throughput (fidelity.cpp).
int fidelity_report(const Context& context);

}  // namespace pipesim::reproduce
