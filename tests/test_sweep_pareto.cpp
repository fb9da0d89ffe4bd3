// The Pareto front of sweep results (float noise, ties) and `pipesim pareto`: rows of
// different problems refused, --where and --group-by, the same units printed and drawn.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "cli_runner.hpp"
#include "sweep/pareto.hpp"
#include "sweep/results.hpp"

using namespace pipesim::sweep;
using pipesim::test::CommandResult;
using pipesim::test::lines_of;
using pipesim::test::read_file;
using pipesim::test::run_pipesim;
namespace fs = std::filesystem;

namespace {

Result row(int index, double memory, double throughput) {
    Result r;
    r.job.index = index;
    r.job.schedule = "1f1b";
    r.peak_activation = memory;
    r.throughput = throughput;
    return r;
}

}  // namespace

TEST_CASE("values that differ by float noise rank as equal on the Pareto front", "[sweep]") {
    // Row 1 has "less" memory than row 0 only by rounding: exactly compared it would push
    // row 0 off the front; within the tolerance they tie and both stay.
    CHECK(pareto_front({row(0, 79, 10), row(1, 78.99999999999996, 10)}, {}) ==
          std::vector<std::size_t>{0, 1});
    // Row 2 would be on the front only thanks to noise in its memory; row 3 has the same
    // memory and clearly more throughput.
    CHECK(pareto_front({row(2, 78.99999999999996, 9), row(3, 79, 10)}, {}) ==
          std::vector<std::size_t>{1});
    // Noise in the throughput does not beat a real saving in memory, nor the reverse.
    CHECK(pareto_front({row(4, 70, 10), row(5, 79, 10.000000000000002)}, {}) ==
          std::vector<std::size_t>{0});
    // Tolerance 0 compares exactly.
    ParetoOptions exact;
    exact.tolerance = 0;
    CHECK(pareto_front({row(0, 79, 10), row(1, 78.99999999999996, 10)}, exact) ==
          std::vector<std::size_t>{1});
}

TEST_CASE("real differences still decide the front, in either direction of y", "[sweep]") {
    const std::vector<Result> rows = {row(0, 4, 0.2), row(1, 4, 0.27), row(2, 7, 0.33),
                                      row(3, 4.001, 0.31), row(4, 2, 0.18)};
    CHECK(pareto_front(rows, {}) == std::vector<std::size_t>{4, 1, 3, 2});
    ParetoOptions bubble;  // lower is better on both axes
    bubble.y = Metric::bubble_rate;
    std::vector<Result> b = rows;
    for (std::size_t i = 0; i < b.size(); ++i)
        b[i].bubble_rate = 1 - b[i].throughput;
    CHECK(pareto_front(b, bubble) == std::vector<std::size_t>{4, 1, 3, 2});
}

TEST_CASE("a column where higher is better ranks that way on x too", "[sweep]") {
    // The axes swapped: throughput (maximized) on x, memory (minimized) on y. The front is
    // the same rows as with memory on x: row 0 (0.242, 4) is beaten by row 1 (0.302, 3).
    const std::vector<Result> rows = {row(0, 4, 0.242), row(1, 3, 0.302), row(2, 4, 0.314)};
    ParetoOptions swapped;
    swapped.x = Metric::throughput;
    swapped.y = Metric::peak_activation;
    CHECK(pareto_front(rows, swapped) == std::vector<std::size_t>{2, 1});
    CHECK(pareto_front(rows, {}) == std::vector<std::size_t>{1, 2});
}

namespace {

const std::string data = std::string(PIPESIM_SOURCE_DIR) + "/tests/data/sweeps/";

struct Scratch {
    fs::path dir;
    explicit Scratch(const std::string& name)
        : dir(fs::temp_directory_path() /
              ("pipesim_pareto_" + name + "_" + std::to_string(::getpid()))) {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

// tiny.json: 1f1b, zb-h1, interleaved-1f1b, zb-v at p=4, m 4 and 8, v 0 and 3.
std::string tiny_results(const Scratch& s) {
    const std::string csv = s / "r.csv";
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + csv + " -j 1").exit_code == 0);
    return csv;
}

}  // namespace

TEST_CASE("pareto refuses rows of different problems on one front, in one line", "[sweep][cli]") {
    Scratch s("mixed");
    const std::string csv = tiny_results(s);
    const CommandResult r = run_pipesim("pareto " + csv + " -o " + (s / "p.dot"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("differ in m (4, 8)") && Catch::Contains("--where") &&
                          Catch::Contains("--group-by"));
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK_FALSE(fs::exists(s / "p.dot"));
    const CommandResult bad =
        run_pipesim("pareto " + csv + " -o " + (s / "p.dot") + " --group-by m,nope");
    CHECK(bad.exit_code == 2);
    const CommandResult twice =
        run_pipesim("pareto " + csv + " -o " + (s / "p.dot") + " --group-by m,p,m");
    CHECK(twice.exit_code == 2);
    CHECK(twice.err ==
          "pipesim pareto: --group-by: column 'm' is given twice: name each column "
          "once\n");
    // One column on both axes, or a model's column on rows without a model: no front.
    const std::string group = " -o " + (s / "p.dot") + " --group-by m";
    const CommandResult same =
        run_pipesim("pareto " + csv + group + " --x peak_activation --y peak_activation");
    CHECK(same.exit_code == 2);
    CHECK_THAT(same.err, Catch::Contains("both are peak_activation"));
    const CommandResult bytes = run_pipesim("pareto " + csv + group + " --x peak_memory");
    CHECK(bytes.exit_code == 2);
    CHECK_THAT(bytes.err, Catch::Contains("peak_memory needs results with a model"));
    CHECK_FALSE(fs::exists(s / "p.dot"));
}

TEST_CASE("pareto --format names the format of a name without an extension only", "[sweep][cli]") {
    Scratch s("format");
    const std::string csv = tiny_results(s);
    const std::string front = " --where m=8 --where v=0 ";
    // Beside an extension it was ignored, even an unknown one, and an SVG written.
    for (const char* format : {"png", "bogus"}) {
        const CommandResult r =
            run_pipesim("pareto " + csv + front + "-o " + (s / "p.svg") + " --format " + format);
        CHECK(r.exit_code == 2);
        CHECK(r.err == fmt::format("pipesim pareto: --format '{}': -o '{}' takes its format from "
                                   "its extension\n",
                                   format, s / "p.svg"));
        CHECK_FALSE(fs::exists(s / "p.svg"));
    }
    // Without an extension it names the format.
    const CommandResult dot =
        run_pipesim("pareto " + csv + front + "-o " + (s / "p") + " --format dot");
    CHECK(dot.exit_code == 0);
    std::ifstream written(s / "p");
    std::string first;
    std::getline(written, first);
    CHECK_THAT(first, Catch::StartsWith("digraph") || Catch::StartsWith("graph"));
}

TEST_CASE("a picture wider than cairo draws is drawn smaller without a word from Graphviz",
          "[sweep][cli]") {
    Scratch s("wide");
    const std::string csv = tiny_results(s);
    // A 20,000-character title: about 140,000 points wide, 388,000 pixels at 192 dpi.
    const CommandResult r = run_pipesim("pareto " + csv + " --where m=8 --where v=0 -o " +
                                        (s / "p.png") + " --title " + std::string(20000, 'W'));
    CHECK(r.exit_code == 0);
    // Graphviz's cairo plugin printed "(null): graph is too large for cairo-renderer bitmaps".
    CHECK(r.err.empty());
    std::ifstream png(s / "p.png", std::ios::binary);
    std::array<unsigned char, 24> header{};
    png.read(reinterpret_cast<char*>(header.data()), header.size());
    REQUIRE(png.gcount() == 24);
    const std::uint32_t width = (std::uint32_t{header[16]} << 24) |
                                (std::uint32_t{header[17]} << 16) |
                                (std::uint32_t{header[18]} << 8) | header[19];
    CHECK(width > 30000);
    CHECK(width <= 32767);
}

TEST_CASE("pareto on results without a finished row names the file", "[sweep][cli]") {
    Scratch s("empty");
    const std::string csv = tiny_results(s);
    const std::string header = s / "header.csv";
    {
        std::ifstream in(csv);
        std::string line;
        std::getline(in, line);
        std::ofstream(header) << line << "\n";
    }
    const CommandResult r = run_pipesim("pareto " + header + " -o " + (s / "p.dot"));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "pipesim pareto: " + header + ": no row with status ok to plot (0 rows)\n");
    CHECK_FALSE(fs::exists(s / "p.dot"));
    // Rows that ran and were refused are counted by status (it said "none finished").
    const std::string capped = s / "capped.json", results = s / "capped.csv";
    std::ofstream(capped) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": ["1f1b", "zb-h1", "gpipe"], "p": 4, "m": 8, "model": "llama3-8b",
        "gpu": "a100-80gb", "mb": 1, "mem_limit": 1})";
    REQUIRE(run_pipesim("sweep " + capped + " -o " + results + " --progress none").exit_code == 0);
    const CommandResult over = run_pipesim("pareto " + results + " -o " + (s / "p.dot"));
    CHECK(over.exit_code == 2);
    CHECK(over.err == "pipesim pareto: " + results +
                          ": no row with status ok to plot (3 rows: 3 over-memory)\n");
}

TEST_CASE("pareto says which --where kept no row, and what the rows have", "[sweep][cli]") {
    Scratch s("where");
    const std::string csv = tiny_results(s);
    const std::string out = " -o " + (s / "p.dot");
    const CommandResult none = run_pipesim("pareto " + csv + out + " --where m=16");
    CHECK(none.exit_code == 2);
    CHECK(none.err ==
          "pipesim pareto: --where m=16: no row with status ok has m '16'; they have 4, 8\n");
    const CommandResult name =
        run_pipesim("pareto " + csv + out + " --where m=4 --where schedule=zb-h2");
    CHECK(name.exit_code == 2);
    CHECK_THAT(name.err, Catch::Contains("--where schedule=zb-h2: no row with status ok has "
                                         "schedule 'zb-h2'; they have 1f1b, interleaved-1f1b, "
                                         "zb-h1, zb-v"));
    // Each matches some rows, but no row both: zb-v does not run with v = 3.
    const CommandResult both =
        run_pipesim("pareto " + csv + out + " --where schedule=zb-v --where v=3");
    CHECK(both.exit_code == 2);
    CHECK(both.err ==
          "pipesim pareto: --where schedule=zb-v --where v=3: no row with status ok "
          "matches all of these together\n");
    // Analytic rows have no cluster: the empty cell is named as such (it listed nothing).
    const CommandResult empty = run_pipesim("pareto " + csv + out + " --where cluster=dgx-a100");
    CHECK(empty.exit_code == 2);
    CHECK(empty.err ==
          "pipesim pareto: --where cluster=dgx-a100: no row with status ok has "
          "cluster 'dgx-a100'; they have (empty)\n");
    CHECK_FALSE(fs::exists(s / "p.dot"));
    const CommandResult grouped = run_pipesim("pareto " + csv + out + " --group-by m,cluster");
    INFO(grouped.err);
    REQUIRE(grouped.exit_code == 0);
    CHECK_THAT(grouped.out, Catch::Contains("\nm=4, cluster=(empty):\n"));
}

TEST_CASE("pareto --group-by draws and prints one front per group", "[sweep][cli]") {
    Scratch s("grouped");
    const std::string csv = tiny_results(s);
    const CommandResult r = run_pipesim("pareto " + csv + " -o " + (s / "p.dot") + " --group-by m");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("\nm=4:\n") && Catch::Contains("\nm=8:\n"));
    const std::string dot = read_file(s / "p.dot");
    // Legend: one entry per group (and its marker node), titled by the grouping column.
    CHECK_THAT(dot, Catch::Contains("-m ") && Catch::Contains("-m=4 ") && Catch::Contains("-m=8 "));
    CHECK_THAT(dot, Catch::Contains("legend_1 [pos="));
    CHECK_THAT(dot, !Catch::Contains("legend_2 [pos="));
    // With --where the same rows make the m=8 group alone.
    const CommandResult one =
        run_pipesim("pareto " + csv + " -o " + (s / "q.dot") + " --where m=8");
    REQUIRE(one.exit_code == 0);
    const std::vector<std::string> grouped = lines_of(r.out);
    const auto m8 = std::find(grouped.begin(), grouped.end(), "m=8:");
    REQUIRE(m8 != grouped.end());
    const std::vector<std::string> alone = lines_of(one.out);
    CHECK(std::vector<std::string>(m8 + 1, grouped.end()) ==
          std::vector<std::string>(alone.begin() + 1, alone.end()));
    // The legend speaks of lines only where fronts have two points or more (it promised lines
    // where every front was one point), counted from the printed fronts.
    std::size_t groups = 0, single = 0, points = 0;
    for (const std::string& line : grouped) {
        if (line.starts_with("m=") && line.ends_with(":")) {
            if (groups > 0 && points < 2) ++single;
            ++groups;
            points = 0;
        } else if (line.starts_with("  job")) {
            ++points;
        }
    }
    if (groups > 0 && points < 2) ++single;
    REQUIRE(groups == 2);
    const std::string note =
        single == groups ? "each group's Pareto front is a single point (no lines)"
        : single > 0 ? fmt::format("lines: the Pareto front of each ({} of {} are a single point)",
                                   single, groups)
                     : std::string("lines: the Pareto front of each");
    CAPTURE(single);
    CHECK_THAT(dot, Catch::Contains(note));
}

TEST_CASE("pareto labels points that differ only in mem_limit by their limits", "[sweep][cli]") {
    Scratch s("limits");
    {
        std::ofstream grid(s / "g.json");
        grid << R"({"format": "pipesim-sweep", "version": 1, "schedule": ["v-half"], "p": [4],
                    "m_per_p": [2], "costs": [[1, 2, 1]], "mem_limit": [3, 100]})";
    }
    REQUIRE(run_pipesim("sweep " + (s / "g.json") + " -o " + (s / "r.csv") + " -j 1").exit_code ==
            0);
    const CommandResult r = run_pipesim("pareto " + (s / "r.csv") + " -o " + (s / "p.dot"));
    REQUIRE(r.exit_code == 0);
    // Both rows tie and are on the front; their labels told them apart by job number only.
    CHECK_THAT(r.out, Catch::Contains("mem_limit=3 ") && Catch::Contains("mem_limit=100 "));
    const std::string dot = read_file(s / "p.dot");
    CHECK_THAT(dot, Catch::Contains("mem_limit=3") && Catch::Contains("mem_limit=100"));
}

TEST_CASE("pareto prints the front in the unit the plot shows: GiB, not bytes", "[sweep][cli]") {
    Scratch s("units");
    std::ofstream(s / "grid.json") << R"({"format": "pipesim-sweep", "version": 1,
  "schedule": ["1f1b", "zb-h1", "zb-v"], "p": 4, "global_batch": 8, "model": "zb-1.5b",
  "gpu": "a100-80gb", "mb": [1, 2]})";
    REQUIRE(
        run_pipesim("sweep " + (s / "grid.json") + " -o " + (s / "r.csv") + " -j 1").exit_code ==
        0);
    const CommandResult r = run_pipesim("pareto " + (s / "r.csv") + " -o " + (s / "p.dot"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(read_file(s / "p.dot"), Catch::Contains("peak memory per GPU (GiB)"));
    // Each printed memory figure is its row's peak_memory in GiB.
    const ResultsFile results = load_results(s / "r.csv");
    std::size_t checked = 0;
    for (const std::string& line : lines_of(r.out)) {
        const auto at = line.find("peak_memory ");
        if (line.rfind("  job ", 0) != 0 || at == std::string::npos) continue;
        CHECK_THAT(line, Catch::Contains(" GiB "));
        const int job = std::stoi(line.substr(line.find("job ") + 4));
        const double printed = std::stod(line.substr(at + 12));
        for (const Result& row : results.rows)
            if (row.job.index == job) {
                CHECK(printed == Approx(row.peak_memory / (1024.0 * 1024 * 1024)).epsilon(1e-5));
                ++checked;
            }
    }
    CHECK(checked >= 1);
}

TEST_CASE("with a model a front compares layouts that train one batch on as many GPUs",
          "[sweep][cli]") {
    Scratch s("layouts");
    // 8 GPUs as p 4 × dp 2 or p 8 × dp 1, 16 sequences an iteration: m = 16 / (mb·dp).
    std::ofstream(s / "grid.json") << R"({"format": "pipesim-sweep", "version": 1,
  "schedule": ["1f1b", "zb-v"], "p": [4, 8], "global_batch": 16, "model": "zb-1.5b",
  "gpu": "a100-80gb", "mb": [1, 3], "dp": [1, 2]})";
    REQUIRE(
        run_pipesim("sweep " + (s / "grid.json") + " -o " + (s / "r.csv") + " -j 1").exit_code ==
        0);
    const ResultsFile results = load_results(s / "r.csv");
    std::size_t ok = 0;
    for (const Result& row : results.rows) {
        INFO(row.job.index);
        if (row.job.mb == 3) {  // 16 is no multiple of 3 or 6
            CHECK(row.status == Status::infeasible);
            CHECK_THAT(row.reason,
                       Catch::StartsWith("the global batch of 16 sequences is not a multiple of "
                                         "mb·dp = 3·"));
            continue;
        }
        CHECK(row.job.m * row.job.dp == 16);
        ok += row.status == Status::ok ? 1 : 0;
    }
    CHECK(ok == 8);
    // p 4 × dp 2 beside p 8 × dp 1: one problem; the labels name p and m.
    const CommandResult eight =
        run_pipesim("pareto " + (s / "r.csv") + " -o " + (s / "p.dot") + " --where gpus=8");
    REQUIRE(eight.exit_code == 0);
    CHECK_THAT(read_file(s / "p.dot"), Catch::Contains("p=4") && Catch::Contains("p=8"));
    CHECK_THAT(read_file(s / "p.dot"), Catch::Contains("r.csv, gpus=8"));  // the title
    // Unfiltered, 4, 8 and 16 GPUs are three problems.
    const CommandResult all = run_pipesim("pareto " + (s / "r.csv") + " -o " + (s / "p.dot"));
    CHECK(all.exit_code == 2);
    CHECK_THAT(all.err, Catch::Contains("the rows differ in gpus (4, 8, 16)"));
    // One m for microbatches of 1 and 2 sequences: two batches, refused.
    std::ofstream(s / "mixed.json") << R"({"format": "pipesim-sweep", "version": 1,
  "schedule": "1f1b", "p": 4, "m": 8, "model": "zb-1.5b", "gpu": "a100-80gb", "mb": [1, 2]})";
    REQUIRE(run_pipesim("sweep " + (s / "mixed.json") + " -o " + (s / "mixed.csv") + " -j 1")
                .exit_code == 0);
    const CommandResult mixed = run_pipesim("pareto " + (s / "mixed.csv") + " -o " + (s / "m.dot"));
    CHECK(mixed.exit_code == 2);
    CHECK_THAT(mixed.err, Catch::Contains("the rows differ in global_batch (8, 16)"));
    // global_batch (m·mb·dp, not a CSV column) picks one batch or groups by it.
    const CommandResult picked = run_pipesim("pareto " + (s / "mixed.csv") + " -o " +
                                             (s / "m.dot") + " --where global_batch=16");
    CHECK(picked.exit_code == 0);
    CHECK_THAT(picked.out, !Catch::Contains("mb="));  // one row left: nothing varies
    CHECK(run_pipesim("pareto " + (s / "mixed.csv") + " -o " + (s / "m.dot") +
                      " --group-by global_batch")
              .exit_code == 0);
}

TEST_CASE("pareto names an empty cell among the values the rows differ in", "[sweep][cli]") {
    // One row given a cluster: the others' empty cluster is a value too (the message listed
    // "cluster (dgx-h100:16)" alone).
    Scratch s("empty_cell");
    ResultsFile results = load_results(tiny_results(s));
    REQUIRE(results.rows.size() >= 2);
    results.rows[0].job.cluster = "dgx-h100:16";
    std::string text = csv_header() + "\n";
    for (const Result& row : results.rows)
        text += csv_row(row) + "\n";
    std::ofstream(s / "edited.csv") << text;
    const CommandResult r =
        run_pipesim("pareto " + (s / "edited.csv") + " -o " + (s / "p.dot") + " --group-by m");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("differ in cluster (dgx-h100:16, (empty))"));
    // Named within its group, with the advice that fits --group-by given.
    CHECK_THAT(r.err, Catch::Contains("the rows of the group m=") &&
                          Catch::Contains("or add the column to --group-by"));
}

TEST_CASE("pareto draws a row given twice once", "[sweep][cli]") {
    // Two results files joined by hand: every row twice. The front lists each point once,
    // as it does for the file alone.
    Scratch s("twice");
    const std::string csv = tiny_results(s);
    const std::string text = read_file(csv);
    const std::size_t body = text.find('\n') + 1;
    const fs::path doubled = s / "doubled.csv";
    std::ofstream(doubled) << text << text.substr(body);
    const CommandResult once =
        run_pipesim("pareto " + csv + " -o " + (s / "a.dot") + " --group-by m");
    const CommandResult twice =
        run_pipesim("pareto " + doubled.string() + " -o " + (s / "b.dot") + " --group-by m");
    REQUIRE(once.exit_code == 0);
    REQUIRE(twice.exit_code == 0);
    CHECK(lines_of(once.out).size() > 2);
    CHECK(lines_of(twice.out) == lines_of(once.out));
}
