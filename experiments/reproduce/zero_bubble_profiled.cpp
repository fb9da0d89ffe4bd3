// Zero Bubble paper, Table 9 → Table 5: the six schedules replayed with the paper's profiled
// T_F, T_B, T_W and T_comm, against the bubble rates the paper computed from the same times.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "report.hpp"
#include "zb_paper.hpp"

namespace pipesim::reproduce {

namespace {

using sweep::Result;
using zb_paper::ProfiledRow;

// Interleaved 1F1B is run with these chunk counts, the paper's (layers + 2) / p among them.
constexpr int interleaved_chunks[] = {2, 3, 4};

// The jobs of every row and schedule, and where each landed: (row, schedule, v) → position.
struct Runs {
    std::vector<Result> rows;
    std::map<std::tuple<std::size_t, std::string, int>, std::size_t> at;

    const Result& get(std::size_t row, const std::string& schedule, int v = 0) const {
        return rows.at(at.at({row, schedule, v}));
    }
};

Runs run_profiled(const Context& context) {
    std::vector<sweep::Job> jobs;
    Runs runs;
    for (std::size_t i = 0; i < zb_paper::profiled.size(); ++i)
        for (const char* s : zb_paper::bubble_schedules) {
            const bool interleaved = std::string(s) == "interleaved-1f1b";
            for (int v : interleaved ? std::vector<int>(std::begin(interleaved_chunks),
                                                        std::end(interleaved_chunks))
                                     : std::vector<int>{0}) {
                runs.at[{i, s, v}] = jobs.size();
                jobs.push_back(zb_paper::profiled_job(zb_paper::profiled[i], s, v));
            }
        }
    runs.rows = run_checked(context, std::move(jobs), "Table 9 jobs");
    return runs;
}

// The chunks the column "1F1B-I" of Table 5 is compared with.
int chunks_used(const ProfiledRow& row) {
    return paper_chunks(zb_paper::setups[row.setup]);
}

std::string rate_or_status(const Result& r) {
    return r.status == sweep::Status::ok ? fixed(r.bubble_rate, 4)
                                         : std::string(status_name(r.status));
}

}  // namespace

std::string zero_bubble_profiled(const Context& context) {
    const Runs runs = run_profiled(context);
    const auto& rows = zb_paper::profiled;
    std::string out =
        "## Bubble rates from the paper's profiled times (Table 9 → Table 5)\n\n"
        "The paper's Appendix D (Table 9) lists T_F, T_B, T_W of one stage and T_comm, in ms, "
        "profiled in its ZB-2p runs of the four models (Table 3); its Table 5 gives the bubble "
        "rates of six schedules computed from those times: cost = the largest per-stage "
        "execution time, rate = (cost − m(T_F+T_B+T_W))/cost. pipesim replays each registered "
        "schedule with the same times (`--costs T_F,T_B,T_W --comm T_comm`: uniform stages, "
        "T_comm on every cross-device dependency). Its `bubble_rate` is the largest over "
        "devices of idle time over the device's active span, which is the paper's rate when "
        "every device does the same work, as here. A cell matches when it agrees at the "
        "published precision (|difference| < 5e-5). 1F1B-I uses v = (layers + 2)/p chunks "
        "per device (see below).\n\n";

    Table summary({"schedule", "cells matching Table 5 (of 12)", "largest absolute difference",
                   "mean difference"});
    Table cells({"schedule", "model", "p", "m", "pipesim", "Table 5", "difference"});
    std::map<std::string, int> matches;
    for (std::size_t k = 0; k < zb_paper::bubble_schedules.size(); ++k) {
        const std::string s = zb_paper::bubble_schedules[k];
        double largest = 0, sum = 0;
        int n = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const ProfiledRow& row = rows[i];
            const Result& r = runs.get(i, s, s == "interleaved-1f1b" ? chunks_used(row) : 0);
            const double published = row.bubble[k];
            const auto& setup = zb_paper::setups[row.setup];
            std::string diff = "—";
            if (r.status == sweep::Status::ok) {
                const double d = r.bubble_rate - published;
                if (std::abs(d) < 5e-5) ++matches[s];
                largest = std::max(largest, std::abs(d));
                sum += d;
                ++n;
                diff = signed_fixed(d, 4);
            }
            cells.add({zb_paper::bubble_labels[k], setup.label, std::to_string(setup.p),
                       std::to_string(row.m), rate_or_status(r), fixed(published, 4), diff});
        }
        summary.add({zb_paper::bubble_labels[k], std::to_string(matches[s]), fixed(largest, 4),
                     n > 0 ? signed_fixed(sum / n, 4) : "—"});
    }
    out += summary.markdown() + "\n" + cells.markdown();

    // How often pipesim's automatic schedules have the bubble of the handcrafted ones.
    auto same = [&](std::size_t i, const char* a, const char* b) {
        return std::abs(runs.get(i, a).bubble_rate - runs.get(i, b).bubble_rate) < 5e-5;
    };
    // The first row's ZB-2p once more, with W holding all of a B's activations.
    sweep::Job whole_w = zb_paper::profiled_job(rows[0], "zb-2p", 0);
    whole_w.mem_w_ratio = 1;
    const Result whole = run_checked(context, {whole_w}, "ZB-2p with M_W = M_B").front();
    const auto& first_setup = zb_paper::setups[rows[0].setup];
    int zb1p_as_h1 = 0, zb2p_as_h2 = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        zb1p_as_h1 += same(i, "zb-1p", "zb-h1") ? 1 : 0;
        zb2p_as_h2 += same(i, "zb-2p", "zb-h2") ? 1 : 0;
    }
    out += fmt::format(
        "\n1F1B, ZB-H1 and ZB-H2 are fixed orders whose bubble the times alone decide. ZB-1p and "
        "ZB-2p are automatic: pipesim plans them as the paper's heuristic does, with the "
        "profiled T_F, T_B, T_W and T_comm and with a W holding half of a B's activations "
        "(`--mem-w-ratio 0.5`, the share the paper's scheduler counts; see "
        "docs/automatic-schedules.md), under caps of p and 2p microbatches. ZB-2p matches "
        "Table 5 in {} of 12 rows. ZB-1p has ZB-H1's bubble in every row of Table 5 and in {} "
        "of 12 rows here; ZB-2p has ZB-H2's in {} of 12 rows here. With W holding all of a B's "
        "activations (`--mem-w-ratio 1`, pipesim's conservative default) the 2p cap leaves "
        "less room to defer W's, and ZB-2p idles more ({}, m {}: {:.2f} % instead of "
        "{:.2f} %). The paper refines its schedules with an ILP, which pipesim does not have; "
        "on these settings the heuristic alone gives the published rates.\n\n",
        matches["zb-2p"], zb1p_as_h1, zb2p_as_h2, first_setup.label, rows[0].m,
        100 * whole.bubble_rate, 100 * runs.get(0, "zb-2p").bubble_rate);

    out +=
        "### Interleaved 1F1B: which v\n\n"
        "The paper: \"For interleaved 1F1B ... we always use the maximum number of chunks ... "
        "each transformer layer serves as a chunk\", and its first and last stages hold one "
        "layer fewer than the others (Table 3), so a device holds (layers + 2)/p chunks: 3 "
        "(1.5B: 22 layers, p 8), 4 (6.2B: 30, 8), 3 (14.6B: 46, 16), 2 (28.3B: 62, 32). "
        "pipesim splits one stage's T_F, T_B, T_W evenly over the v chunks and pays T_comm on "
        "every transfer between chunks (all of them cross devices in the looped placement). "
        "The table gives pipesim's rate for v = 2, 3, 4 and, for the v used, how much longer "
        "pipesim's iteration is than the one Table 5 implies (m(T_F+T_B+T_W)/(1 − rate)), in "
        "units of p·T_comm and of one chunk's forward time T_F/v.\n\n";
    Table inter({"model", "p", "m", "T_comm", "Table 5", "v = 2", "v = 3", "v = 4", "v used",
                 "gap / (p·T_comm)", "gap / (T_F/v)"});
    double gap_lo = INFINITY, gap_hi = -INFINITY;
    int closest = 0;  // rows where the v used is the closest of interleaved_chunks
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const ProfiledRow& row = rows[i];
        const auto& setup = zb_paper::setups[row.setup];
        const int v = chunks_used(row);
        std::vector<std::string> line = {setup.label, std::to_string(setup.p),
                                         std::to_string(row.m), fmt::format("{:.3f}", row.comm),
                                         fixed(row.bubble[1], 4)};
        const Result& r = runs.get(i, "interleaved-1f1b", v);
        bool best = true;
        for (int c : interleaved_chunks) {
            const Result& x = runs.get(i, "interleaved-1f1b", c);
            line.push_back(rate_or_status(x));
            if (std::abs(x.bubble_rate - row.bubble[1]) < std::abs(r.bubble_rate - row.bubble[1]))
                best = false;
        }
        closest += best ? 1 : 0;
        line.push_back(std::to_string(v));
        const double implied = row.m * (row.f + row.b + row.w) / (1 - row.bubble[1]);
        const double gap = r.makespan - implied;
        const double in_comm = gap / (setup.p * row.comm);
        gap_lo = std::min(gap_lo, in_comm);
        gap_hi = std::max(gap_hi, in_comm);
        line.push_back(fixed(in_comm, 2));
        line.push_back(fixed(gap / (row.f / v), 2));
        inter.add(line);
    }
    out += inter.markdown();
    out += fmt::format(
        "\nOf v = 2, 3, 4, v = (layers + 2)/p is the closest to Table 5 in {} of 12 rows ({} of "
        "12 cells match at 4 decimals; differences in the first table). pipesim's rate is "
        "slightly above the published one, and the gap is the same in all twelve rows when "
        "counted in "
        "communications: pipesim's iteration is {:.2f}–{:.2f} × p·T_comm longer (the spread "
        "is the rounding of the published 4-decimal rate), while in chunk forward times it "
        "varies with the model and T_comm. So the chunk count and the even split of the stage "
        "times are those of the paper; what differs is how many transfers lie on the critical "
        "path: the paper's computation of the interleaved schedule puts p fewer T_comm on it "
        "than pipesim's, which charges T_comm on every dependency between devices. Uneven "
        "chunks (a lighter embedding-only or head-only chunk, which pipesim takes as "
        "per-virtual-stage `--costs F,B,W:F,B,W:...`) are not needed to explain it: the gap "
        "follows T_comm, not the chunk time, and with a light chunk pipesim's worst-device "
        "rate would measure the lightly loaded first device rather than the paper's cost.\n\n",
        closest, matches["interleaved-1f1b"], gap_lo, gap_hi);
    return out;
}

}  // namespace pipesim::reproduce
