#include "sweep_html.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "html_output.hpp"
#include "schedules/registry.hpp"
#include "sweep/job.hpp"
#include "sweep/results.hpp"
#include "viz/timeline_picture.hpp"

namespace pipesim::cli {

namespace {

constexpr std::size_t max_table_rows = 2000;
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

std::string costs_or_model(const sweep::Job& j) {
    if (!j.model.empty()) return fmt::format("{} on {}, mb {}", j.model, j.gpu, j.mb);
    // As the CSV's costs column writes them, which --where costs= takes.
    return fmt::format("{:g}/{:g}/{:g}", j.costs[0], j.costs[1], j.costs[2]);
}

// The job's choices that differ from the command line's defaults, e.g. "full recompute,
// unfused attention, ZeRO 1, NCCL tree". The latency, M_W share and memory cap among them:
// jobs that differed only there had alike rows and timeline headings.
std::string options_of(const sweep::Job& j) {
    std::vector<std::string> out;
    if (j.comm > 0) out.push_back(fmt::format("comm {:g}", j.comm));
    if (j.model.empty() && j.mem_w_ratio != 1)
        out.push_back(fmt::format("M_W {:g}", j.mem_w_ratio));
    if (j.mem_limit > 0)
        out.push_back(j.model.empty() ? fmt::format("cap {:g} M_B", j.mem_limit)
                                      : fmt::format("cap {:.4g} GiB", j.mem_limit / gib));
    if (!j.model.empty() && j.recompute != "none") out.push_back(j.recompute + " recompute");
    if (!j.model.empty() && j.attention != "fused") out.push_back(j.attention + " attention");
    if (j.zero > 0) out.push_back(fmt::format("ZeRO {}", j.zero));
    if (j.tp_comm_overlap) out.push_back("TP overlap");
    if (!j.overlap_grad_reduce) out.push_back("reduce after pipeline");
    if (j.overlap_param_gather) out.push_back("gather beside F");
    if (j.post_validation) out.push_back("post-validation");
    if (!j.overlap_p2p_communication) out.push_back("exchange once per step");
    if (j.first_stage_layers >= 0)
        out.push_back(fmt::format("first stage {} layers", j.first_stage_layers));
    if (j.last_stage_layers >= 0)
        out.push_back(fmt::format("last stage {} layers", j.last_stage_layers));
    if (!j.nccl_algo.empty()) out.push_back("NCCL " + j.nccl_algo);
    return fmt::format("{}", fmt::join(out, ", "));
}

std::string describe(const sweep::Job& j) {
    const std::string options = options_of(j);
    return fmt::format(
        "job {}: {} p={} m={}, {}{}{}{}{}{}", j.index, j.schedule, j.p, j.m, costs_or_model(j),
        j.dp > 1 ? fmt::format(", dp {}", j.dp) : std::string(),
        j.tp > 1 ? fmt::format(", tp {}", j.tp) : std::string(),
        j.cp > 1 ? fmt::format(", cp {}", j.cp) : std::string(),
        options.empty() ? std::string() : ", " + options,
        j.engine == sweep::Engine::simgrid ? ", SimGrid on " + j.cluster : std::string());
}

viz::HtmlTable results_table(const std::vector<sweep::Result>& rows) {
    viz::HtmlTable t;
    t.columns = {"job",           "schedule",   "engine",     "p",       "m",      "v",
                 "costs / model", "dp, tp, cp", "GPUs",       "options", "status", "time",
                 "bubble",        "peak",       "throughput", "vs 1F1B", "reason"};
    for (const sweep::Result& r : rows) {
        const sweep::Job& j = r.job;
        const bool model = !j.model.empty();
        const bool seconds = model || j.engine == sweep::Engine::simgrid;
        const bool ran = r.status == sweep::Status::ok || r.status == sweep::Status::over_memory;
        auto number = [&](std::string text) { return ran ? text : std::string(); };
        t.rows.push_back(
            {std::to_string(j.index), j.schedule,
             // The cluster beside its engine: the rows named it nowhere but in the headings.
             j.engine == sweep::Engine::simgrid
                 ? fmt::format("{} on {}", sweep::engine_name(j.engine), j.cluster)
                 : std::string(sweep::engine_name(j.engine)),
             std::to_string(j.p), std::to_string(j.m),
             // The chunks it ran with; a job that did not run, the grid's v (0: the schedule's).
             std::to_string(r.chunks > 0 ? r.chunks : j.v), costs_or_model(j),
             fmt::format("{}, {}, {}", j.dp, j.tp, j.cp), number(std::to_string(r.gpus)),
             options_of(j), sweep::status_name(r.status),
             number(fmt::format("{:.6g}{}", r.iteration_time, seconds ? " s" : "")),
             number(fmt::format("{:.2f} %", 100 * r.bubble_rate)),
             number(model ? fmt::format("{:.4g} GiB", r.peak_memory / gib)
                          : fmt::format("{:.4g} M_B", r.peak_activation)),
             number(model ? fmt::format("{:.6g} samples/s", r.samples_per_second)
                          : fmt::format("{:.6g} mb/{}", r.throughput, seconds ? "s" : "unit")),
             number(speedup_1f1b_cell(r.speedup_1f1b)), r.reason});
    }
    return t;
}

// The Inputs line saying which rows' timelines the report draws.
std::string timelines_line(std::size_t drawn, std::size_t too_large, bool all_model,
                           std::size_t max_ops) {
    std::string line =
        drawn > 0 ? fmt::format("the {} ok row{} with the highest {}", drawn, drawn == 1 ? "" : "s",
                                all_model ? "samples/s" : "throughput")
        : too_large > 0 ? "none"
                        : "none: no row finished (status ok)";
    if (too_large > 0)
        line += fmt::format("; {} finished row{} of more than the {} ops a picture draws left out",
                            too_large, too_large == 1 ? "" : "s", max_ops);
    return line;
}

}  // namespace

void write_sweep_html(const std::string& path, const std::vector<std::string>& args,
                      const std::string& grid_file, const std::string& results) {
    std::vector<sweep::Result> rows = sweep::load_results(results).rows;
    std::stable_sort(rows.begin(), rows.end(), [](const sweep::Result& a, const sweep::Result& b) {
        return a.job.index < b.job.index;
    });
    // The finished rows whose timeline the report can draw: one of more ops than a picture
    // draws (viz::TimelinePictureOptions::max_ops) is left out, not the whole report, which
    // was refused after the whole grid had run.
    const std::size_t max_ops = viz::TimelinePictureOptions{}.max_ops;
    std::vector<const sweep::Result*> ok;
    std::size_t too_large = 0;
    for (const sweep::Result& r : rows) {
        if (r.status != sweep::Status::ok) continue;
        const ScheduleGenerator* generator = find_generator(r.job.schedule);
        const double ops =
            generator ? max_op_count(*generator, r.job.p, std::max(r.chunks, 1), r.job.m) : 0;
        if (ops > static_cast<double>(max_ops))
            ++too_large;
        else
            ok.push_back(&r);
    }
    const bool all_model = std::all_of(
        ok.begin(), ok.end(), [](const sweep::Result* r) { return !r->job.model.empty(); });
    auto rate = [&](const sweep::Result* r) {
        return all_model ? r->samples_per_second : r->throughput;
    };
    // Ties to the row on fewer GPUs: a row's microbatch throughput is its pipeline's, so a
    // SimGrid grid's dp 2 row tied its dp 1 row and drew the same timeline twice.
    std::stable_sort(ok.begin(), ok.end(), [&](const sweep::Result* a, const sweep::Result* b) {
        return rate(a) != rate(b) ? rate(a) > rate(b) : a->gpus < b->gpus;
    });
    if (ok.size() > sweep_html_timelines) ok.resize(sweep_html_timelines);

    viz::HtmlReport report;
    report.title = fmt::format("pipesim sweep: {} ({} rows)", grid_file, rows.size());
    report.command_line = command_line("sweep", args);
    report.inputs = {
        {"grid", grid_file},
        {"results", results},
        {"rows", rows.size() > max_table_rows
                     ? fmt::format("{} (the first {} shown)", rows.size(), max_table_rows)
                     : std::to_string(rows.size())},
        {"timelines", timelines_line(ok.size(), too_large, all_model, max_ops)}};
    report.table = results_table(std::vector<sweep::Result>(
        rows.begin(),
        rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), max_table_rows))));
    for (const sweep::Result* r : ok) {
        const analysis::Engine engine = sweep::job_engine(r->job);
        ReportRun run = run_for_report(describe(r->job), sweep::pipeline_spec(r->job), engine,
                                       /*picture=*/true);
        report.schedules.push_back(std::move(*run.picture));
    }
    viz::write_html_report(path, report);
}

}  // namespace pipesim::cli
