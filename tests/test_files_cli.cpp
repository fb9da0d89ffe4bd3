// Schedule files on the command line: analyze --schedule-file / --save, convert.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "cli_runner.hpp"

using pipesim::test::read_file;
using pipesim::test::run_pipesim;

namespace {

const std::string data_dir = std::string(PIPESIM_SOURCE_DIR) + "/tests/data/";

// A fresh directory for one test's output files.
std::filesystem::path scratch_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_files_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace

TEST_CASE("analyze --save writes the generated schedule — --schedule-file reads it back",
          "[files][cli]") {
    const auto dir = scratch_dir("save");
    for (const char* ext : {".json", ".csv"}) {
        const std::string file = (dir / (std::string("zb") + ext)).string();
        const auto generated =
            run_pipesim("analyze -s zb-h1 -p 4 -m 8 --costs 1,2,1 --json --save " + file);
        REQUIRE(generated.exit_code == 0);
        const auto loaded =
            run_pipesim("analyze --schedule-file " + file + " --costs 1,2,1 --json");
        REQUIRE(loaded.exit_code == 0);
        const auto a = nlohmann::json::parse(generated.out);
        const auto b = nlohmann::json::parse(loaded.out);
        CAPTURE(ext);
        CHECK(a["makespan"] == b["makespan"]);
        CHECK(a["peak_activation"] == b["peak_activation"]);
        CHECK(b["placement"] == "looped");
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("convert turns a PyTorch CSV into schedule JSON and back", "[files][cli]") {
    const auto dir = scratch_dir("convert");
    const std::string json = (dir / "il.json").string(), csv = (dir / "il.csv").string();
    const auto to_json =
        run_pipesim("convert " + data_dir + "pytorch_interleaved_p2_v2_m4.csv -o " + json);
    REQUIRE(to_json.exit_code == 0);
    CHECK_THAT(to_json.out, Catch::Contains("p=2 m=4 v=2 (looped placement, 32 ops)"));
    CHECK_THAT(read_file(json), Catch::Contains("\"format\": \"pipesim-schedule\""));
    REQUIRE(run_pipesim("convert " + json + " -o " + csv).exit_code == 0);
    // The hand-written file has no idle steps; the export lays ops out on unit steps.
    CHECK(read_file(csv) ==
          "0F0,0F1,2F0,2F1,0F2,2B0,0F3,2B1,2F2,0B0,2F3,0B1,,2B2,,2B3,0B2,0B3\n"
          ",1F0,1F1,3F0,3B0,3F1,3B1,1F2,1B0,1F3,1B1,3F2,3B2,3F3,3B3,1B2,1B3\n");
    std::filesystem::remove_all(dir);
}

TEST_CASE("a failed convert leaves the output file untouched", "[files][cli]") {
    const auto dir = scratch_dir("untouched");
    const std::string bad = (dir / "bad.csv").string(), out = (dir / "out.json").string();
    std::ofstream(bad) << "0F0,0B0x\n";
    std::ofstream(out) << "previous content";
    const auto r = run_pipesim("convert " + bad + " -o " + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "pipesim convert: " + bad +
                       ":1:5: unexpected 'x' after action '0B0' (PyTorch's loader would silently "
                       "drop it)\n");
    CHECK(read_file(out) == "previous content");
    CHECK(std::distance(std::filesystem::directory_iterator(dir),
                        std::filesystem::directory_iterator{}) == 2);  // no temporary left
    std::filesystem::remove_all(dir);
}

TEST_CASE("schedule file errors on the command line exit 2 with one line", "[files][cli]") {
    using row = std::tuple<std::string, std::string>;
    auto [args, expected] = GENERATE(table<std::string, std::string>({
        row{"analyze --schedule-file /nonexistent/s.json", "/nonexistent/s.json: cannot read"},
        row{"analyze --schedule-file " + data_dir + "pytorch_1f1b_p4_m6.csv -s 1f1b",
            "--schedule-file gives the schedule and its shape: drop -s"},
        row{"analyze -s 1f1b -p 2 -m 2 --save /tmp/x.txt", "unknown schedule file type '.txt'"},
        row{"analyze -s 1f1b -p 2 -m 2 --save /nonexistent/dir/x.json",
            "cannot write /nonexistent/dir/x.json"},
        row{"convert " + data_dir + "pytorch_1f1b_p4_m6.csv", "missing -o OUT"},
        row{"convert -o x.json", "missing IN"},
        row{"convert a.json b.json -o c.json", "one input file only"},
        row{"convert " + data_dir + "pytorch_1f1b_p4_m6.csv -o " + data_dir + "x.yaml",
            "unknown schedule file type '.yaml'"},
    }));
    CAPTURE(args);
    const auto r = run_pipesim(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(expected));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("a file over the size cap is refused from its size: one line, exit 2, little memory",
          "[files][cli]") {
    const auto dir = scratch_dir("big");
    const std::string big = (dir / "big.json").string();
    std::ofstream(big).close();
    std::filesystem::resize_file(big, std::uintmax_t{2} << 30);  // sparse: no disk used
    // In a child process, whose RUSAGE_CHILDREN then measures this one run of pipesim.
    const std::string outcome = pipesim::test::run_in_child([&] {
        const auto r = run_pipesim("render " + big + " -o " + (dir / "x.png").string());
        rusage usage{};
        ::getrusage(RUSAGE_CHILDREN, &usage);
        return std::to_string(r.exit_code) + " " + std::to_string(usage.ru_maxrss / 1024) +
               " MiB\n" + r.err;
    });
    CAPTURE(outcome);
    const auto lines = pipesim::test::lines_of(outcome);
    REQUIRE(lines.size() == 2);  // the status line and the one line on stderr
    std::istringstream status(lines[0]);
    int exit_code = 0;
    long peak_mib = 0;
    status >> exit_code >> peak_mib;
    CHECK(exit_code == 2);
    CHECK(peak_mib < 256);  // reading the file first would take the cap, 1 GiB
    CHECK(lines[1] == "pipesim render: " + big +
                          ": file is more than 1073741824 bytes, the limit for this kind of file");
    std::filesystem::remove_all(dir);
}

TEST_CASE("an output that names an input is refused, and the input kept", "[files][cli]") {
    const auto dir = scratch_dir("input_output");
    const std::string schedule = (dir / "s.json").string();
    REQUIRE(run_pipesim("analyze -s zb-h1 -p 4 -m 8 --save " + schedule).exit_code == 0);
    const std::string original = read_file(schedule);
    std::filesystem::create_symlink(dir / "s.json", dir / "link.json");
    struct Case {
        std::string args, message;
    };
    const Case cases[] = {
        // Read before the outputs are checked: refused before any work.
        {"analyze --schedule-file " + schedule + " --save-timeline " + schedule,
         "pipesim analyze: --save-timeline '" + schedule +
             "' is an input of this run, which writing it would replace: give another file\n"},
        {"analyze --schedule-file " + (dir / "link.json").string() + " --trace " + schedule,
         "pipesim analyze: --trace '" + schedule +
             "' is an input of this run, which writing it would replace: give another file\n"},
        {"render " + schedule + " --trace " + (dir / "link.json").string(),
         "pipesim render: --trace '" + (dir / "link.json").string() +
             "' is an input of this run, which writing it would replace: give another file\n"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.args);
        const auto r = run_pipesim(c.args);
        CHECK(r.exit_code == 2);
        CHECK(r.err == c.message);
        CHECK(read_file(schedule) == original);
    }
    // Model and cluster files, read once the run starts, are refused before it: nothing on
    // standard output (simulate's "simulating ..." line), the file left as it was.
    const std::string model = (dir / "model.json").string();
    std::filesystem::copy_file(
        std::string(PIPESIM_SOURCE_DIR) + "/docs/examples/model-llama-like.json", model);
    const std::string cluster = (dir / "cluster.json").string();
    std::ofstream(cluster) << R"({"format": "pipesim-cluster", "version": 1, "gpus_per_node": 2,
        "nodes": [{"count": 1, "gpu": "h100-sxm"}],
        "intra_node": {"bandwidth_gb_s": 450, "latency_us": 2},
        "nic": {"bandwidth_gb_s": 50, "latency_us": 5}})";
    const std::string model_text = read_file(model), cluster_text = read_file(cluster);
    const std::string run = " -s 1f1b -p 2 -m 2 --model " + model + " --gpu h100-sxm --mb 1";
    const Case late[] = {
        {"analyze" + run + " --trace " + model, "pipesim analyze: --trace '" + model},
        {"analyze" + run + " --save " + model, "pipesim analyze: --save '" + model},
        {"simulate" + run + " --cluster " + cluster + " --save-timeline " + model,
         "pipesim simulate: --save-timeline '" + model},
        {"simulate" + run + " --cluster " + cluster + " --trace " + cluster,
         "pipesim simulate: --trace '" + cluster},
    };
    for (const auto& c : late) {
        CAPTURE(c.args);
        const auto r = run_pipesim(c.args);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err == c.message +
                           "' is an input of this run, which writing it would replace: give "
                           "another file\n");
    }
    CHECK(read_file(model) == model_text);
    CHECK(read_file(cluster) == cluster_text);
    std::filesystem::remove_all(dir);
}

TEST_CASE("saving a schedule with F&B pairs as CSV warns that the pairs are not kept",
          "[files][cli]") {
    const auto dir = scratch_dir("pairs_csv");
    const std::string csv = (dir / "dv.csv").string(), json = (dir / "dv.json").string();
    const std::string warning =
        "the CSV is written with no F&B pairs (PyTorch's OVERLAP_F_B groups run only in its "
        "runtime schedule, and pipesim reads them as two ops): dualpipe-v's 25 overlapped pairs "
        "are written as separate ops, which run one after the other when it is read back (save "
        "as .json to keep them)\n";
    const auto saved = run_pipesim("analyze -s dualpipe-v -p 4 -m 8 --save " + csv);
    CHECK(saved.exit_code == 0);
    CHECK(saved.err == "pipesim analyze: warning: " + csv + ": " + warning);
    // As JSON the pairs are kept: no warning, and a conversion to CSV warns.
    const auto kept = run_pipesim("analyze -s dualpipe-v -p 4 -m 8 --save " + json);
    CHECK(kept.err.empty());
    const auto converted = run_pipesim("convert " + json + " -o " + (dir / "c.csv").string());
    CHECK(converted.exit_code == 0);
    CHECK(converted.err ==
          "pipesim convert: warning: " + (dir / "c.csv").string() + ": " + warning);
    // What the warning says: read back, the pairs run apart (a longer run with their
    // all-to-all hidden no more).
    const auto paired = nlohmann::json::parse(
        run_pipesim("analyze --schedule-file " + json + " --costs 1,2,1 --json").out);
    const auto apart = nlohmann::json::parse(
        run_pipesim("analyze --schedule-file " + csv + " --costs 1,2,1 --json").out);
    CHECK(apart["makespan"] != paired["makespan"]);
    // Schedules without pairs say nothing.
    CHECK(run_pipesim("analyze -s zb-v -p 4 -m 8 --save " + (dir / "zv.csv").string()).err == "");
    std::filesystem::remove_all(dir);
}

TEST_CASE("Ctrl-C while an output is being written leaves no temporary file behind",
          "[files][cli]") {
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("pipesim_sigint_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A timeline of 262,144 ops, some 65 MB: written over a fraction of a second, long enough
    // to see its temporary file appear.
    const pid_t pid =
        pipesim::test::start_pipesim({"analyze", "-s", "1f1b", "-p", "32", "-m", "4096",
                                      "--save-timeline", (dir / "t.json").string()});
    REQUIRE(pid > 0);
    auto temporary_exists = [&] {
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.path().filename().string().find(".tmp.") != std::string::npos) return true;
        return false;
    };
    int status = 0;
    bool interrupted = false;
    while (::waitpid(pid, &status, WNOHANG) != pid) {
        if (!interrupted && temporary_exists()) {
            ::kill(pid, SIGINT);
            interrupted = true;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // Whatever the moment: the whole file or none, and no temporary.
    CHECK_FALSE(temporary_exists());
    if (interrupted && WIFSIGNALED(status)) {
        // Ended by the interrupt, as before, and with its half-written file removed.
        CHECK(WTERMSIG(status) == SIGINT);
        CHECK_FALSE(fs::exists(dir / "t.json"));
    } else {
        // The run renamed its file and ended between the look and the signal (or before the
        // temporary was seen): it is whole.
        WARN("the run ended before the interrupt reached it");
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        CHECK(fs::exists(dir / "t.json"));
    }
    fs::remove_all(dir);
}
