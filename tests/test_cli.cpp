// The pipesim command line: output contract and bad-input handling.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_json.hpp"
#include "cli_runner.hpp"

using pipesim::test::run_pipesim;
using pipesim::test::run_pipesim_json;

TEST_CASE("analyze --json prints the contract's fields with the replay's numbers", "[cli]") {
    const auto r = run_pipesim("analyze -s 1f1b -p 4 -m 8 --costs 1,2,1 --json");
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.err.empty());
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schedule"] == "1f1b");
    CHECK(j["stages"] == 4);
    CHECK(j["devices"] == 4);
    CHECK(j["virtual_stages"] == 4);
    CHECK(j["microbatches"] == 8);
    CHECK(j["chunks"] == 1);
    // (m+p−1)(F+B+W) = 11·4; bubble (p−1)/(m+p−1) = 3/11; device i holds p−i microbatches.
    CHECK(j["makespan"].get<double>() == Approx(44.0));
    CHECK(j["bubble_rate"].get<double>() == Approx(3.0 / 11.0));
    CHECK(j["peak_activation"] == nlohmann::json::array({4.0, 3.0, 2.0, 1.0}));
    CHECK(j["peak_activation_max"].get<double>() == Approx(4.0));
    CHECK(j["throughput"].get<double>() == Approx(8.0 / 44.0));
}

TEST_CASE("JSON output counts devices and virtual stages apart", "[cli]") {
    const auto j =
        nlohmann::json::parse(run_pipesim("analyze -s interleaved-1f1b -p 4 -m 8 -v 2 --json").out);
    CHECK(j["devices"] == 4);
    CHECK(j["virtual_stages"] == 8);
    CHECK(j["stages"] == 4);  // kept for earlier readers: the device count
    CHECK(j["warnings"].empty());
}

TEST_CASE("interleaved 1F1B with a last group smaller than p runs with a warning", "[cli]") {
    const auto r = run_pipesim("analyze -s interleaved-1f1b -p 4 -m 6 -v 2");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: warning: interleaved-1f1b with m = 6 "
                                        "in groups of 4: the last group holds 2, fewer than "
                                        "p = 4"));
    const auto j =
        nlohmann::json::parse(run_pipesim("analyze -s interleaved-1f1b -p 4 -m 6 -v 2 --json").out);
    REQUIRE(j["warnings"].size() == 1);
    CHECK_THAT(j["warnings"][0].get<std::string>(), Catch::Contains("Megatron-LM refuses"));
    CHECK(run_pipesim("analyze -s interleaved-1f1b -p 4 -m 8 -v 2").err.empty());
}

// Megatron-LM's interleaved schedule (megatron/core/pipeline_parallel/schedules.py) takes a
// group size g with p ≤ g ≤ m and m mod g of 0 or at least p; without p2p overlap, p > 2.
TEST_CASE("interleaved 1F1B warns exactly for the shapes Megatron-LM refuses", "[cli]") {
    const auto warnings = [](const std::string& flags) {
        const auto r = run_pipesim("analyze -s interleaved-1f1b -v 2 --json " + flags);
        REQUIRE(r.exit_code == 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        std::vector<std::string> out;
        for (const auto& w : j["warnings"])
            out.push_back(w.get<std::string>());
        return out;
    };
    // Accepted there: a last group of at least p, and g between p and m.
    CHECK(warnings("-p 2 -m 5 --group-size 3").empty());
    CHECK(warnings("-p 4 -m 9 --group-size 5").empty());
    CHECK(warnings("-p 4 -m 10 --group-size 5").empty());
    CHECK(warnings("-p 3 -m 6 --no-overlap-p2p-communication").empty());
    // Refused there, each for its own reason.
    const auto small_group = warnings("-p 3 -m 4 --group-size 2");
    REQUIRE(small_group.size() == 1);
    CHECK_THAT(small_group[0], Catch::StartsWith("interleaved-1f1b with microbatch groups of 2, "
                                                 "fewer than p = 3: Megatron-LM refuses"));
    const auto large_group = warnings("-p 2 -m 2 --group-size 3");
    REQUIRE(large_group.size() == 1);
    CHECK_THAT(large_group[0], Catch::StartsWith("interleaved-1f1b with a group size of 3, more "
                                                 "than m = 2: Megatron-LM refuses"));
    const auto last_group = warnings("-p 3 -m 7 --group-size 5");
    REQUIRE(last_group.size() == 1);
    CHECK_THAT(last_group[0], Catch::Contains("the last group holds 2, fewer than p = 3"));
    const auto two_devices = warnings("-p 2 -m 4 --no-overlap-p2p-communication");
    REQUIRE(two_devices.size() == 1);
    CHECK_THAT(two_devices[0], Catch::StartsWith("--no-overlap-p2p-communication with p = 2: "
                                                 "Megatron-LM refuses"));
}

TEST_CASE("an F&B overlap where it changes nothing runs with a warning saying so", "[cli]") {
    const auto one = run_pipesim("analyze -s 1f1b -p 4 -m 8 --a2a 1 --overlap-fb 0.5 --json");
    CHECK(one.exit_code == 0);
    CHECK(one.err ==
          "pipesim analyze: warning: --overlap-fb hides all-to-all inside F&B pairs "
          "(dualpipe, dualpipe-v), which 1f1b has none of: it changes nothing\n");
    // The figures are those without it.
    CHECK(nlohmann::json::parse(one.out)["makespan"] ==
          nlohmann::json::parse(
              run_pipesim("analyze -s 1f1b -p 4 -m 8 --a2a 1 --json").out)["makespan"]);
    const auto no_a2a = run_pipesim("analyze -s dualpipe -p 4 -m 8 --overlap-fb 0.5");
    CHECK(no_a2a.exit_code == 0);
    CHECK_THAT(no_a2a.err, Catch::Contains("--a2a is 0: it changes nothing"));
    const auto pairs = run_pipesim("analyze -s dualpipe -p 4 -m 8 --a2a 1 --overlap-fb 0.5");
    CHECK(pairs.exit_code == 0);
    CHECK(pairs.err.empty());
}

TEST_CASE("compare puts schedules side by side with closed-form figures", "[cli]") {
    const auto r = run_pipesim("compare -s 1f1b,zb-h1 -p 4 -m 8 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["schedules"].size() == 2);
    const auto& one = j["schedules"][0];
    const auto& zb = j["schedules"][1];
    // F = B = W = 1: 1F1B takes (m+p−1)(F+B+W) = 33, ZB-H1 3m + (p−1)(F+B−W) = 27.
    CHECK(one["makespan"].get<double>() == Approx(33));
    CHECK(zb["makespan"].get<double>() == Approx(27));
    CHECK(one["bubble_rate"].get<double>() == Approx(3.0 / 11.0));
    // Each device is busy m(F+B+W) = 24 of the makespan.
    CHECK(one["efficiency"].get<double>() == Approx(24.0 / 33.0));
    CHECK(zb["efficiency"].get<double>() == Approx(24.0 / 27.0));
    CHECK(one["speedup"].get<double>() == Approx(1.0));
    CHECK(zb["speedup"].get<double>() == Approx(33.0 / 27.0));
    const auto csv = run_pipesim("compare -s 1f1b,zb-h1 -p 4 -m 8 --csv");
    REQUIRE(csv.exit_code == 0);
    CHECK(pipesim::test::lines_of(csv.out).size() == 3);
    const auto bad = run_pipesim("compare -s 1f1b,nope -p 4 -m 8");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::StartsWith("pipesim compare: nope: unknown schedule 'nope'"));
    // A list typed with spaces after its commas names the same schedules.
    const auto spaced = run_pipesim("compare -s '1f1b, zb-h1' -p 4 -m 8 --json");
    REQUIRE(spaced.exit_code == 0);
    auto spaced_json = nlohmann::json::parse(spaced.out);
    CHECK(spaced_json["command"] == "pipesim compare -s '1f1b, zb-h1' -p 4 -m 8 --json");
    spaced_json["command"] = j["command"];
    CHECK(spaced_json == j);
    CHECK(run_pipesim("compare -s '1f1b, ' -p 4 -m 8").exit_code == 2);
}

TEST_CASE("compare --json records the inputs that tell one comparison from another", "[cli]") {
    // The costs and latency once left no trace in the file: this run and the default one read
    // the same but for their figures.
    const auto r = run_pipesim("compare -s 1f1b,zb-h1 -p 4 -m 8 --costs 1,2,1 --comm 0.5 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["command"] ==
          "pipesim compare -s 1f1b,zb-h1 -p 4 -m 8 --costs 1,2,1 --comm 0.5 --json");
    CHECK(j["inputs"]["costs"] == "F,B,W = 1,2,1 per full stage; M_W = 1 M_B");
    CHECK(j["inputs"]["comm latency"] == "0.5");
    CHECK(j["inputs"]["engine"] == "analytic replay");
}

TEST_CASE("a comparison's inputs name the all-to-all and its overlap", "[cli]") {
    // They change the passes' times as the costs do; a DualPipe page named neither.
    const auto j = run_pipesim_json(
        "compare -s dualpipe,dualpipe-v -p 8 -m 16 --a2a 0.5 "
        "--overlap-fb 0.25 --json");
    CHECK(j["inputs"]["all-to-all (--a2a)"] == "0.5 per full stage's F and per its backward");
    CHECK(j["inputs"]["F&B overlap (--overlap-fb)"] == "25 % of an F&B pair's all-to-all hidden");
    const auto plain = run_pipesim_json("compare -s dualpipe,dualpipe-v -p 8 -m 16 --json");
    CHECK_FALSE(plain["inputs"].contains("all-to-all (--a2a)"));
}

TEST_CASE("analyze prints a readable table by default", "[cli]") {
    const auto r = run_pipesim("analyze -s zb-h1 -p 4 -m 8");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("makespan") && Catch::Contains("bubble rate") &&
                          Catch::Contains("peak activation") && Catch::Contains("throughput"));
    CHECK_THAT(r.out, Catch::Contains("27 unit"));  // 3m + (p−1)(F+B−W) = 24 + 3
}

TEST_CASE("the table prints times from a million up whole, not with six digits", "[cli]") {
    // 1F1B: (m + p − 1)(F + B + W) = 40001 · 30; device 0 idles (p − 1)(F + B + W) = 30.
    const auto r = run_pipesim("analyze -s 1f1b -p 2 -m 40000 --costs 10,10,10");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("makespan              1200030 unit"));
    CHECK_THAT(r.out, Catch::Contains("(1F1B: 1200030 unit)"));
    CHECK_THAT(r.out, Catch::Contains("      1200000      1200030           30"));
    CHECK_THAT(r.out, !Catch::Contains("e+06"));
}

TEST_CASE("list names every schedule with a description", "[cli]") {
    const auto r = run_pipesim("list");
    REQUIRE(r.exit_code == 0);
    for (const char* name : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2"})
        CHECK_THAT(r.out, Catch::Contains(name));
}

TEST_CASE("bad input gets one clear line on stderr and exit code 2", "[cli]") {
    using row = std::tuple<std::string, std::string>;
    auto [args, expected] = GENERATE(table<std::string, std::string>({
        row{"analyze -s nope -p 4 -m 8", "unknown schedule 'nope'"},
        row{"analyze -s 1f1b -p 0 -m 8", "-p: must be in 1..4096, got 0"},
        row{"analyze -s 1f1b -p 4 -m 0", "-m: must be in 1..1048576, got 0"},
        row{"analyze -s 1f1b -p four -m 8", "-p: expected an integer, got 'four'"},
        // Too large for an int is out of range too (it said "expected an integer").
        row{"analyze -s 1f1b -p 99999999999 -m 8", "-p: must be in 1..4096, got '99999999999'"},
        row{"analyze -s 1f1b -p 4 -m 8 -v 2",
            "1f1b runs with v = 1 chunk(s) per device, got v = 2"},
        row{"analyze -s interleaved-1f1b -p 4 -m 8 -v 1", "interleaved-1f1b takes v in 2..64"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 1,-1,1", "expected numbers F,B,W in 0..1e30"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 1e308,1e308,1e308",
            "expected numbers F,B,W in 0..1e30 (triples separated by ':'), got '1e308'"},
        row{"analyze -s 1f1b -p 4 -m 8 --comm 1e308", "--comm: must be ≤ 1e+30, got 1e308"},
        // A tensor-parallel group past the reference node: its collectives were timed at
        // NVLink's bandwidth across nodes, -t 32 twice as fast as -t 8.
        row{"analyze -s 1f1b -p 4 -m 8 --model llama2-7b --gpu a100-80gb --mb 1 -t 16",
            "pipesim analyze: -t 16: the analytic replay runs a tensor-parallel group inside one "
            "node of 8 GPUs behind NVLink (NVIDIA DGX/HGX), which 16 GPUs do not fit; give -t 8 "
            "or less"},
        // The same layout compared: no one schedule's fault, and named before any schedule
        // (it read "pipesim compare: 1f1b: -t 16: ...").
        row{"compare -s 1f1b,zb-v -p 4 -m 8 --model llama2-7b --gpu a100-80gb --mb 1 -t 16",
            "pipesim compare: -t 16: the analytic replay runs a tensor-parallel group"},
        // Past a double's range: a range message, not "expected a number".
        row{"analyze -s 1f1b -p 4 -m 8 --comm 1e400", "--comm: must be ≤ 1e+30, got 1e400"},
        row{"analyze -s 1f1b -p 4 -m 8 --comm -1e400", "--comm: must be ≥ 0, got -1e400"},
        row{"search -p 4 -m 8 --mem-limit 1e400", "--mem-limit: must be ≤ 1e+30, got 1e400"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 0,0,0",
            "every pass takes no time, so the iteration does too"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 1,x,1", "got 'x'"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 1,1", "expected three numbers F,B,W, got '1,1'"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 1,1,1:1,1,1", "give one (a full stage) or p·v = 4"},
        row{"analyze -s 1f1b -p 4 -m 8 --comm -1", "--comm: must be ≥ 0"},
        row{"analyze -s 1f1b -p 4 -m 8 --comm nan", "--comm: expected a number"},
        // Decimal numbers only: strtod's hexadecimal floats read 0x10 as 16.
        row{"analyze -s 1f1b -p 4 -m 8 --comm 0x10", "--comm: expected a number, got '0x10'"},
        row{"analyze -s 1f1b -p 4 -m 8 --costs 0x1p0,1,1", "got '0x1p0' in '0x1p0,1,1'"},
        // An empty value (an unset shell variable) once meant "no picture" and wrote nothing.
        row{"analyze -s 1f1b -p 4 -m 8 --timeline=", "--timeline needs a value, got an empty one"},
        row{"analyze -s 1f1b -p 4 -m 8 --mem-w-ratio 2", "--mem-w-ratio: must be in 0..1"},
        row{"analyze -s 1f1b -p 4 -m 8 --frobnicate", "unknown option '--frobnicate'"},
        row{"analyze -s 1f1b -p 4 -m", "-m needs a value"},
        row{"analyze -s 1f1b -p 4 -m 8 --json=yes", "--json takes no value"},
        row{"analyze -p 4 -m 8", "missing -s NAME"},
        row{"analyze -s zb-h1 -p 4 --group-size 2 -m 8", "zb-h1 has no microbatch group size"},
        row{"analyze -s 1f1b -p 4 -m 8 --no-overlap-p2p-communication",
            "--no-overlap-p2p-communication applies to interleaved-1f1b, not to 1f1b"},
        row{"analyze -s interleaved-1f1b -p 4 -m 6 --no-overlap-p2p-communication",
            "--no-overlap-p2p-communication needs m a multiple of the group size 4 and at least "
            "2p = 8, the shapes whose steps pipesim can pair; got m = 6"},
        row{"analyze -s interleaved-1f1b -p 4 -m 8 --no-overlap-p2p-communication --a2a 1",
            "--a2a and --overlap-fb do not apply"},
        // A shape none of the compared schedules takes was dropped silently.
        row{"compare -s 1f1b,zb-h1 -p 4 -m 8 -v 2",
            "-v 2: none of 1f1b, zb-h1 runs with v = 2, so it would change nothing"},
        row{"compare -s 1f1b,zb-h1 -p 4 -m 8 --group-size 4",
            "--group-size 4: none of 1f1b, zb-h1 runs microbatches in groups"},
        row{"compare -s 1f1b,zb-h1 -p 4 -m 8 --no-overlap-p2p-communication",
            "--no-overlap-p2p-communication: none of 1f1b, zb-h1 is interleaved-1f1b"},
        row{"frobnicate", "pipesim: unknown command 'frobnicate' (see 'pipesim --help')"},
        row{"", "pipesim: missing command (see 'pipesim --help')"},
        row{"list extra", "list takes no arguments, got 'extra'"},
        row{"analyze -s 1f1b -p 4 -p 5 -m 8", "-p is given more than once; give it once"},
        row{"analyze -s 1f1b --stages 4 -p 5 -m 8",
            "--stages and -p both set --stages; give one of them"},
        row{"analyze -s 1f1b -p 4 -m 8 --timeline a.svg --timeline b.svg",
            "--timeline is given more than once"},
        row{"analyze -s 1f1b -p 4 -m 8 --critical-path",
            "--critical-path changes the timeline picture: give --timeline FILE too"},
        row{"analyze -s 1f1b -p 4 -m 8 --no-memory", "--no-memory changes the timeline picture"},
        row{"analyze -s 1f1b -p 4 -m 8 --dp 2", "--dp and -t set the model's layout"},
        row{"analyze -s 1f1b -p \"$(printf '\\033[31m4')\" -m 8",
            "-p: expected an integer, got '\\x1b[31m4'"},
        row{"analyze --recompute x --model zb-1.5b --gpu a100-80gb --mb 1 -s 1f1b -p 2 -m 2",
            "--recompute: expected none, selective or full, got 'x'"},
        row{"simulate -s 1f1b -p 2 -m 2 --cluster dgx-h100 --bw-scale 0",
            "--bw-scale: must be > 0, got 0"},
        row{"simulate -s 1f1b -p 2 -m 2 --cluster dgx-h100 --bw-scale -1",
            "--bw-scale: must be > 0, got -1"},
        row{"simulate -s 1f1b -p 2 -m 2 --cluster dgx-h100 --straggler 1:0",
            "--straggler: must be > 0, got 0"},
        row{"render x.json -o x.svg --transfers --transfers",
            "--transfers is given more than once"},
        // Switches too (a second --json meant nothing, and was taken without a word).
        row{"analyze -s 1f1b -p 4 -m 8 --json --json",
            "pipesim analyze: --json is given more than once; give it once"},
        row{"analyze -s 1f1b -p 4 -m 8 -p 4", "pipesim analyze: -p is given more than once"},
        row{"render /dev/null -o /tmp/a.svg --timeline /tmp/b.svg",
            "pipesim render: -o and --timeline both set --timeline; give one of them"},
        row{"analyze -s 1f1b -p 4 -m 8 --trace /tmp/t.svg",
            "pipesim analyze: --trace '/tmp/t.svg': it writes JSON; name it .json (or leave the "
            "extension out)"},
        row{"analyze -s 1f1b -p 4 -m 8 --save-timeline /tmp/t.csv",
            "pipesim analyze: --save-timeline '/tmp/t.csv': it writes JSON"},
        row{"sweep /dev/null -o -",
            "pipesim sweep: -o -: a sweep appends each job's row to its results file as the job "
            "ends, and resumes from it: give a file"},
    }));
    CAPTURE(args);
    const auto r = run_pipesim(args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(expected));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("a number below a double's range is read as 0, as Python and JSON files read it",
          "[cli]") {
    // "--comm 1e-400" was "expected a number", though pipesim.analyze(comm=1e-400) ran.
    const auto tiny =
        run_pipesim("analyze -s zb-h1 -p 4 -m 8 --costs 1e-400,1,1 --comm 1e-400 --json");
    const auto zero = run_pipesim("analyze -s zb-h1 -p 4 -m 8 --costs 0,1,1 --comm 0 --json");
    REQUIRE(tiny.exit_code == 0);
    CHECK(tiny.out == zero.out);
}

namespace {

// The command names of `pipesim --help`: the first word of each line of its "commands:"
// section that starts with two spaces and a letter.
std::vector<std::string> listed_commands(const std::string& usage) {
    std::vector<std::string> names;
    std::istringstream lines(usage.substr(usage.find("commands:")));
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line) && !line.empty()) {
        if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || !std::islower(line[2])) continue;
        std::string name = line.substr(2, line.find(' ', 2) - 2);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
}

}  // namespace

TEST_CASE("pipesim --help prints the usage with the exit codes on stdout and exits 0", "[cli]") {
    for (const char* flag : {"--help", "-h", "help"}) {
        CAPTURE(flag);
        const auto r = run_pipesim(flag);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
        CHECK_THAT(r.out, Catch::StartsWith("usage: pipesim COMMAND") &&
                              Catch::Contains("0 ok, 1 internal failure, 2 bad usage or input") &&
                              Catch::Contains("3 no CUDA device or not a CUDA build"));
    }
}

namespace {

// The flags a command's --help lists: each help line's first word when it starts with '-'
// (two-space indent), and the long name after "-x, ".
std::vector<std::string> listed_flags(const std::string& help) {
    std::vector<std::string> flags;
    for (const std::string& line : pipesim::test::lines_of(help)) {
        if (line.size() < 4 || line.compare(0, 3, "  -") != 0) continue;
        std::string first = line.substr(2, line.find(' ', 2) - 2);
        if (first.size() == 3 && first[2] == ',') first = line.substr(6, line.find(' ', 6) - 6);
        flags.push_back(first);
    }
    return flags;
}

}  // namespace

TEST_CASE("every flag --help lists is one the command reads", "[cli]") {
    // Help and parser come from one table per flag group; a listed flag the parser did not
    // know would be answered with "unknown option".
    for (const char* command : {"analyze", "simulate", "compare", "render", "block", "search",
                                "sweep", "merge", "convert"}) {
        const auto help = run_pipesim(std::string(command) + " --help");
        const std::vector<std::string> flags = listed_flags(help.out);
        CAPTURE(command);
        CHECK(flags.size() >= 1);
        for (const std::string& flag : flags) {
            CAPTURE(flag);
            const auto r = run_pipesim(std::string(command) + " " + flag + " 1");
            CHECK_THAT(r.err, !Catch::Contains("unknown option '" + flag + "'"));
        }
    }
    const std::vector<std::string> simulate = listed_flags(run_pipesim("simulate --help").out);
    CHECK(std::find(simulate.begin(), simulate.end(), "--comm") == simulate.end());
    CHECK(std::find(simulate.begin(), simulate.end(), "--cluster") != simulate.end());
}

TEST_CASE("pipesim --version prints the project's version from CMake", "[cli]") {
    const auto r = run_pipesim("--version");
    CHECK(r.exit_code == 0);
    CHECK(r.out == std::string("pipesim ") + PIPESIM_VERSION + "\n");
    CHECK_THAT(r.out, Catch::Matches("pipesim [0-9]+\\.[0-9]+\\.[0-9]+\n"));
}

TEST_CASE("every command listed by --help takes --help and exits 0", "[cli]") {
    const std::vector<std::string> commands = listed_commands(run_pipesim("--help").out);
    REQUIRE(commands.size() >= 12);
    CHECK(std::find(commands.begin(), commands.end(), "list") != commands.end());
    CHECK(std::find(commands.begin(), commands.end(), "gpu-run") != commands.end());
    for (const std::string& command : commands)
        for (const char* flag : {"--help", "-h"}) {
            CAPTURE(command, flag);
            const auto r = run_pipesim(command + " " + flag);
            CHECK(r.exit_code == 0);
            CHECK(r.err.empty());
            CHECK_THAT(r.out, Catch::StartsWith("usage: pipesim " + command));
        }
}

TEST_CASE("output that cannot be written to standard output is an error, not exit 0", "[cli]") {
    // /dev/full refuses every write: what stayed buffered until exit used to be lost silently.
    if (!std::filesystem::exists("/dev/full")) return;
    for (const char* args :
         {"list", "analyze -s zb-h1 -p 4 -m 8", "analyze -s 1f1b -p 2 -m 2 --json"}) {
        CAPTURE(args);
        const auto errors =
            std::filesystem::temp_directory_path() / fmt::format("pipesim-full-{}.txt", ::getpid());
        const std::string command =
            std::string(PIPESIM_BINARY) + " " + args + " > /dev/full 2> " + errors.string();
        const int status = std::system(command.c_str());
        std::ifstream in(errors);
        const std::string message((std::istreambuf_iterator<char>(in)), {});
        std::filesystem::remove(errors);
        REQUIRE(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 2);
        // The output named ("cannot write to file" said none).
        const std::string command_name = std::string(args).substr(0, std::string(args).find(' '));
        CHECK(message == "pipesim " + command_name +
                             ": cannot write standard output: No space left on device\n");
    }
}

TEST_CASE("compare's help lists only flags compare takes", "[cli]") {
    // It once listed -s NAME, --schedule-file and --save from analyze's table, which compare
    // then refused.
    const auto help = run_pipesim("compare --help");
    REQUIRE(help.exit_code == 0);
    CHECK_THAT(help.out,
               Catch::Contains("-s, --schedule LIST") && Catch::Contains("--costs F,B,W"));
    CHECK_THAT(help.out, !Catch::Contains("--schedule-file") && !Catch::Contains("--save FILE") &&
                             !Catch::Contains("--schedule NAME"));
    CHECK(run_pipesim("compare -s 1f1b -p 2 -m 2 --save x.json").exit_code == 2);
}

TEST_CASE("a --save that cannot be written leaves no other output behind", "[cli]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "pipesim_save_first";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string d = dir.string() + "/";
    const std::string outputs = " --trace " + d + "tr.json --save-timeline " + d +
                                "tl.json --timeline " + d + "t.svg --html " + d + "h.html";
    // DualPipe's two model copies do not fit PyTorch's CSV; an extension names no format.
    for (const std::string& command :
         {"analyze -s dualpipe -p 4 -m 8 --save " + d + "s.csv" + outputs,
          "analyze -s 1f1b -p 4 -m 8 --save " + d + "s.txt" + outputs,
          "simulate -s dualpipe -p 4 -m 8 --cluster dgx-a100:1 --save " + d + "s.csv" + outputs}) {
        CAPTURE(command);
        const auto r = run_pipesim(command);
        CHECK(r.exit_code == 2);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(fs::is_empty(dir));
    }
    fs::remove_all(dir);
}

TEST_CASE("a run's warnings come after its outputs, so a failing output is one line", "[cli]") {
    // The interleaved shape warning was printed, then --lifespan refused: two lines.
    const std::string picture =
        (std::filesystem::temp_directory_path() / "pipesim_warning_last.svg").string();
    const auto r = run_pipesim("analyze -s interleaved-1f1b -p 4 -m 6 --timeline " + picture +
                               " --lifespan 100");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "pipesim analyze: --lifespan 100: the timeline has microbatches 0..5\n");
    const auto ok = run_pipesim("analyze -s interleaved-1f1b -p 4 -m 6 --gantt");
    CHECK(ok.exit_code == 0);
    CHECK_THAT(ok.err, Catch::StartsWith("pipesim analyze: warning: interleaved-1f1b with m = 6"));
}

TEST_CASE("a name echoed in an error is escaped and cut, the error one line", "[cli]") {
    const auto r = run_pipesim("analyze -s \"$(printf 'bad\\nname\\033[31mred')\" -p 4 -m 8");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: unknown schedule "
                                        "'bad\\x0aname\\x1b[31mred' (known: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    // A 100,000-byte name was echoed whole.
    const auto long_name =
        run_pipesim("analyze -s \"$(head -c 100000 /dev/zero | tr '\\0' x)\" -p 4 -m 8");
    CHECK(long_name.exit_code == 2);
    CHECK_THAT(long_name.err, Catch::Contains("unknown schedule 'xxxx"));
    CHECK(long_name.err.size() < 400);
    const auto cluster = run_pipesim("simulate -s 1f1b -p 4 -m 8 --cluster \"$(printf 'a\\tb')\"");
    CHECK_THAT(cluster.err, Catch::StartsWith("pipesim simulate: unknown cluster 'a\\x09b'"));
}

TEST_CASE("compare names a long unknown schedule cut short so that the reason stays in the line",
          "[cli]") {
    // The whole name came first, so that a log's cut line lost the reason.
    const std::string name(300, 'x');
    const auto r = run_pipesim("compare -s 1f1b," + name + " -p 4 -m 8");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("pipesim compare: '" + std::string(40, 'x') +
                                        "'...: unknown schedule '"));
    CHECK_THAT(r.err, Catch::Contains("(known: gpipe, 1f1b,"));
    CHECK(r.err.size() < 400);
    // A short one stays as given.
    CHECK(run_pipesim("compare -s 1f1b,nope -p 4 -m 8")
              .err.rfind("pipesim compare: nope: unknown schedule 'nope'", 0) == 0);
}

TEST_CASE("a long convert and the drawing of large outputs show their phases on a terminal",
          "[cli]") {
    // A schedule file of 2.3 million ops (20 MB) took seconds to read and write without a word;
    // so did a trace of a million ops. On a terminal, one status line names each phase, and
    // it is cleared at the end.
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("pipesim_phases_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string big = (dir / "big.json").string();
    REQUIRE(run_pipesim("analyze -s zb-h1 -p 64 -m 12000 --save " + big).exit_code == 0);
    const auto convert =
        pipesim::test::run_pipesim_on_terminal({"convert", big, "-o", (dir / "big.csv").string()});
    CHECK(convert.exit_code == 0);
    CHECK_THAT(convert.err, Catch::Contains("pipesim convert: reading " + big + "...") &&
                                Catch::Contains("pipesim convert: composing the schedule file " +
                                                (dir / "big.csv").string() + " (2304000 ops)...") &&
                                Catch::EndsWith("\r\033[K"));
    const auto trace = pipesim::test::run_pipesim_on_terminal(
        {"analyze", "-s", "zb-h1", "-p", "64", "-m", "6000", "--trace", (dir / "t.json").string()});
    CHECK(trace.exit_code == 0);
    CHECK_THAT(trace.err,
               Catch::Contains("pipesim analyze: replaying zb-h1") &&
                   Catch::Contains("pipesim analyze: writing the trace (1152000 ops)...") &&
                   Catch::EndsWith("\r\033[K"));
    // Not on a terminal: no status line.
    CHECK(run_pipesim("convert " + big + " -o " + (dir / "again.csv").string()).err.empty());
    fs::remove_all(dir);
}
