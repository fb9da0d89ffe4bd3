// Sweep grids: parsing with positioned errors, expansion, shards, results CSV round trips,
// merging and the Pareto front.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/parse_error.hpp"
#include "sweep/grid.hpp"
#include "sweep/job.hpp"
#include "sweep/merge.hpp"
#include "sweep/pareto.hpp"
#include "sweep/results.hpp"

using namespace pipesim;
using namespace pipesim::fileio;
using namespace pipesim::sweep;

namespace {

std::string grid_text(const std::string& members) {
    return R"({"format": "pipesim-sweep", "version": 1, )" + members + "}";
}

std::string parse_error(const std::string& members) {
    try {
        parse_grid("g.json", grid_text(members));
    } catch (const ParseError& e) {
        return e.what();
    }
    return "no error";
}

Result ok_row(int index, std::string schedule, double memory, double throughput) {
    Result r;
    r.job.index = index;
    r.job.schedule = std::move(schedule);
    r.job.p = 4;
    r.job.m = 8 + index;
    r.peak_activation = memory;
    r.throughput = throughput;
    return r;
}

}  // namespace

TEST_CASE("a grid expands to the product of its axes, the last axis fastest", "[sweep]") {
    const Grid g = parse_grid(
        "g.json",
        grid_text(R"("schedule": ["1f1b", "zb-h1"], "p": [2, 4], "m": 8, "comm": [0, 0.1])"));
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 8);
    CHECK(jobs[0].schedule == "1f1b");
    CHECK(jobs[0].p == 2);
    CHECK(jobs[0].comm == 0);
    CHECK(jobs[1].comm == 0.1);
    CHECK(jobs[2].p == 4);
    CHECK(jobs[7].schedule == "zb-h1");
    for (std::size_t i = 0; i < jobs.size(); ++i)
        CHECK(jobs[i].index == static_cast<int>(i));
    std::set<std::string> keys;
    for (const Job& j : jobs)
        keys.insert(job_key(j));
    CHECK(keys.size() == jobs.size());
}

TEST_CASE("m_per_p gives m = k·p, SimGrid jobs ignore comm and analytic jobs ignore clusters",
          "[sweep]") {
    const Grid g = parse_grid("g.json", grid_text(R"("engine": ["analytic", "simgrid"],
        "cluster": ["dgx-a100:1", "dgx-h100:1"], "schedule": "1f1b", "p": [2, 4],
        "m_per_p": 3, "comm": [0, 0.5])"));
    const std::vector<Job> jobs = expand(g);
    // analytic: 2 p × 2 comm; simgrid: 2 clusters × 2 p.
    REQUIRE(jobs.size() == 8);
    for (const Job& j : jobs) {
        CHECK(j.m == 3 * j.p);
        if (j.engine == Engine::analytic) CHECK(j.cluster.empty());
        if (j.engine == Engine::simgrid) CHECK(j.comm == 0);
    }
}

TEST_CASE("global_batch gives m = B / (mb·dp), 0 where mb·dp does not divide it", "[sweep]") {
    const Grid g = parse_grid("g.json", grid_text(R"("schedule": "1f1b", "p": 4,
        "global_batch": [24, 64], "model": "zb-1.5b", "gpu": "a100-80gb", "mb": [1, 3],
        "dp": [1, 2, 4])"));
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 12);
    for (const Job& j : jobs) {
        INFO(j.global_batch << " " << j.mb << " " << j.dp);
        CHECK((j.global_batch == 24 || j.global_batch == 64));
        const int per_step = j.mb * j.dp;
        CHECK(j.m == (j.global_batch % per_step == 0 ? j.global_batch / per_step : 0));
    }
    // Grids of other batches are other grids, though their infeasible jobs all have m = 0:
    // a results file of one is not resumed by the other.
    const auto id = [](const char* batches) {
        return grid_id(expand(parse_grid(
            "g.json", grid_text(fmt::format(R"("schedule": "1f1b", "p": 4, "global_batch": {},
                "model": "zb-1.5b", "gpu": "a100-80gb", "mb": 2)",
                                            batches)))));
    };
    CHECK(id("[16, 17]") != id("[16, 19]"));
    CHECK(id("[16, 17]") == id("[16, 17]"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "global_batch": 16,
        "model": "zb-1.5b", "gpu": "a100-80gb")"),
               Catch::Contains("exactly one of \"m\"") && Catch::Contains("\"global_batch\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "global_batch": 16)"),
               Catch::Contains("\"global_batch\" counts sequences, which a \"model\" gives"));
}

TEST_CASE("memory caps take sizes with units", "[sweep]") {
    const Grid g =
        parse_grid("g.json", grid_text(R"("schedule": "1f1b", "p": 4, "m": 8, "model": "zb-1.5b",
                               "gpu": "a100-80gb", "mem_limit": ["40GiB", 1e9, "512 MB"])"));
    REQUIRE(g.mem_limits.size() == 3);
    CHECK(g.mem_limits[0] == 40.0 * 1024 * 1024 * 1024);
    CHECK(g.mem_limits[1] == 1e9);
    CHECK(g.mem_limits[2] == 512e6);
}

TEST_CASE("dp and tp without a model lay out simulations only", "[sweep]") {
    using Catch::Matchers::Contains;
    // A row of dp 2 was dp 1's with twice the GPUs.
    for (const char* axis : {"dp", "tp"}) {
        const std::string given =
            fmt::format(R"("schedule": "1f1b", "p": 4, "m": 8, "{}": )", axis);
        CHECK_THAT(parse_error(given + "[1, 2]"),
                   Contains("g.json:1:") &&
                       Contains(fmt::format("\"{}\" above 1 without a \"model\" lays the "
                                            "pipeline out on a cluster only",
                                            axis)));
        CHECK_THAT(
            parse_error(given + R"(2, "engine": ["analytic", "simgrid"], "cluster": "dgx-h100")"),
            Contains("the analytic engine needs"));
        // 1 changes nothing; on a cluster the layout is the simulation's.
        CHECK_NOTHROW(parse_grid("g.json", grid_text(given + "1")));
        CHECK_NOTHROW(parse_grid(
            "g.json", grid_text(given + R"(2, "engine": "simgrid", "cluster": "dgx-h100")")));
    }
}

TEST_CASE("grid errors name the file, line and column and what was expected", "[sweep]") {
    using Catch::Matchers::Contains;
    CHECK_THAT(parse_error(R"("schedule": "zb-h9", "p": 4, "m": 8)"),
               Contains("g.json:1:") && Contains("unknown schedule 'zb-h9'"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 0, "m": 8)"), Contains("1..4096"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "mb": 2)"),
               Contains("\"mb\" needs a \"model\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "m_per_p": 2)"),
               Contains("exactly one of \"m\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "engine": "simgrid")"),
               Contains("needs a \"cluster\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "model": "zb-1.5b")"),
               Contains("go together"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "mem_limit": "8 parsecs")"),
               Contains("mem_limit: '8 parsecs': unknown unit 'parsecs'"));
    // Read as --mem-limit reads it: "1e308 TiB" was infinite bytes, written into results
    // that resume and merge then refused.
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "mem_limit": "1e308 TiB")"),
               Contains("g.json:1:") && Contains("mem_limit: '1e308 TiB': a size must be at "
                                                 "most 1e+30 bytes"));
    // A value given twice would be one job: "2 jobs, 1 ran" on a fresh results file, and a
    // typo such as [1, 1] for [1, 2] gone without a word.
    CHECK_THAT(parse_error(R"("schedule": ["1f1b", "1f1b"], "p": 4, "m": 8)"),
               Contains("g.json:1:") &&
                   Contains("schedule: '\"1f1b\"' is given twice (schedule[0] and [1]): give "
                            "each value of an axis once"));
    // Caps are compared as read: "40GiB", "40 GiB" and its bytes are one cap.
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "model": "zb-1.5b",
                              "gpu": "a100-80gb", "mem_limit": ["40GiB", "40 GiB"])"),
               Contains("mem_limit: '\"40 GiB\"' is the cap of mem_limit[0]"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": [2, 4, 2.0], "m": 8)"),
               Contains("p: '2.0' is given twice (p[0] and [2])"));
    CHECK_THAT(
        parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "costs": [[1, 2, 1], [1, 2, 1]])"),
        Contains("costs: '[1,2,1]' is given twice (costs[0] and [1])"));
    // As on the command line: a cap with a unit is bytes, which only a model gives; no cap
    // is left out, not 0.
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "mem_limit": [4, "40GiB"])"),
               Contains("g.json:1:") &&
                   Contains("mem_limit with a unit caps a whole device's bytes, which a "
                            "\"model\" gives"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "mem_limit": 0)"),
               Contains("mem_limit: expected a cap above 0 (leave it out for none)"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "model": "zb-1.5b",
                              "gpu": "a100-80gb", "mem_limit": "0 GiB")"),
               Contains("mem_limit: '0 GiB': a size must be > 0"));
    CHECK(parse_grid("g.json", grid_text(R"("schedule": "1f1b", "p": 4, "m": 8,
                                           "mem_limit": [4, "2"])"))
              .mem_limits == std::vector<double>{4, 2});
    // A subnormal plain number as text: std::stod threw out_of_range ("internal error: stod").
    CHECK(parse_grid("g.json", grid_text(R"("schedule": "1f1b", "p": 4, "m": 8,
                                           "mem_limit": "1e-310")"))
              .mem_limits == std::vector<double>{1e-310});
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "stages": 4)"),
               Contains("stages"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "costs": [1, 2])"),
               Contains("three costs"));
    // A results file keeps each name on one line: a line break in a path could not come back.
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 4, "m": 8, "model": "a\nb.json",
                              "gpu": "a100-80gb")"),
               Contains("g.json:1:") && Contains("'a\\x0ab.json' holds a control character"));
}

TEST_CASE("shards partition the jobs", "[sweep]") {
    const std::vector<Job> jobs = expand(parse_grid(
        "g.json", grid_text(R"("schedule": ["1f1b", "zb-h1"], "p": [2, 3, 4], "m": [4, 5])")));
    std::set<int> seen;
    for (int s = 0; s < 5; ++s)
        for (const Job& j : shard_jobs(jobs, s, 5))
            CHECK(seen.insert(j.index).second);
    CHECK(seen.size() == jobs.size());
    CHECK_THROWS_AS(shard_jobs(jobs, 5, 5), std::invalid_argument);
}

TEST_CASE("result rows survive a CSV round trip, quotes and commas included", "[sweep]") {
    Result r = ok_row(3, "zb-h1", 4, 0.25);
    r.status = Status::infeasible;
    r.reason = "needs \"more\", many GPUs";
    r.job.costs = {1, 2.5, 0.125};
    r.job.model = "zb-1.5b";
    r.makespan = 1.0 / 3.0;
    const ResultsFile f = parse_results("r.csv", csv_header() + "\n" + csv_row(r) + "\n");
    REQUIRE(f.rows.size() == 1);
    CHECK(csv_row(f.rows[0]) == csv_row(r));
    CHECK(f.rows[0].reason == r.reason);
    CHECK(f.rows[0].makespan == r.makespan);
    CHECK_FALSE(f.incomplete_tail);
}

TEST_CASE("a results file saved by a spreadsheet (byte-order mark, CRLF) reads the same",
          "[sweep]") {
    const Result r = ok_row(3, "zb-h1", 4, 0.25);
    const std::string row = csv_row(r);
    const ResultsFile f =
        parse_results("r.csv", "\xEF\xBB\xBF" + csv_header() + "\r\n" + row + "\r\n");
    REQUIRE(f.rows.size() == 1);
    CHECK(csv_row(f.rows[0]) == row);
    CHECK_FALSE(f.incomplete_tail);
}

TEST_CASE("a carriage return quoted in a results field reads as the space csv_row writes",
          "[sweep]") {
    // Found by fuzz_results_csv: "a\rb" read back as itself but was written as "a b".
    Result r = ok_row(0, "1f1b", 4, 0.25);
    r.reason = "a b";
    std::string row = csv_row(r);
    row.replace(row.find("a b"), 3, "\"a\rb\"");
    const ResultsFile f = parse_results("r.csv", csv_header() + "\n" + row + "\n");
    REQUIRE(f.rows.size() == 1);
    CHECK(f.rows[0].reason == "a b");
    CHECK(csv_row(f.rows[0]) == csv_row(r));
}

TEST_CASE("a line break quoted in a results field is refused, saying rows hold none", "[sweep]") {
    // RFC 4180 allows it; csv_row never writes one (it writes a space), so it is not read.
    Result r = ok_row(0, "1f1b", 4, 0.25);
    r.reason = "a b";
    std::string row = csv_row(r);
    row.replace(row.find("a b"), 3, "\"a\nb\"");
    CHECK_THROWS_WITH(parse_results("r.csv", csv_header() + "\n" + row + "\n"),
                      Catch::Contains("r.csv:2:1: a quoted field is not closed on its line") &&
                          Catch::Contains("holds no line breaks"));
}

TEST_CASE("a results row out of the ranges a sweep writes is refused with its column", "[sweep]") {
    // A bubble rate or efficiency outside 0..1, a count of devices, replicas or ZeRO stage
    // no grid gives: silently accepted before, and drawn on a Pareto front (bubble −50 %).
    struct Case {
        const char* column;
        void (*spoil)(Result&);
        const char* expected;
    };
    const Case cases[] = {
        {"bubble_rate", [](Result& r) { r.bubble_rate = -0.5; }, "a number in 0..1"},
        {"efficiency", [](Result& r) { r.efficiency = 5; }, "a number in 0..1"},
        {"p", [](Result& r) { r.job.p = 0; }, "an integer ≥ 1"},
        {"tp", [](Result& r) { r.job.tp = 0; }, "an integer ≥ 1"},
        {"zero", [](Result& r) { r.job.zero = 9; }, "an integer in 0..3"},
        {"v", [](Result& r) { r.job.v = -3; }, "an integer ≥ 0"},
        {"chunks", [](Result& r) { r.chunks = -1; }, "an integer ≥ 0"},
    };
    // An efficiency a rounding above 1, as a pipeline without idle time may give, is read.
    Result full = ok_row(0, "1f1b", 4, 0.2);
    full.efficiency = 1 + 0x1p-52;
    CHECK(parse_results("r.csv", csv_header() + "\n" + csv_row(full) + "\n").rows.size() == 1);
    for (const Case& c : cases) {
        INFO(c.column);
        Result r = ok_row(0, "1f1b", 4, 0.2);
        CHECK_NOTHROW(parse_results("r.csv", csv_header() + "\n" + csv_row(r) + "\n"));
        c.spoil(r);
        CHECK_THROWS_WITH(
            parse_results("r.csv", csv_header() + "\n" + csv_row(r) + "\n"),
            Catch::Contains("r.csv:2:") &&
                Catch::Contains(fmt::format("({}): expected {}", c.column, c.expected)));
    }
}

TEST_CASE("a results file cut short drops its last row and a foreign header is refused",
          "[sweep]") {
    const std::string row = csv_row(ok_row(0, "1f1b", 4, 0.2));
    const ResultsFile f =
        parse_results("r.csv", csv_header() + "\n" + row + "\n" + row.substr(0, 9));
    CHECK(f.rows.size() == 1);
    CHECK(f.incomplete_tail);
    CHECK_THROWS_WITH(parse_results("r.csv", "a,b,c\n"), Catch::Contains("r.csv:1:1"));
    // A header cut short is the beginning of a results file; a line without a line end
    // that is not (notes, or a results file with CR-only line ends) is another file.
    const ResultsFile header_cut = parse_results("r.csv", csv_header().substr(0, 12));
    CHECK(header_cut.rows.empty());
    CHECK(header_cut.incomplete_tail);
    CHECK_THROWS_WITH(parse_results("r.csv", "my notes, no line end"),
                      Catch::Contains("r.csv:1:1: not a pipesim sweep results file"));
    CHECK_THROWS_WITH(parse_results("r.csv", csv_header() + "\r" + row + "\r"),
                      Catch::Contains("r.csv:1:1: not a pipesim sweep results file"));
    CHECK_THROWS_WITH(parse_results("r.csv", csv_header() + "\n1,analytic\n"),
                      Catch::Contains("r.csv:2:1: expected 48 fields"));
}

TEST_CASE("merging keeps one row per job, in job order, and prefers finished rows to errors",
          "[sweep]") {
    Result failed = ok_row(1, "zb-h1", 0, 0);
    failed.status = Status::error;
    ResultsFile a, b;
    a.rows = {ok_row(2, "1f1b", 4, 0.2), failed};
    b.rows = {ok_row(1, "zb-h1", 4, 0.3), ok_row(2, "1f1b", 4, 0.2), ok_row(0, "zb-v", 4, 0.31)};
    MergeSummary summary;
    const std::vector<Result> rows = merge_results({a, b}, summary);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].job.index == 0);
    CHECK(rows[1].status == Status::ok);
    CHECK(summary.duplicates == 1);
    CHECK(summary.replaced_errors == 1);
    ResultsFile c;
    c.rows = {ok_row(2, "1f1b", 4, 0.9)};
    CHECK_THROWS_WITH(merge_results({a, c}, summary),
                      "job 2 (1f1b p=4 m=10) has two different finished rows: throughput 0.2 "
                      "against 0.9 (were the shards run by different pipesim builds?)");
    // Read from files, the rows are named by file and line.
    const ResultsFile from_a =
        parse_results("a.csv", csv_header() + "\n" + csv_row(a.rows[0]) + "\n");
    const ResultsFile from_c =
        parse_results("c.csv", csv_header() + "\n" + csv_row(ok_row(0, "zb-v", 4, 0.31)) + "\n" +
                                   csv_row(c.rows[0]) + "\n");
    CHECK_THROWS_WITH(merge_results({from_a, from_c}, summary),
                      Catch::Contains("two different finished rows (a.csv:2 and c.csv:3): "
                                      "throughput 0.2 against 0.9"));
    // Another job's row edited into job 2's parameters: both jobs are named (the message
    // named job 2 alone, which the edited row does not say).
    ResultsFile edited;
    edited.rows = {ok_row(7, "1f1b", 4, 0.9)};
    edited.rows[0].job.m = a.rows[0].job.m;
    CHECK_THROWS_WITH(merge_results({a, edited}, summary),
                      "the rows of job 2 and job 7 are one job (1f1b p=4 m=10) with different "
                      "results (was one edited, or are they of different grids?)");
}

TEST_CASE("the Pareto front keeps the rows no other row beats on memory and throughput",
          "[sweep]") {
    std::vector<Result> rows = {ok_row(0, "1f1b", 4, 0.20),  ok_row(1, "zb-h1", 4, 0.27),
                                ok_row(2, "zb-h2", 7, 0.33), ok_row(3, "gpipe", 8, 0.20),
                                ok_row(4, "zb-v", 4, 0.31),  ok_row(5, "v-min", 2, 0.18)};
    rows.push_back(ok_row(6, "zb-2p", 1, 0.5));
    rows.back().status = Status::over_memory;  // not plotted, not on the front
    const std::vector<std::size_t> front = pareto_front(rows, {});
    CHECK(front == std::vector<std::size_t>{5, 4, 2});
    ParetoOptions bubble;
    bubble.y = Metric::bubble_rate;
    CHECK(!higher_is_better(bubble.y));
}

namespace {

// `"key": [1, 2, ..., n]`
std::string counting_axis(const std::string& key, int n) {
    std::string out = "\"" + key + "\": [";
    for (int i = 1; i <= n; ++i)
        out += (i > 1 ? ", " : "") + std::to_string(i);
    return out + "]";
}

}  // namespace

TEST_CASE("a grid of more than a million jobs is refused when read, naming the product",
          "[sweep]") {
    const std::string at_limit = parse_error(R"("schedule": "1f1b", )" + counting_axis("p", 1000) +
                                             ", " + counting_axis("m", 1000));
    CHECK(at_limit == "no error");
    const std::string over = parse_error(R"("schedule": "1f1b", )" + counting_axis("p", 1000) +
                                         ", " + counting_axis("m", 1001));
    CHECK_THAT(over, Catch::StartsWith("g.json:1:1:") && Catch::Contains("1001000 jobs") &&
                         Catch::Contains("1000000"));
}

TEST_CASE("the job count saturates instead of overflowing, and expand refuses huge grids",
          "[sweep]") {
    Grid g;
    g.schedules = {"1f1b"};
    for (std::vector<int>* axis : {&g.p, &g.m, &g.v, &g.mb, &g.tp, &g.dp})
        for (int i = 1; i <= 4096; ++i)
            axis->push_back(i);
    CHECK(job_count(g) == SIZE_MAX);  // 4096^6 = 2^72
    CHECK_THROWS_AS(expand(g), std::invalid_argument);
    Grid small;
    small.engines = {Engine::analytic, Engine::simgrid};
    small.schedules = {"1f1b", "zb-h1"};
    small.p = {4};
    small.m = {8, 16};
    small.comm = {0, 1, 2};
    small.clusters = {"a", "b", "c", "d", "e"};
    // analytic: 2 schedules × 2 m × 3 comm; simgrid: 5 clusters × 2 × 2 (comm ignored).
    CHECK(job_count(small) == 12 + 20);
    CHECK(expand(small).size() == job_count(small));
}

TEST_CASE("a bad results field is located at its byte: nan, inf, hex, control characters",
          "[sweep]") {
    Result r = ok_row(3, "zb-h1", 4, 0.25);
    r.job.costs = {1, 2.5, 0.125};
    const std::string good = csv_row(r);
    std::vector<std::size_t> starts;
    const std::vector<std::string> fields = split_csv_line(good, &starts).value();
    const std::vector<std::string> header = split_csv_line(csv_header()).value();
    const auto at = [&](const char* name) {
        return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) -
                                        header.begin());
    };
    for (const auto& [column, bad] :
         std::vector<std::pair<std::size_t, std::string>>{{at("overlap_grad_reduce"), "nan"},
                                                          {at("overlap_grad_reduce"), "inf"},
                                                          {at("comm"), "-inf"},
                                                          {at("chunks"), "NaN"},
                                                          {at("costs"), "1/inf/1"},
                                                          {at("overlap_grad_reduce"), "x"},
                                                          {at("costs"), "1/1e999/1"},
                                                          {at("job"), "-3"},
                                                          {at("throughput"), "-1"},
                                                          {at("peak_activation"), "-5"},
                                                          // strtod's other forms: 16, 1.
                                                          {at("throughput"), "0x10"},
                                                          {at("comm"), " 1"},
                                                          // Printed by pareto: a terminal
                                                          // escape went out raw.
                                                          {at("schedule"), "zb\x1b[2J"},
                                                          {at("cluster"), "x\x07"}}) {
        REQUIRE(column < header.size());
        std::vector<std::string> changed = fields;
        changed[column] = bad;
        std::string row;
        for (std::size_t i = 0; i < changed.size(); ++i)
            row += (i ? "," : "") + changed[i];
        std::string message;
        try {
            parse_results("r.csv", csv_header() + "\n" + row + "\n");
        } catch (const ParseError& e) {
            message = e.what();
        }
        INFO(row);
        CHECK_THAT(message, Catch::StartsWith(fmt::format("r.csv:2:{}: column {}",
                                                          starts[column] + 1, column + 1)));
    }
}

TEST_CASE("numbers below the smallest normal double survive the results file", "[sweep]") {
    // A grid's "comm": 1e-310 or costs of 5e-324 were written and then refused on resume.
    Result r = ok_row(2, "1f1b", 2, 0.5);
    r.job.comm = 1e-310;
    r.job.costs = {5e-324, 1, 1};
    r.bubble_time = 2.5e-320;
    const ResultsFile back = parse_results("r.csv", csv_header() + "\n" + csv_row(r) + "\n");
    REQUIRE(back.rows.size() == 1);
    CHECK(back.rows[0].job.comm == 1e-310);
    CHECK(back.rows[0].job.costs == std::vector<double>{5e-324, 1, 1});
    CHECK(back.rows[0].bubble_time == 2.5e-320);
}

TEST_CASE("write_all reports a failed write instead of dropping the text", "[sweep]") {
    const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(fileio::write_all(fd, "a row\n") == ENOSPC);
    ::close(fd);
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    CHECK(fileio::write_all(fds[1], "a row\n") == 0);
    char buffer[16] = {};
    CHECK(::read(fds[0], buffer, sizeof buffer) == 6);
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_CASE("sweep rows carry efficiency, the speed-up over 1F1B and lifespans", "[sweep]") {
    pipesim::sweep::Job job;
    job.schedule = "zb-h1";
    job.p = 4;
    job.m = 8;
    const Result r = pipesim::sweep::run_job(job);
    REQUIRE(r.status == pipesim::sweep::Status::ok);
    // F = B = W = 1: ZB-H1 takes 27, 1F1B (m + p − 1)·3 = 33; each device is busy 24.
    CHECK(r.efficiency == Approx(24.0 / 27.0));
    CHECK(r.speedup_1f1b == Approx(33.0 / 27.0));
    CHECK(r.lifespan_max > 0);
    CHECK(r.lifespan_mean <= r.lifespan_max);
    const auto back = pipesim::sweep::parse_results(
        "r.csv", pipesim::sweep::csv_header() + "\n" + pipesim::sweep::csv_row(r) + "\n");
    REQUIRE(back.rows.size() == 1);
    CHECK(back.rows[0].speedup_1f1b == r.speedup_1f1b);
    CHECK(back.rows[0].lifespan_mean == r.lifespan_mean);
}

TEST_CASE("a grid sweeps post-validation — its rows run and keep it", "[sweep]") {
    const Grid g = parse_grid("g.json", grid_text(R"("schedule": "zb-2p", "p": 4, "m": 12,
            "post_validation": [false, true])"));
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 2);
    CHECK_FALSE(jobs[0].post_validation);
    CHECK(jobs[1].post_validation);
    CHECK(std::get<analysis::AnalyticEngine>(job_engine(jobs[1])).post_validation);
    // F = B = W = 1: one iteration takes 3m + p − 1 = 39, repeated ones 3m = 36 each; the
    // throughput column is microbatches per period.
    const Result plain = pipesim::sweep::run_job(jobs[0]);
    const Result post = pipesim::sweep::run_job(jobs[1]);
    CHECK(plain.iteration_time == Approx(39));
    CHECK(post.iteration_time == Approx(36));
    CHECK(post.makespan == Approx(39));
    CHECK(post.throughput == Approx(12.0 / 36));
    const ResultsFile back = parse_results("r.csv", csv_header() + "\n" + csv_row(post) + "\n");
    REQUIRE(back.rows.size() == 1);
    CHECK(back.rows[0].job.post_validation);
    CHECK(job_key(back.rows[0].job) != job_key(plain.job));
}

TEST_CASE("a grid sweeps the exchange once per step — its rows run and keep it", "[sweep]") {
    const Grid g = parse_grid("g.json", grid_text(R"("schedule": ["1f1b", "interleaved-1f1b"],
            "p": 4, "m": 8, "v": 2, "comm": 0.25, "overlap_p2p_communication": [true, false])"));
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 4);
    CHECK(jobs[0].overlap_p2p_communication);
    CHECK_FALSE(jobs[1].overlap_p2p_communication);
    CHECK_FALSE(pipeline_spec(jobs[0]).step_exchange);
    CHECK(pipeline_spec(jobs[1]).step_exchange);
    // 1F1B sends each output as its pass ends either way: an infeasible row saying so.
    const Result one = pipesim::sweep::run_job(jobs[1]);
    CHECK(one.status == pipesim::sweep::Status::infeasible);
    CHECK_THAT(one.reason, Catch::Contains("applies to interleaved-1f1b, not to 1f1b"));
    // Interleaved: the row is the pipeline with its steps paired. With a latency per
    // transfer the F outputs held until the step's backward ends arrive later: 32 → 34.5.
    const Result overlapped = pipesim::sweep::run_job(jobs[2]);
    const Result paired = pipesim::sweep::run_job(jobs[3]);
    REQUIRE(overlapped.status == pipesim::sweep::Status::ok);
    REQUIRE(paired.status == pipesim::sweep::Status::ok);
    CHECK(overlapped.makespan == Approx(32));
    CHECK(paired.makespan == Approx(34.5));
    CHECK(paired.makespan ==
          Approx(analysis::run(pipeline_spec(jobs[3]), analysis::AnalyticEngine{}).iteration_time));
    const ResultsFile back = parse_results("r.csv", csv_header() + "\n" + csv_row(paired) + "\n");
    REQUIRE(back.rows.size() == 1);
    CHECK_FALSE(back.rows[0].job.overlap_p2p_communication);
    CHECK(job_key(back.rows[0].job) != job_key(overlapped.job));
    // m off the group size: the row says why, as the command line does.
    Job off = jobs[3];
    off.m = 6;
    const Result refused = pipesim::sweep::run_job(off);
    CHECK(refused.status == pipesim::sweep::Status::infeasible);
    CHECK_THAT(refused.reason, Catch::Contains("multiple of the group size 4"));
}

TEST_CASE("a job whose m is past the schedules' range is infeasible whatever its p", "[sweep]") {
    // m = m_per_p·p = 4096·4096: the row named the memory such a run would need ("error", and
    // advice to run it again) where a smaller p named m's range ("infeasible").
    for (const int p : {32, 4096}) {
        pipesim::sweep::Job job;
        job.schedule = "1f1b";
        job.p = p;
        job.m = p == 32 ? 65536 * 32 : 4096 * 4096;
        const Result r = pipesim::sweep::run_job(job);
        CHECK(r.status == pipesim::sweep::Status::infeasible);
        CHECK_THAT(r.reason,
                   Catch::Contains("the number of microbatches m must be in 1..1048576, got " +
                                   std::to_string(job.m)));
    }
}

TEST_CASE("a grid fixes the end stages' layers — its rows run and keep them", "[sweep]") {
    // The Zero Bubble repository's split of zb-1.5b (22 layers) on p = 8: 3 layers a stage,
    // 2 on the ends, or with interleaving one layer a chunk and the ends holding none.
    const Grid g = parse_grid("g.json", grid_text(R"("schedule": "1f1b", "p": 8, "m": 8,
            "model": "zb-1.5b", "gpu": "a100-80gb", "first_stage_layers": [2, 0],
            "last_stage_layers": 2)"));
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[0].first_stage_layers == 2);
    CHECK(jobs[0].last_stage_layers == 2);
    CHECK(jobs[1].first_stage_layers == 0);
    const Result split = pipesim::sweep::run_job(jobs[0]);
    REQUIRE(split.status == Status::ok);
    const analysis::PipelineSpec spec = pipeline_spec(jobs[0]);
    REQUIRE(spec.costs.model.has_value());
    CHECK(spec.costs.model->partition.first_stage_layers == 2);
    CHECK(spec.costs.model->partition.last_stage_layers == 2);
    // Six middle stages share the other 18 layers: 3 each, so the middle stages are the
    // slowest and the split differs from the partitioner's own.
    const Result own = pipesim::sweep::run_job(expand(parse_grid("g.json", grid_text(R"(
            "schedule": "1f1b", "p": 8, "m": 8, "model": "zb-1.5b", "gpu": "a100-80gb")")))[0]);
    REQUIRE(own.status == Status::ok);
    CHECK(split.makespan != own.makespan);
    // The CSV keeps a fixed count and leaves the partitioner's choice empty.
    const ResultsFile back =
        parse_results("r.csv", csv_header() + "\n" + csv_row(split) + "\n" + csv_row(own) + "\n");
    REQUIRE(back.rows.size() == 2);
    CHECK(back.rows[0].job.first_stage_layers == 2);
    CHECK(back.rows[1].job.first_stage_layers == -1);
    CHECK(back.rows[1].job.last_stage_layers == -1);
    using Catch::Contains;
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "first_stage_layers": 1)"),
               Contains("\"first_stage_layers\" needs a \"model\""));
}

TEST_CASE("grids sweep context parallelism, ZeRO, overlap flags and NCCL's algorithm", "[sweep]") {
    const Grid g = parse_grid(
        "g.json", grid_text(R"("engine": ["analytic", "simgrid"], "schedule": "1f1b", "p": 2,
            "m": 4, "model": "zb-1.5b", "gpu": "a100-80gb", "dp": 2, "cluster": "dgx-a100",
            "cp": [1, 2], "zero": [0, 1], "tp_comm_overlap": false,
            "overlap_grad_reduce": [true, false], "nccl_algo": ["ring", "tree"])"));
    // analytic: 2·2·2 jobs; simgrid: also the two algorithms.
    CHECK(job_count(g) == 8 + 16);
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 24);
    CHECK(jobs[0].nccl_algo.empty());  // the analytic engine has none
    CHECK(jobs[7].cp == 2);
    CHECK(jobs[7].zero == 1);
    CHECK_FALSE(jobs[7].overlap_grad_reduce);
    CHECK(jobs[8].nccl_algo == "ring");  // simgrid, the last axis varying fastest
    CHECK(jobs[9].nccl_algo == "tree");
    // Every parameter survives the results file.
    Result r;
    r.job = jobs[23];
    r.job.tp_comm_overlap = true;
    r.job.overlap_param_gather = true;
    const ResultsFile back = parse_results("r.csv", csv_header() + "\n" + csv_row(r) + "\n");
    REQUIRE(back.rows.size() == 1);
    const Job& j = back.rows[0].job;
    CHECK(j.cp == 2);
    CHECK(j.zero == 1);
    CHECK(j.tp_comm_overlap);
    CHECK_FALSE(j.overlap_grad_reduce);
    CHECK(j.overlap_param_gather);
    CHECK(j.nccl_algo == "tree");
    CHECK(job_key(j) == job_key(r.job));
    // The SimGrid engine takes the job's algorithm and overlap.
    const analysis::Engine engine = job_engine(jobs[9]);
    const auto& simgrid = std::get<analysis::SimGridEngine>(engine);
    REQUIRE(simgrid.options.nccl_algo.has_value());
    CHECK(*simgrid.options.nccl_algo == simgrid::NcclAlgo::tree);
    CHECK(simgrid.options.overlap_grad_reduce);

    using Catch::Contains;
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "cp": 2)"),
               Contains("\"cp\" needs a \"model\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "nccl_algo": "ring")"),
               Contains("\"nccl_algo\" needs \"engine\": \"simgrid\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "model": "zb-1.5b",
                              "gpu": "a100-80gb", "zero": 4)"),
               Contains("0..3"));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "model": "zb-1.5b",
                              "gpu": "a100-80gb", "tp_comm_overlap": "yes")"),
               Contains("tp_comm_overlap: expected true or false"));
    CHECK_THAT(parse_error(R"("engine": "simgrid", "cluster": "dgx-a100", "schedule": "1f1b",
                              "p": 2, "m": 4, "nccl_algo": "rings")"),
               Contains("expected ring, tree or auto, got 'rings'"));
}

TEST_CASE("grids sweep the attention kernel, a column of the results", "[sweep]") {
    const Grid g =
        parse_grid("g.json", grid_text(R"("schedule": "1f1b", "p": 2, "m": 4, "model": "zb-1.5b",
            "gpu": "a100-80gb", "recompute": ["none", "full"], "attention": ["fused", "unfused"])"));
    const std::vector<Job> jobs = expand(g);
    REQUIRE(jobs.size() == 4);
    CHECK(jobs[0].attention == "fused");  // after recompute, varying faster
    CHECK(jobs[1].attention == "unfused");
    CHECK(jobs[1].recompute == "none");
    CHECK(job_key(jobs[0]) != job_key(jobs[1]));
    const Result fused = run_job(jobs[0]), unfused = run_job(jobs[1]);
    REQUIRE(fused.status == Status::ok);
    REQUIRE(unfused.status == Status::ok);
    // The s×s scores in memory: slower passes and more activations.
    CHECK(unfused.makespan > fused.makespan);
    CHECK(unfused.peak_activation > fused.peak_activation);
    const ResultsFile back = parse_results("r.csv", csv_header() + "\n" + csv_row(unfused) + "\n");
    REQUIRE(back.rows.size() == 1);
    CHECK(back.rows[0].job.attention == "unfused");
    CHECK(job_key(back.rows[0].job) == job_key(jobs[1]));

    using Catch::Contains;
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "attention": "unfused")"),
               Contains("\"attention\" needs a \"model\""));
    CHECK_THAT(parse_error(R"("schedule": "1f1b", "p": 2, "m": 4, "model": "zb-1.5b",
                              "gpu": "a100-80gb", "attention": "flash")"),
               Contains("expected fused or unfused, got 'flash'"));
}

TEST_CASE("sweep jobs shard the optimizer, split sequences and overlap the reduction", "[sweep]") {
    Job job;
    job.schedule = "1f1b";
    job.p = 1;
    job.m = 2;
    job.model = "zb-1.5b";
    job.gpu = "a100-80gb";
    const auto run = [&](int dp, int zero, int cp = 1, bool overlap = true) {
        Job j = job;
        j.dp = dp;
        j.zero = zero;
        j.cp = cp;
        j.overlap_grad_reduce = overlap;
        return run_job(j);
    };
    // ZeRO-1 keeps 1/d of the 12 bytes of Adam state per parameter (Megatron-LM's
    // distributed optimizer: 6 + 12/d bytes per parameter), so over d = 2 and d = 4 it saves
    // 12·P·(1 − 1/d): in the ratio (1/2) / (3/4).
    const Result plain2 = run(2, 0), plain4 = run(4, 0), zero2 = run(2, 1), zero4 = run(4, 1);
    for (const Result* r : {&plain2, &plain4, &zero2, &zero4})
        REQUIRE(r->status == Status::ok);
    CHECK(plain2.peak_memory == Approx(plain4.peak_memory));
    CHECK((plain2.peak_memory - zero2.peak_memory) / (plain4.peak_memory - zero4.peak_memory) ==
          Approx(2.0 / 3.0));
    // The parameter all-gather beside the first forward, reduced after the pipeline: the
    // end of the iteration loses the gather (a third of the reduce-scatter and gather pair)
    // less what the first forward does not hide.
    Job moved = job;
    moved.dp = 2;
    moved.zero = 1;
    moved.overlap_grad_reduce = false;
    const Result gather_after = run_job(moved);
    moved.overlap_param_gather = true;
    const Result gather_moved = run_job(moved);
    REQUIRE(gather_moved.status == Status::ok);
    CHECK(gather_moved.iteration_time < gather_after.iteration_time);
    moved.zero = 0;
    CHECK_THAT(run_job(moved).reason, Catch::Contains("ZeRO stage 1 or 2"));
    // With one rank there is nothing to shard: an infeasible row that says so.
    const Result alone = run(1, 1);
    CHECK(alone.status == Status::infeasible);
    CHECK_THAT(alone.reason, Catch::Contains("dp·cp = 1"));
    // Context parallelism: C GPUs per stage, each with s/C of every sequence.
    const Result cp2 = run(1, 0, 2);
    REQUIRE(cp2.status == Status::ok);
    CHECK(cp2.gpus == 2);
    CHECK(cp2.peak_memory < run(1, 0).peak_memory);
    // The reduction after the whole pipeline ends the iteration later than one overlapped
    // with the backward, and after the pipeline's own end.
    const Result later = run(2, 0, 1, false);
    REQUIRE(later.status == Status::ok);
    CHECK(later.iteration_time > plain2.iteration_time);
    CHECK(later.iteration_time > later.makespan);
}
