// pipesim sweep / merge / pareto end to end: rows, infeasible configurations, a killed and
// resumed sweep, shards, and one reproduced number against its closed form.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli_runner.hpp"
#include "sweep/results.hpp"

using namespace pipesim::test;
namespace fs = std::filesystem;

namespace {

const std::string data = std::string(PIPESIM_SOURCE_DIR) + "/tests/data/sweeps/";

// A fresh scratch directory per test case.
fs::path scratch(const std::string& name) {
    const fs::path dir =
        fs::temp_directory_path() / ("pipesim_sweep_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// The header, then the data rows sorted (rows arrive in completion order).
std::vector<std::string> sorted_rows(const fs::path& csv) {
    std::vector<std::string> lines = lines_of(read_file(csv));
    if (!lines.empty()) std::sort(lines.begin() + 1, lines.end());
    return lines;
}

std::size_t count_lines(const fs::path& file) {
    const std::string text = read_file(file);
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::string field(const std::string& row, int index) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (char c : row) {
        if (c == '"')
            quoted = !quoted;
        else if (c == ',' && !quoted)
            fields.emplace_back();
        else
            fields.back() += c;
    }
    return fields.at(static_cast<std::size_t>(index));
}

// The field of `row` under header column `name` (sweep::csv_header()).
std::string field(const std::string& row, std::string_view name) {
    const std::string header = pipesim::sweep::csv_header();
    int index = 0;
    for (std::size_t at = 0;; ++index) {
        const std::size_t end = header.find(',', at);
        if (header.substr(at, end - at) == name) return field(row, index);
        if (end == std::string::npos) FAIL("no column " << name);
        at = end + 1;
    }
}

}  // namespace

TEST_CASE("a sweep into a folder that takes no new files says so before any job", "[sweep][cli]") {
    if (::access("/proc/sys", W_OK | X_OK) == 0) return;  // Linux's /proc/sys refuses them
    const fs::path dir = scratch("readonly");
    const fs::path grid = dir / "g.json";
    std::ofstream(grid) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": "1f1b", "p": 2, "m": 4})";
    const CommandResult r = run_pipesim("sweep " + grid.string() + " -o /proc/sys/r.csv -j 1");
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "pipesim sweep: cannot write /proc/sys/r.csv: its folder /proc/sys takes no new files: "
          "Permission denied\n");
}

TEST_CASE("a job whose passes take no time is infeasible, not ok", "[sweep][cli]") {
    const fs::path dir = scratch("zero");
    const fs::path grid = dir / "zero.json";
    std::ofstream(grid) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": "1f1b", "p": 2, "m": 4, "costs": [[0, 0, 0], [1, 2, 1]]})";
    const fs::path out = dir / "r.csv";
    const CommandResult r = run_pipesim("sweep " + grid.string() + " -o " + out.string() + " -j 1");
    REQUIRE(r.exit_code == 0);
    const std::vector<std::string> rows = sorted_rows(out);
    REQUIRE(rows.size() == 3);
    CHECK(field(rows[1], "status") == "infeasible");
    CHECK_THAT(field(rows[1], "reason"), Catch::Contains("every pass takes no time"));
    CHECK(field(rows[2], "status") == "ok");
}

TEST_CASE(
    "sweep writes one row per job, and infeasible and over-memory jobs become rows with a "
    "reason",
    "[sweep][cli]") {
    const fs::path dir = scratch("rows");
    const fs::path out = dir / "r.csv";
    const CommandResult r = run_pipesim("sweep " + data + "tiny.json -o " + out.string() + " -j 2");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("16 jobs") && Catch::Contains("2 over memory") &&
                          Catch::Contains("6 infeasible"));
    const std::vector<std::string> rows = sorted_rows(out);
    REQUIRE(rows.size() == 17);
    CHECK(rows[0].rfind("job,engine,schedule,p,m,v,", 0) == 0);
    bool saw_infeasible = false, saw_over = false;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const std::string status = field(rows[i], "status");
        if (status == "infeasible") {
            saw_infeasible = true;
            CHECK_THAT(field(rows[i], "reason"), Catch::Contains("chunk"));
        }
        if (status == "over-memory") {
            saw_over = true;
            CHECK_THAT(field(rows[i], "reason"), Catch::StartsWith("device 0 holds a peak "
                                                                   "activation of ") &&
                                                     Catch::Contains("more than the cap of 4.5"));
        }
    }
    CHECK(saw_infeasible);
    CHECK(saw_over);
    // 1F1B, p=4, m=8, the schedule's own v: bubble (p−1)/(m+p−1) = 3/11.
    const auto one_f_one_b = std::find_if(rows.begin() + 1, rows.end(), [](const std::string& row) {
        return field(row, "schedule") == "1f1b" && field(row, "m") == "8" && field(row, "v") == "0";
    });
    REQUIRE(one_f_one_b != rows.end());
    CHECK(field(*one_f_one_b, "status") == "ok");
    CHECK(std::stod(field(*one_f_one_b, "bubble_rate")) == Approx(3.0 / 11.0).epsilon(1e-12));
    fs::remove_all(dir);
}

TEST_CASE("an over-memory row's reason names the device of its peak_memory", "[sweep][cli]") {
    const fs::path dir = scratch("worst");
    const fs::path grid = dir / "worst.json";
    // Every device of zb-v over 40 GiB; device 0, the first over, is not the fullest.
    std::ofstream(grid) << R"({"format": "pipesim-sweep", "version": 1, "schedule": "zb-v",
        "p": 3, "m": 6, "model": "llama2-13b", "gpu": "a100-40gb", "mb": 1})";
    const fs::path out = dir / "r.csv";
    REQUIRE(run_pipesim("sweep " + grid.string() + " -o " + out.string() + " -j 1").exit_code == 0);
    const std::vector<std::string> rows = sorted_rows(out);
    REQUIRE(rows.size() == 2);
    REQUIRE(field(rows[1], "status") == "over-memory");
    const std::string reason = field(rows[1], "reason");
    const double peak = std::stod(field(rows[1], "peak_memory")) / (1u << 30);
    CHECK_THAT(reason, Catch::Contains(fmt::format("needs {:.1f} GiB, more than the 40.0 GiB of "
                                                   "a100-40gb",
                                                   peak)));
    CHECK_THAT(reason, Catch::EndsWith("(3 of 3 devices are over)"));
    CHECK_THAT(reason, !Catch::StartsWith("device 0 "));
    fs::remove_all(dir);
}

TEST_CASE("a row over the grid's cap names the device of its peak and how many are over",
          "[sweep][cli]") {
    const fs::path dir = scratch("cap");
    const fs::path grid = dir / "cap.json";
    // Interleaved 1F1B, p 4, v 2: device d warms up 2(p−1−d) + (v−1)p chunk forwards and
    // holds one more, each half a stage: 5.5, 4.5, 3.5 and 2.5 stages' activations.
    std::ofstream(grid) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": "interleaved-1f1b", "p": 4, "m": 8, "v": 2, "mem_limit": 3})";
    const fs::path out = dir / "r.csv";
    REQUIRE(run_pipesim("sweep " + grid.string() + " -o " + out.string() + " -j 1").exit_code == 0);
    std::vector<std::string> rows = sorted_rows(out);
    REQUIRE(rows.size() == 2);
    CHECK(field(rows[1], "status") == "over-memory");
    CHECK(field(rows[1], "reason") ==
          "device 0 holds a peak activation of 5.5, more than the cap of 3 (3 of 4 devices are "
          "over)");

    // With a model, the whole device's bytes against a cap in bytes: the peak is peak_memory.
    std::ofstream(grid, std::ios::trunc) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": "1f1b", "p": 2, "m": 4, "model": "zb-1.5b", "gpu": "a100-80gb", "mb": 8,
        "mem_limit": "20 GiB"})";
    fs::remove(out);
    REQUIRE(run_pipesim("sweep " + grid.string() + " -o " + out.string() + " -j 1").exit_code == 0);
    rows = sorted_rows(out);
    REQUIRE(rows.size() == 2);
    CHECK(field(rows[1], "status") == "over-memory");
    const double peak = std::stod(field(rows[1], "peak_memory")) / (1u << 30);
    CHECK_THAT(
        field(rows[1], "reason"),
        Catch::StartsWith("device 0 needs ") &&
            Catch::Contains(fmt::format("needs {:.1f} GiB, more than the cap of 20.0 GiB", peak)));

    // A peak within rounding of the cap is at the cap: p 3, v 5 holds fifths of a stage, and
    // device 0's 3.4 stages added up to 3.400000000000001, once over a cap of 3.4.
    std::ofstream(grid, std::ios::trunc) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": "interleaved-1f1b", "p": 3, "m": 6, "v": 5, "mem_limit": 3.4})";
    fs::remove(out);
    REQUIRE(run_pipesim("sweep " + grid.string() + " -o " + out.string() + " -j 1").exit_code == 0);
    rows = sorted_rows(out);
    REQUIRE(rows.size() == 2);
    CHECK(std::stod(field(rows[1], "peak_activation")) == Approx(3.4));
    CHECK(field(rows[1], "status") == "ok");
    fs::remove_all(dir);
}

TEST_CASE("a sweep killed midway and resumed gives the rows of an uninterrupted one",
          "[sweep][cli]") {
    const fs::path dir = scratch("resume");
    const fs::path whole = dir / "whole.csv", resumed = dir / "resumed.csv";
    const std::string grid = data + "simgrid.json";
    REQUIRE(run_pipesim("sweep " + grid + " -o " + whole.string() + " -j 2 --progress none")
                .exit_code == 0);

    // Start the same sweep with one worker and kill it once a few of its 72 rows are written:
    // each SimGrid job is a fresh process, so it is still far from done then.
    const pid_t pid = pipesim::test::start_pipesim(
        {"sweep", grid, "-o", resumed.string(), "-j", "1", "--progress", "none"});
    REQUIRE(pid > 0);
    int status = 0;
    bool exited = false;
    while (!exited) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
        } else if (fs::exists(resumed) && count_lines(resumed) >= 4) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            exited = true;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    const std::size_t before = count_lines(resumed);
    INFO("rows written before the kill: " << before - 1);
    // The kill, not the end of the sweep, stopped it: the resume below has work to do.
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK(before - 1 < count_lines(whole) - 1);
    // The lock on the file went with the killed sweep, though its worker may still be ending:
    // a worker holding the file kept it, and the resume below was refused. A worker forked
    // just before the kill shares the lock until its first lines close the file, a moment on
    // a loaded machine (once seen here); half a second is what a user resuming at once waits.
    {
        const int fd = ::open(resumed.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        REQUIRE(fd >= 0);
        bool locked = false;
        for (int attempt = 0; attempt < 50 && !locked; ++attempt) {
            locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
            if (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CHECK(locked);
        ::close(fd);
    }
    // Simulate a row cut short by the kill, too.
    { std::ofstream(resumed, std::ios::app) << "17,simgrid,zb-h1,8"; }

    const CommandResult again =
        run_pipesim("sweep " + grid + " -o " + resumed.string() + " -j 2 --progress none");
    REQUIRE(again.exit_code == 0);
    CHECK(sorted_rows(resumed) == sorted_rows(whole));

    // Resuming a finished sweep runs nothing and changes nothing.
    const CommandResult third = run_pipesim("sweep " + grid + " -o " + resumed.string() + " -j 2");
    CHECK(third.exit_code == 0);
    CHECK_THAT(third.err, Catch::Contains("0 ran"));
    CHECK(sorted_rows(resumed) == sorted_rows(whole));
    fs::remove_all(dir);
}

TEST_CASE("shards merged give the whole sweep, in job order", "[sweep][cli]") {
    const fs::path dir = scratch("shards");
    const std::string grid = data + "tiny.json";
    REQUIRE(
        run_pipesim("sweep " + grid + " -o " + (dir / "whole.csv").string() + " -j 1").exit_code ==
        0);
    std::string shards;
    for (int i = 0; i < 3; ++i) {
        const fs::path shard = dir / ("shard" + std::to_string(i) + ".csv");
        REQUIRE(run_pipesim("sweep " + grid + " -o " + shard.string() + " -j 1 --shard " +
                            std::to_string(i) + "/3")
                    .exit_code == 0);
        shards += " " + shard.string();
    }
    const fs::path merged = dir / "merged.csv";
    { std::ofstream(merged) << "known\n"; }
    const CommandResult two = run_pipesim("merge" + shards.substr(0, shards.rfind(' ')) + " -o " +
                                          merged.string() + " --grid " + grid);
    CHECK(two.exit_code == 2);  // missing jobs are a fault of the inputs
    // Its summary line, then the error as every command words one (it read "merge: error:").
    CHECK_THAT(two.err, Catch::Contains("\npipesim merge: ") && Catch::Contains("jobs of") &&
                            Catch::Contains("missing"));
    // The jobs that are there are merged all the same, as the summary says (the file was left
    // as it was while every output waited for a run that ended with 0).
    const std::vector<std::string> partial = lines_of(read_file(merged));
    REQUIRE(partial.size() > 1);
    CHECK(partial.front() == lines_of(read_file(dir / "whole.csv")).front());
    CHECK(partial.size() < lines_of(read_file(dir / "whole.csv")).size());
    const CommandResult all =
        run_pipesim("merge" + shards + " -o " + merged.string() + " --grid " + grid);
    REQUIRE(all.exit_code == 0);
    CHECK(sorted_rows(merged) == sorted_rows(dir / "whole.csv"));
    const std::vector<std::string> lines = lines_of(read_file(merged));
    for (std::size_t i = 1; i < lines.size(); ++i)
        CHECK(field(lines[i], "job") == std::to_string(i - 1));
    // A shard's file resumed with another --shard: its rows are the grid's jobs, of another
    // shard (it said they were not the grid's jobs).
    const std::string shard0 = (dir / "shard0.csv").string();
    const std::string before = read_file(shard0);
    const CommandResult other =
        run_pipesim("sweep " + grid + " -o " + shard0 + " -j 1 --shard 1/3");
    CHECK(other.exit_code == 2);
    CHECK_THAT(other.err, Catch::Contains("belongs to another shard of this grid") &&
                              Catch::Contains("resume each shard (--shard I/N) with the -o file"));
    CHECK(read_file(shard0) == before);
    fs::remove_all(dir);
}

TEST_CASE("a sweep told to write its results over its grid file refuses and keeps the grid",
          "[sweep][cli]") {
    // It read the grid as a results file to resume and refused it for its header.
    const fs::path dir = scratch("grid-as-output");
    const fs::path grid = dir / "grid.json";
    fs::copy_file(data + "tiny.json", grid);
    const std::string before = read_file(grid);
    for (const std::string& output : {grid.string(), (dir / "." / "grid.json").string()}) {
        const CommandResult r = run_pipesim("sweep " + grid.string() + " -o " + output);
        CHECK(r.exit_code == 2);
        CHECK(r.err == "pipesim sweep: -o '" + output +
                           "' is an input of this run, which writing it would replace: give "
                           "another file\n");
    }
    CHECK(read_file(grid) == before);
    fs::remove_all(dir);
}

TEST_CASE("a row whose job index is not its grid's job is refused by resume and merge",
          "[sweep][cli]") {
    // Edited by hand to job 99, job 2's row was kept by merge --grid (which then called the
    // grid complete without job 2) and skipped job 2 on resume.
    const fs::path dir = scratch("job-index");
    const fs::path a = dir / "a.csv", edited = dir / "edited.csv";
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + a.string() + " -j 1").exit_code == 0);
    pipesim::sweep::ResultsFile results = pipesim::sweep::load_results(a.string());
    REQUIRE(results.rows.size() == 16);
    results.rows[2].job.index = 99;
    std::string text = pipesim::sweep::csv_header() + "\n";
    for (const pipesim::sweep::Result& r : results.rows)
        text += pipesim::sweep::csv_row(r) + "\n";
    std::ofstream(edited) << text;
    const CommandResult merged =
        run_pipesim("merge " + edited.string() + " -o " + (dir / "m.csv").string() + " --grid " +
                    data + "tiny.json");
    CHECK(merged.exit_code == 2);
    CHECK_THAT(merged.err, Catch::Contains("a row names job 99"));
    CHECK_FALSE(fs::exists(dir / "m.csv"));
    const CommandResult resumed =
        run_pipesim("sweep " + data + "tiny.json -o " + edited.string() + " -j 1");
    CHECK(resumed.exit_code == 2);
    CHECK_THAT(resumed.err, Catch::Contains(edited.string() + ": a row names job 99"));
    CHECK(read_file(edited) == text);  // nothing appended
}

TEST_CASE("a results file belongs to one grid: resume and merge refuse another's rows",
          "[sweep][cli]") {
    const fs::path dir = scratch("identity");
    const fs::path other = dir / "other.json";
    std::ofstream(other) << R"({"format": "pipesim-sweep", "version": 1,
        "schedule": "1f1b", "p": 4, "m": [4, 8]})";
    const fs::path a = dir / "a.csv", b = dir / "b.csv";
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + a.string() + " -j 1").exit_code == 0);
    REQUIRE(run_pipesim("sweep " + other.string() + " -o " + b.string() + " -j 1").exit_code == 0);
    // Every row carries its grid's identity: the same for all rows of a file, not the same
    // for the two grids.
    const std::vector<std::string> rows_a = sorted_rows(a), rows_b = sorted_rows(b);
    REQUIRE(rows_a.size() == 17);
    REQUIRE(rows_b.size() == 3);
    const std::string id_a = field(rows_a[1], "grid"), id_b = field(rows_b[1], "grid");
    CHECK(id_a.size() == 16);
    for (std::size_t i = 1; i < rows_a.size(); ++i)
        CHECK(field(rows_a[i], "grid") == id_a);
    CHECK(id_a != id_b);

    // Resuming b's grid into a copy of a's results: refused before any job runs.
    const fs::path mixed = dir / "mixed.csv";
    fs::copy_file(a, mixed);
    const CommandResult resume =
        run_pipesim("sweep " + other.string() + " -o " + mixed.string() + " -j 1");
    CHECK(resume.exit_code == 2);
    CHECK_THAT(resume.err, Catch::Contains("holds results of another grid"));
    CHECK(std::count(resume.err.begin(), resume.err.end(), '\n') == 1);
    CHECK(read_file(mixed) == read_file(a));  // nothing appended

    const CommandResult merged =
        run_pipesim("merge " + a.string() + " " + b.string() + " -o " + (dir / "m.csv").string());
    CHECK(merged.exit_code == 2);
    CHECK_THAT(merged.err, Catch::Contains("the inputs hold results of two grids"));
    CHECK_FALSE(fs::exists(dir / "m.csv"));
    const CommandResult wrong_grid = run_pipesim(
        "merge " + a.string() + " -o " + (dir / "m.csv").string() + " --grid " + other.string());
    CHECK(wrong_grid.exit_code == 2);
    // The file at fault named, not "the inputs".
    CHECK_THAT(wrong_grid.err, Catch::Contains(a.string() + " holds results of grid " + id_a));
    CHECK_FALSE(fs::exists(dir / "m.csv"));
    // A row whose parameters are not its job's, in the second of two files.
    const fs::path tampered = dir / "tampered.csv";
    {
        std::vector<std::string> lines = sorted_rows(a);
        const std::string p_field = "," + field(lines[1], "p") + ",";
        lines[1].replace(lines[1].find(p_field), p_field.size(), ",7,");
        std::ofstream out(tampered);
        for (const std::string& line : lines)
            out << line << "\n";
    }
    const CommandResult mismatch =
        run_pipesim("merge " + a.string() + " " + tampered.string() + " -o " +
                    (dir / "m.csv").string() + " --grid " + data + "tiny.json");
    CHECK(mismatch.exit_code == 2);
    CHECK_THAT(mismatch.err, Catch::Contains(tampered.string() + ": the row of job ") &&
                                 Catch::Contains("its parameters differ (p is '7', the "
                                                 "grid's '" +
                                                 field(sorted_rows(a)[1], "p") + "')"));
    CHECK_FALSE(fs::exists(dir / "m.csv"));
    fs::remove_all(dir);
}

TEST_CASE("pareto draws the front and prints it", "[sweep][cli]") {
    const fs::path dir = scratch("pareto");
    const fs::path csv = dir / "r.csv";
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + csv.string() + " -j 1").exit_code == 0);
    const CommandResult r =
        run_pipesim("pareto " + csv.string() + " -o " + (dir / "p.dot").string() + " --where m=8");
    REQUIRE(r.exit_code == 0);
    // At m=8 and memory ≤ 4.5: ZB-V has no bubble at F=B=W and holds 1F1B's peak p = 4.
    CHECK_THAT(r.out, Catch::Contains("zb-v") && Catch::Contains("peak_activation 4"));
    CHECK_THAT(read_file(dir / "p.dot"), Catch::Contains("(Pareto front)"));
    // The picture never replaces the results it was drawn from (a name without an extension
    // and --format took the CSV's place), nor does merge write over one of its inputs.
    const fs::path bare = dir / "results";
    fs::copy_file(csv, bare);
    const std::string before = read_file(bare);
    const CommandResult over = run_pipesim("pareto " + bare.string() + " -o " + bare.string() +
                                           " --format svg --where m=8");
    CHECK(over.exit_code == 2);
    CHECK_THAT(over.err, Catch::Contains("it is an input of this run"));
    const CommandResult merged =
        run_pipesim("merge " + csv.string() + " " + bare.string() + " -o " + bare.string());
    CHECK(merged.exit_code == 2);
    CHECK_THAT(merged.err, Catch::Contains("it is an input of this run"));
    CHECK(read_file(bare) == before);
    fs::remove_all(dir);
}

TEST_CASE("sweep and merge reject bad input with exit code 2 and a positioned message",
          "[sweep][cli]") {
    const CommandResult bad = run_pipesim("sweep " + data + "bad_schedule.json -o /dev/null");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("bad_schedule.json:4:") &&
                            Catch::Contains("unknown schedule 'zb-h9'"));
    CHECK(run_pipesim("sweep " + data + "tiny.json").exit_code == 2);
    CHECK(run_pipesim("sweep " + data + "tiny.json -o x.csv --shard 3/3").exit_code == 2);
    const CommandResult dry = run_pipesim("sweep " + data + "tiny.json --dry-run --shard 1/3");
    CHECK(dry.exit_code == 0);
    CHECK_THAT(dry.out, Catch::Contains("16 jobs in the grid, 5 in shard 1/3"));
    // Counted without expanding the grid: the shards of any N still partition its 16 jobs,
    // the first 16 mod N holding one more.
    for (int shards : {1, 5, 16, 40}) {
        int sum = 0;
        for (int shard = 0; shard < shards; ++shard) {
            const CommandResult one = run_pipesim(
                fmt::format("sweep {}tiny.json --dry-run --shard {}/{}", data, shard, shards));
            REQUIRE(one.exit_code == 0);
            const int count =
                std::stoi(one.out.substr(one.out.find(", ") + 2));  // "16 jobs ..., K in ..."
            CHECK(count == 16 / shards + (shard < 16 % shards ? 1 : 0));
            sum += count;
        }
        CHECK(sum == 16);
    }
    const CommandResult merge = run_pipesim("merge " + data + "tiny.json -o /dev/null");
    CHECK(merge.exit_code == 2);
    CHECK_THAT(merge.err, Catch::Contains("tiny.json:1:1: not a pipesim sweep results file"));
}

TEST_CASE("a results file names the model file's contents: edited, it is another grid",
          "[sweep][cli]") {
    const fs::path dir = scratch("model_file");
    const fs::path model = dir / "model.json", grid = dir / "grid.json", out = dir / "out.csv";
    const std::string model_text =
        read_file(std::string(PIPESIM_SOURCE_DIR) + "/docs/examples/model-llama-like.json");
    REQUIRE(model_text.find("\"layers\": 16") != std::string::npos);
    std::ofstream(model) << model_text;
    std::ofstream(grid) << R"({"format": "pipesim-sweep", "version": 1, "schedule": "1f1b",
        "p": 2, "m": 4, "model": ")" +
                               model.string() + R"(", "gpu": "a100-80gb"})";
    REQUIRE(run_pipesim("sweep " + grid.string() + " -o " + out.string()).exit_code == 0);
    const std::string before = read_file(out);
    // The same file resumes; the file with 32 layers is refused, the rows kept.
    CHECK(run_pipesim("sweep " + grid.string() + " -o " + out.string()).exit_code == 0);
    std::string edited = model_text;
    edited.replace(edited.find("\"layers\": 16"), 12, "\"layers\": 32");
    std::ofstream(model) << edited;
    const CommandResult resumed = run_pipesim("sweep " + grid.string() + " -o " + out.string());
    CHECK(resumed.exit_code == 2);
    CHECK_THAT(resumed.err, Catch::Contains("a model, GPU or cluster file it names has changed"));
    CHECK(read_file(out) == before);
    fs::remove_all(dir);
}

TEST_CASE("an empty results file gets its header — a job's second row is dropped on resume",
          "[sweep][cli]") {
    const fs::path dir = scratch("empty_dup");
    const fs::path out = dir / "out.csv";
    std::ofstream{out};  // created empty, as mktemp does
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + out.string() + " -j 1").exit_code == 0);
    const std::vector<std::string> rows = sorted_rows(out);
    REQUIRE(rows.size() == 17);
    CHECK(rows.front() == pipesim::sweep::csv_header());
    // Rows appended twice (two files joined by hand): the resume keeps one of each.
    const std::string once = read_file(out);
    std::ofstream(out, std::ios::app) << lines_of(once)[3] << "\n" << lines_of(once)[7] << "\n";
    REQUIRE(count_lines(out) == 19);
    const CommandResult resumed = run_pipesim("sweep " + data + "tiny.json -o " + out.string());
    CHECK(resumed.exit_code == 0);
    CHECK(sorted_rows(out) == rows);
    fs::remove_all(dir);
}

TEST_CASE("a second sweep on a results file in use is refused — the first runs every job once",
          "[sweep][cli]") {
    const fs::path dir = scratch("locked");
    const fs::path out = dir / "out.csv";
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + out.string() + " -j 1").exit_code == 0);
    const std::string before = read_file(out);
    // A sweep holds the file's lock from reading it to its last row: take it as one would.
    const int fd = ::open(out.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    const CommandResult second = run_pipesim("sweep " + data + "tiny.json -o " + out.string());
    CHECK(second.exit_code == 2);
    CHECK_THAT(second.err, Catch::Contains("another sweep is writing this results file"));
    CHECK(std::count(second.err.begin(), second.err.end(), '\n') == 1);
    ::close(fd);
    CHECK(read_file(out) == before);
    CHECK(run_pipesim("sweep " + data + "tiny.json -o " + out.string()).exit_code == 0);
    // Not a regular file: refused before anything is read from it.
    const CommandResult device = run_pipesim("sweep " + data + "tiny.json -o /dev/null");
    CHECK(device.exit_code == 2);
    CHECK_THAT(device.err, Catch::Contains("/dev/null is not a regular file"));
    fs::remove_all(dir);
}

TEST_CASE("a results file that cannot grow is one line and exit code 2", "[sweep][cli]") {
    // A full disk, here a 2 KiB file size limit (its signal ignored, so that the write fails
    // with EFBIG): every other command reports it as an input problem, the sweep said
    // "internal error" with exit code 1.
    const fs::path dir = scratch("full");
    const fs::path csv = dir / "r.csv";
    const CommandResult r =
        run_program("trap '' XFSZ; ulimit -f 2; " + std::string(PIPESIM_BINARY),
                    "sweep " + data + "tiny.json -o " + csv.string() + " -j 1 --progress none");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "pipesim sweep: cannot write " + csv.string() + ": File too large\n");
    fs::remove_all(dir);
}

TEST_CASE("merge says which input lost a cut-short row and how many jobs failed", "[sweep][cli]") {
    const fs::path dir = scratch("merge_notes");
    const fs::path out = dir / "out.csv", cut = dir / "cut.csv", failed = dir / "failed.csv";
    REQUIRE(run_pipesim("sweep " + data + "tiny.json -o " + out.string() + " -j 1").exit_code == 0);
    const std::string text = read_file(out);
    std::ofstream(cut) << text.substr(0, text.size() - 5);
    std::string with_error = text;
    const std::size_t ok = with_error.find(",ok,");
    REQUIRE(ok != std::string::npos);
    with_error.replace(ok, 4, ",error,");
    std::ofstream(failed) << with_error;
    const CommandResult cut_merge =
        run_pipesim("merge " + cut.string() + " -o " + (dir / "m1.csv").string());
    CHECK(cut_merge.exit_code == 0);
    CHECK_THAT(cut_merge.err, Catch::Contains(cut.string() + ": its last row is cut short"));
    CHECK(count_lines(dir / "m1.csv") == 16);  // the header and 15 of the 16 jobs
    const CommandResult error_merge =
        run_pipesim("merge " + failed.string() + " -o " + (dir / "m2.csv").string());
    CHECK(error_merge.exit_code == 0);
    CHECK_THAT(error_merge.err, Catch::Contains("merge: 1 row of jobs that failed"));
    fs::remove_all(dir);
}
