// End to end with SimGrid: the Zero Bubble paper's models on its cluster preset, samples per
// second per GPU, and the speed-ups of ZB-1p/ZB-2p over 1F1B against the paper's claims.
#include <algorithm>

#include <fmt/format.h>

#include "report.hpp"

namespace pipesim::reproduce {

int throughput(const Context& context) {
    using sweep::Result;
    std::vector<Result> rows = run_grid(context, "simgrid-p8.json");
    for (const Result& r : run_grid(context, "simgrid-p16.json"))
        rows.push_back(r);
    std::string out = "# End-to-end throughput on the Zero Bubble paper's cluster (SimGrid)\n\n";
    out += generated_note("`simgrid-p8.json` and `simgrid-p16.json`");
    out +=
        "The SimGrid engine runs each configuration on the `zb-a100-roce` preset (4 nodes × 8 "
        "A100 80GB, NVLink inside a node, RoCE between nodes; see docs/cluster-format.md for "
        "its assumptions), pipeline stages on consecutive GPUs, microbatch size 1, costs from "
        "pipesim's analytic FLOP model. Published figures used: the paper's abstract — ZB "
        "\"outperforms the 1F1B schedule up to 23% in throughput under a similar memory "
        "limit\" and up to 31% \"when the memory constraint is relaxed\" — i.e. ZB-1p's and "
        "ZB-2p's largest gains over 1F1B. The paper's per-configuration measured samples/s "
        "(its Table 4) were not retrieved for this report, so absolute throughput is not "
        "compared.\n\n";
    Table t({"model", "p", "m", "1F1B samples/s/GPU", "1F1B-I", "ZB-H1", "ZB-1p", "ZB-2p",
             "ZB-1p vs 1F1B", "ZB-2p vs 1F1B"});
    double best1 = 0, best2 = 0;
    for (const Result& first : rows) {
        if (first.job.schedule != "1f1b" || first.status != sweep::Status::ok) continue;
        auto get = [&](const char* s) -> const Result& {
            return find_row(
                rows,
                [&](const Result& x) {
                    return x.job.schedule == s && x.job.model == first.job.model &&
                           x.job.p == first.job.p && x.job.m == first.job.m;
                },
                s);
        };
        const double base = first.samples_per_second_per_gpu;
        const double g1 = get("zb-1p").samples_per_second_per_gpu / base - 1;
        const double g2 = get("zb-2p").samples_per_second_per_gpu / base - 1;
        best1 = std::max(best1, g1);
        best2 = std::max(best2, g2);
        std::vector<std::string> line = {first.job.model, std::to_string(first.job.p),
                                         std::to_string(first.job.m)};
        for (const char* s : {"1f1b", "interleaved-1f1b", "zb-h1", "zb-1p", "zb-2p"}) {
            const Result& r = get(s);
            line.push_back(r.status == sweep::Status::ok ? fixed(r.samples_per_second_per_gpu, 3)
                                                         : std::string(status_name(r.status)));
        }
        line.push_back(fmt::format("{:+.1f}%", 100 * g1));
        line.push_back(fmt::format("{:+.1f}%", 100 * g2));
        t.add(line);
    }
    out += t.markdown();
    out += fmt::format(
        "\nLargest gains here: ZB-1p {:+.1f}% (published: up to 23%), ZB-2p {:+.1f}% (published: "
        "up to 31%).\n\n"
        "Why they differ: the paper measures real kernels whose B and W times differ from the "
        "FLOP model (its W is cheaper than B), its communication overlaps differently, and it "
        "bypasses the optimizer-step synchronisation; pipesim simulates one iteration with the "
        "analytic costs and the preset's assumed NIC speed. The ordering of the schedules is "
        "the figure to trust, not the percentages.\n",
        100 * best1, 100 * best2);
    write_report(context, out);
    return 0;
}

}  // namespace pipesim::reproduce
