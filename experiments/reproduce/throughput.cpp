// End to end with SimGrid: the Zero Bubble paper's four models (its Table 3) on its cluster
// preset, samples per second per GPU against its measured Table 4, the speed-ups of ZB-1p/ZB-2p
// over 1F1B against the published ones, and peak memory against Table 4's.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "analysis/run.hpp"
#include "report.hpp"
#include "sweep/job.hpp"
#include "zb_paper.hpp"

namespace pipesim::reproduce {

namespace {

using sweep::Result;
using zb_paper::MeasuredRow;

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// The SimGrid runs of every Table 4 row and schedule: (row, schedule index) → result.
struct Runs {
    std::vector<Result> rows;
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> at;

    const Result* get(std::size_t row, std::size_t schedule) const {
        const auto it = at.find({row, schedule});
        return it == at.end() ? nullptr : &rows[it->second];
    }
};

Runs run_measured(const Context& context) {
    std::vector<sweep::Job> jobs;
    Runs runs;
    for (std::size_t i = 0; i < zb_paper::measured.size(); ++i) {
        const auto& setup = zb_paper::setups[zb_paper::measured[i].setup];
        for (std::size_t k = 0; k < zb_paper::throughput_schedules.size(); ++k) {
            const std::string s = zb_paper::throughput_schedules[k];
            runs.at[{i, k}] = jobs.size();
            jobs.push_back(zb_paper::model_job(setup, zb_paper::measured[i].m, s,
                                               sweep::Engine::simgrid, zb_paper::Split::paper));
        }
    }
    runs.rows = run_checked(context, std::move(jobs), "SimGrid jobs");
    return runs;
}

bool ok(const Result* r) {
    return r != nullptr && r->status != sweep::Status::infeasible;
}

// pipesim's stage times for a setup: F, B, W (ms) of the stage with the largest F + B + W.
std::array<double, 3> model_stage_ms(const zb_paper::Setup& setup) {
    const sweep::Job job = zb_paper::model_job(setup, setup.p, "1f1b", sweep::Engine::analytic,
                                               zb_paper::Split::paper);
    const StageCosts c = analysis::prepare(sweep::pipeline_spec(job)).costs;
    std::size_t worst = 0;
    for (std::size_t s = 0; s < c.stages(); ++s)
        if (c.forward[s] + c.backward_input[s] + c.backward_weight[s] >
            c.forward[worst] + c.backward_input[worst] + c.backward_weight[worst])
            worst = s;
    return {1e3 * c.forward[worst], 1e3 * c.backward_input[worst], 1e3 * c.backward_weight[worst]};
}

// pipesim's stage times next to Table 9's (its first row per model, m = 3p), and the ranges
// of the ratios the explanation quotes.
struct StageTimes {
    std::string markdown;
    double total_lo = INFINITY, total_hi = 0;  ///< pipesim / Table 9, F + B + W
    double share_lo = INFINITY, share_hi = 0;  ///< pipesim's W / (F + B)
    double paper_share_lo = INFINITY, paper_share_hi = 0;
};

StageTimes stage_times() {
    StageTimes st;
    Table t({"model", "mb", "pipesim T_F, T_B, T_W (ms)", "Table 9 T_F, T_B, T_W (ms)",
             "pipesim W/(F+B)", "Table 9 W/(F+B)", "pipesim / Table 9 (F+B+W)"});
    for (std::size_t k = 0; k < zb_paper::setups.size(); ++k) {
        const auto& setup = zb_paper::setups[k];
        const auto& row = *std::find_if(zb_paper::profiled.begin(), zb_paper::profiled.end(),
                                        [&](const auto& r) { return r.setup == int(k); });
        const auto ms = model_stage_ms(setup);
        const double total = (ms[0] + ms[1] + ms[2]) / (row.f + row.b + row.w);
        st.total_lo = std::min(st.total_lo, total);
        st.total_hi = std::max(st.total_hi, total);
        const double share = ms[2] / (ms[0] + ms[1]), paper_share = row.w / (row.f + row.b);
        st.share_lo = std::min(st.share_lo, share);
        st.share_hi = std::max(st.share_hi, share);
        st.paper_share_lo = std::min(st.paper_share_lo, paper_share);
        st.paper_share_hi = std::max(st.paper_share_hi, paper_share);
        t.add({setup.label, std::to_string(setup.mb),
               fmt::format("{:.2f}, {:.2f}, {:.2f}", ms[0], ms[1], ms[2]),
               fmt::format("{:.2f}, {:.2f}, {:.2f}", row.f, row.b, row.w), fixed(share, 2),
               fixed(paper_share, 2), fixed(total, 2)});
    }
    st.markdown = t.markdown();
    return st;
}

}  // namespace

int throughput(const Context& context) {
    const Runs runs = run_measured(context);
    const auto& rows = zb_paper::measured;
    std::string out = "# End-to-end throughput on the Zero Bubble paper's cluster (SimGrid)\n\n";
    out += generated_note(
        "jobs built from the paper's published tables (`experiments/reproduce/zb_paper.hpp`)");
    out += fmt::format(
        "The SimGrid engine runs each configuration of the paper's Table 4 on the "
        "`zb-a100-roce` preset (4 nodes × 8 A100 80GB, NVLink inside a node, RoCE between "
        "nodes at an assumed 200 Gb/s per GPU; see docs/cluster-format.md), pipeline stages on "
        "consecutive GPUs, no data parallelism, with the paper's models and microbatch sizes "
        "(Table 3: 1.5B mb 6 and 6.2B mb 3 on 8 GPUs, 14.6B mb 1 on 16, 28.3B mb 1 on 32; "
        "sequence length 1024). **Cost model:** pipesim's operator-level model of each pass on "
        "an A100 (kernel rooflines on published rates, the unfused attention of Megatron-LM "
        "without FlashAttention; docs/models.md), not measured kernels; transfers are simulated "
        "over the preset's links. The layers are split as the paper's runs split them (its "
        "repository's --allow-padding-num-layers, as in the fidelity report): (layers + 2)/p "
        "per stage, one fewer on the first and last; interleaved 1F1B with (layers + 2)/p "
        "chunks per device ({}, {}, {}, {}), one layer per chunk, the first chunk only the "
        "embedding and the last only the head. "
        "ZB-1p and ZB-2p step as the paper's runs did, with its optimizer post-validation "
        "(§4; `--post-validation`): no pipeline-wide synchronization before the step, so "
        "iterations repeat with the longest device window as their period rather than the "
        "makespan; 1F1B and 1F1B-I step after a synchronization. "
        "Published figures: Table 4, samples per GPU per second measured on the paper's "
        "cluster, and its peak memory.\n\n",
        zb_paper::paper_chunks(zb_paper::setups[0]), zb_paper::paper_chunks(zb_paper::setups[1]),
        zb_paper::paper_chunks(zb_paper::setups[2]), zb_paper::paper_chunks(zb_paper::setups[3]));

    // Samples per GPU per second against Table 4.
    Table summary({"schedule", "rows", "min relative difference", "max relative difference"});
    Table cells({"schedule", "model", "p", "m", "mb", "pipesim samples/s/GPU", "Table 4",
                 "relative difference"});
    for (std::size_t k = 0; k < zb_paper::throughput_schedules.size(); ++k) {
        double lo = INFINITY, hi = -INFINITY;
        int n = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& setup = zb_paper::setups[rows[i].setup];
            const Result* r = runs.get(i, k);
            const double published = rows[i].samples_per_gpu[k];
            std::string ours = "not run", diff = "—";
            if (ok(r)) {
                const double d = r->samples_per_second_per_gpu / published - 1;
                lo = std::min(lo, d);
                hi = std::max(hi, d);
                ++n;
                ours = fixed(r->samples_per_second_per_gpu, 3);
                diff = percent(d);
            }
            cells.add({zb_paper::throughput_labels[k], setup.label, std::to_string(setup.p),
                       std::to_string(rows[i].m), std::to_string(setup.mb), ours,
                       fmt::format("{:g}", published), diff});
        }
        summary.add({zb_paper::throughput_labels[k], std::to_string(n), n > 0 ? percent(lo) : "—",
                     n > 0 ? percent(hi) : "—"});
    }
    out += "## Samples per GPU per second against Table 4\n\n" + summary.markdown() + "\n" +
           cells.markdown() + "\n";

    // Gains over 1F1B, both sides from their own 1F1B.
    out +=
        "## Speed-ups over 1F1B against the published ones\n\n"
        "Each side against its own 1F1B: pipesim's from its samples/s, the published ones "
        "computed from Table 4. (The abstract's \"up to 23%\" under a similar memory limit "
        "and \"up to 31%\" with it relaxed are the paper's headline figures; the largest "
        "gains in Table 4 are printed below the table.)\n\n";
    Table gains({"model", "p", "m", "1F1B-I pipesim", "1F1B-I Table 4", "ZB-1p pipesim",
                 "ZB-1p Table 4", "ZB-2p pipesim", "ZB-2p Table 4"});
    std::array<double, 4> best_ours{}, best_published{};
    int interleaved_rows = 0, interleaved_above = 0, zb1p_above = 0,
        zb2p_below = 0;  // rows, for the explanation
    // How far pipesim's 1F1B-I gain exceeds the published one, in points.
    double interleaved_excess_lo = INFINITY, interleaved_excess_hi = -INFINITY;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& setup = zb_paper::setups[rows[i].setup];
        std::vector<std::string> line = {setup.label, std::to_string(setup.p),
                                         std::to_string(rows[i].m)};
        const Result* base = runs.get(i, 0);
        for (std::size_t k = 1; k < zb_paper::throughput_schedules.size(); ++k) {
            const Result* r = runs.get(i, k);
            const double published = rows[i].samples_per_gpu[k] / rows[i].samples_per_gpu[0] - 1;
            best_published[k] = std::max(best_published[k], published);
            if (ok(r) && ok(base)) {
                const double g =
                    r->samples_per_second_per_gpu / base->samples_per_second_per_gpu - 1;
                best_ours[k] = std::max(best_ours[k], g);
                if (k == 1) {
                    ++interleaved_rows;
                    if (g > published) ++interleaved_above;
                    interleaved_excess_lo = std::min(interleaved_excess_lo, 100 * (g - published));
                    interleaved_excess_hi = std::max(interleaved_excess_hi, 100 * (g - published));
                }
                if (k == 2 && g > published) ++zb1p_above;
                if (k == 3 && g < published) ++zb2p_below;
                line.push_back(percent(g));
            } else {
                line.push_back("not run");
            }
            line.push_back(percent(published));
        }
        gains.add(line);
    }
    out += gains.markdown();
    out += fmt::format(
        "\nLargest gains: ZB-1p {} here, {} in Table 4; ZB-2p {} here, {} in Table 4.\n\n",
        percent(best_ours[2]), percent(best_published[2]), percent(best_ours[3]),
        percent(best_published[3]));

    // Peak memory against Table 4 (the paper gives one figure per model and schedule).
    out +=
        "## Peak memory against Table 4\n\n"
        "pipesim's largest per-device peak (weights, gradients, Adam state and activations, "
        "no data-parallel sharding), the largest over the three m, in GiB; Table 4's figure "
        "is in GB as the paper prints it (it does not say whether 10⁹ or 2³⁰ bytes), the same "
        "for all m.\n\n";
    Table mem({"model", "mb", "1F1B pipesim", "1F1B Table 4", "1F1B-I pipesim", "1F1B-I Table 4",
               "ZB-1p pipesim", "ZB-1p Table 4", "ZB-2p pipesim", "ZB-2p Table 4"});
    for (std::size_t s = 0; s < zb_paper::setups.size(); ++s) {
        const auto& setup = zb_paper::setups[s];
        std::vector<std::string> line = {setup.label, std::to_string(setup.mb)};
        for (std::size_t k = 0; k < zb_paper::throughput_schedules.size(); ++k) {
            double peak = 0;
            for (std::size_t i = 0; i < rows.size(); ++i)
                if (rows[i].setup == int(s) && ok(runs.get(i, k)))
                    peak = std::max(peak, runs.get(i, k)->peak_memory);
            line.push_back(peak > 0 ? fmt::format("{:.1f}", peak / gib) : "not run");
            line.push_back(fmt::format("{:g}", setup.memory_gb[k]));
        }
        mem.add(line);
    }
    out += mem.markdown() + "\n";

    const StageTimes st = stage_times();
    const auto [zb2p_lo, zb2p_hi] =
        std::minmax_element(zb_paper::profiled.begin(), zb_paper::profiled.end(),
                            [](const auto& a, const auto& b) { return a.bubble[5] < b.bubble[5]; });
    const std::pair<double, double> zb2p_bubble = {zb2p_lo->bubble[5], zb2p_hi->bubble[5]};
    out += "## Why the numbers differ\n\n";
    out +=
        "**Stage times.** pipesim's times of its heaviest stage (the operator-level model) "
        "next to Table 9's profiled ones (its first row per model, m = 3p):\n\n" +
        st.markdown;
    out += fmt::format(
        "\npipesim's heaviest stage takes {:.2f}–{:.2f} × the profiled F+B+W, and absolute "
        "samples/s inherit that error. Its W is {:.2f}–{:.2f} of F+B, against {:.2f}–{:.2f} "
        "profiled: W, nothing but GEMMs, comes within a few per cent of the profile, F and B "
        "less close (the fidelity report's per-pass table shows where), so W takes a larger "
        "share of a stage than it did on the paper's GPUs. A larger share shrinks "
        "ZB-H1/ZB-1p's bubble relative to 1F1B's ((p−1)(F+B−W) against (p−1)(F+B+W), the "
        "paper's Table 2), which is why pipesim's ZB-1p gain over 1F1B exceeds the published "
        "one in {} of 12 rows.\n\n"
        "**ZB-2p.** Its gain depends on how close its schedule comes to zero bubble: the "
        "paper's ZB-2p has {:.1f}–{:.1f}% bubble with the profiled times (Table 5); pipesim's "
        "zb-2p with the same times is compared with Table 5 in the zero-bubble report. Its gain "
        "here falls short of Table 4's in {} of 12 rows.\n\n"
        "**1F1B-I.** pipesim's interleaved gain over 1F1B exceeds the published one in {} of "
        "{} rows, by {:.1f} to {:.1f} points: its absolute samples/s are the furthest from "
        "Table 4 of the four schedules. With one layer per chunk it sends (layers + 2)/p "
        "times as many pipeline messages as 1F1B; SimGrid moves them on the preset's links "
        "but does not hold the compute back while they move, as Megatron-LM's blocking "
        "exchanges do.\n\n"
        "**The rest.** The paper's figures are measured end to end (data loading, kernel "
        "launches, communication overlapping compute in its own way); pipesim simulates one "
        "pipeline iteration (repeated, for the post-validated ZB runs) with the analytic costs and "
        "the preset's assumed NIC speed. The speed-ups compare schedules "
        "under one cost model on each side and are the figures to look at; the absolute "
        "samples/s are a check of the cost model.\n",
        st.total_lo, st.total_hi, st.share_lo, st.share_hi, st.paper_share_lo, st.paper_share_hi,
        zb1p_above, 100 * zb2p_bubble.first, 100 * zb2p_bubble.second, zb2p_below,
        interleaved_above, interleaved_rows, interleaved_excess_lo, interleaved_excess_hi);
    write_report(context, out);
    return 0;
}

}  // namespace pipesim::reproduce
