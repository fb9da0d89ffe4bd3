#pragma once
// Turns an analysis into the readable table (the JSON object is analysis_json()).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare.hpp"
#include "analysis/layer_kernels.hpp"
#include "analysis/phases.hpp"
#include "analysis/result_json.hpp"
#include "analysis/run.hpp"
#include "analysis/time_budget.hpp"

namespace pipesim::cli {

using analysis::analysis_json;  // the `--json` object (analysis/result_json.hpp)

/// Prints each of the analysis' warnings on stderr as "pipesim COMMAND: warning: ...".
void print_warnings(const analysis::Analysis& result, std::string_view command);

/// While it lives, on a terminal (stderr) and for a run of at least a million stage passes
/// (p·v·m; a second or more), one status line naming the phase under way ("pipesim analyze:
/// replaying zb-1p (50331648 ops)...", "... drawing the timeline (4194304 ops)..."), cleared
/// at the end.
class PhaseLine {
  public:
    /// `with_outputs`: the run writes pictures, traces or files, which take seconds from an
    /// eighth of that size on (a trace of 1.2 million ops: 3 s).
    PhaseLine(std::string_view command, const analysis::PipelineSpec& spec, bool enabled = true,
              bool with_outputs = false);
    /// For work whose size is told otherwise (a schedule file's bytes): shown when `large`.
    PhaseLine(std::string_view command, bool large);
    ~PhaseLine();
    PhaseLine(const PhaseLine&) = delete;
    PhaseLine& operator=(const PhaseLine&) = delete;

  private:
    bool shown_ = false;
    std::optional<analysis::ReportPhases> phases_;
};

/// Whether reading `path` is work a PhaseLine shows (a file of 16 MiB or more, about a
/// second's parsing); false for standard input and a file that cannot be read.
bool large_input_file(const std::string& path);

/// A readable summary with a per-device table.
std::string analysis_table(const analysis::Analysis& result, const analysis::PipelineSpec& spec);

/// A table as formatted cells: a title, a header, rows and notes under it.
struct TableCells {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> notes;
};
/// One layer's kernels: one row per kernel (pass, name, GEMM shape, GFLOP, MB, bound, rate, µs)
/// and notes (per-pass totals, recomputation, collectives).
TableCells kernel_cells(const analysis::LayerKernels& kernels,
                        const analysis::ModelAnalysis& model);
/// The first and the last stage's extra kernels (embedding; final norm, logits and loss), each
/// as a table with its per-pass totals.
std::vector<TableCells> stage_kernel_cells(const analysis::LayerKernels& kernels);

/// A cells table as text: its title, the first column left-aligned and the others
/// right-aligned to their widest cell, then its notes.
std::string aligned_table(const TableCells& cells);

/// Where the step goes in each compared schedule (CompareRow::step_shares): one row per
/// schedule; only a title and the schedule column without a model.
TableCells step_shares_cells(const std::vector<analysis::CompareRow>& rows);

/// Where the step goes: one row per device and one for all of them, each part's share of the
/// step time (analysis/time_budget.hpp); a note gives recomputation's share of the kernels.
TableCells time_budget_cells(const analysis::TimeBudget& budget);

/// One layer's kernels (`analyze --kernels`): one row per kernel with its GEMM shape, work,
/// bound and time, then the per-pass totals and the collectives.
std::string kernel_table(const analysis::LayerKernels& kernels,
                         const analysis::ModelAnalysis& model);

}  // namespace pipesim::cli
