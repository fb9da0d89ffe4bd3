// Megatron-LM's interleaved schedule (Narayanan et al., SC'21, §2.2.2): the pipeline bubble
// is (1/v)·(p−1)/m of the ideal computation time.
#include <cmath>

#include <fmt/format.h>

#include "report.hpp"

namespace pipesim::reproduce {

int megatron_interleaved(const Context& context) {
    auto rows = run_grid(context, "baseline.json");
    for (const sweep::Result& r : run_grid(context, "grid.json"))
        rows.push_back(r);
    std::string out =
        "# Interleaved 1F1B: Megatron-LM's bubble formula (Narayanan et al., SC'21)\n\n";
    out += generated_note("`baseline.json` (v = 1) and `grid.json`");
    out +=
        "§2.2.2 of the paper: with v model chunks per device the bubble time fraction (bubble "
        "over ideal computation time) is `(1/v)·(p−1)/m`. pipesim reports idle over span `r`; "
        "the paper's fraction is `r/(1−r)`. F = B = W = 1 per full stage, no communication; "
        "m is a multiple of p, as Megatron-LM requires with its default group size.\n\n";
    Table t({"p", "m", "v", "pipesim r/(1−r)", "(p−1)/(v·m)", "difference"});
    int mismatches = 0;
    for (const sweep::Result& r : rows) {
        if (r.status != sweep::Status::ok) continue;
        const double ours = r.bubble_rate / (1 - r.bubble_rate);
        const double formula = (r.job.p - 1.0) / (r.chunks * static_cast<double>(r.job.m));
        if (std::abs(ours - formula) > 5e-5) ++mismatches;
        t.add({std::to_string(r.job.p), std::to_string(r.job.m), std::to_string(r.chunks),
               fixed(ours, 4), fixed(formula, 4), fixed(ours - formula, 4)});
    }
    out += t.markdown();
    out += fmt::format("\n{} of {} rows differ from the formula at 4 decimals.\n", mismatches,
                       rows.size());
    write_report(context, out);
    return 0;
}

}  // namespace pipesim::reproduce
