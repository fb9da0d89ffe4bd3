// The picture flags of `pipesim analyze` and `pipesim render`: files written, bad input.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

using pipesim::test::read_file;
using pipesim::test::run_pipesim;
namespace fs = std::filesystem;

namespace {

// A fresh directory for one test case, removed at the end.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() /
               ("pipesim_viz_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
    std::size_t files() const {
        return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {}));
    }
};

}  // namespace

TEST_CASE("analyze writes the picture, dependency graph, trace and saved timeline it is asked for",
          "[viz][cli]") {
    TempDir dir;
    const auto r = run_pipesim("analyze -s 1f1b -p 4 -m 8 --timeline " + (dir / "t.dot") +
                               " --dep-graph " + (dir / "g.dot") + " --trace " +
                               (dir / "trace.json") + " --save-timeline " + (dir / "tl.json"));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(read_file(dir / "t.dot"), Catch::StartsWith("digraph timeline {"));
    CHECK_THAT(read_file(dir / "g.dot"), Catch::StartsWith("digraph dependencies {"));
    CHECK_THAT(read_file(dir / "trace.json"), Catch::Contains("\"traceEvents\""));
    CHECK_THAT(read_file(dir / "tl.json"), Catch::Contains("\"format\": \"pipesim-timeline\""));
    CHECK(dir.files() == 4);  // no temporary files left
}

TEST_CASE("a run at the largest pass times saves a timeline that reads back", "[viz][cli]") {
    // Pass times of 1e30, the most --costs takes: 1F1B's makespan 3(m + p − 1)·1e30 = 3.3e31
    // was beyond the reader's old bound of 1e30, which refused the file the run wrote.
    TempDir dir;
    REQUIRE(run_pipesim("analyze -s 1f1b -p 4 -m 8 --costs 1e30,1e30,1e30 --save-timeline " +
                        (dir / "t.json"))
                .exit_code == 0);
    const auto r = run_pipesim("render " + (dir / "t.json") + " --gantt");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("3.3e+31 unit"));
}

TEST_CASE("render refuses a picture of too many ops from the file's header", "[viz][cli]") {
    // The header claims p = m = 1,024 (at least 2,097,152 ops); the rest of the file is never
    // read: a whole file of that size took 40 s and 3.7 GB to parse before being refused.
    TempDir dir;
    std::ofstream(dir / "big.json")
        << R"({"format": "pipesim-timeline", "version": 1, "schedule": "1f1b", "devices": 1024,
  "microbatches": 1024, "chunks": 1, "time_unit": "unit", "stage_device": [0],
  "device_ops": [ not read)";
    const auto r = run_pipesim("render " + (dir / "big.json") + " -o " + (dir / "t.svg"));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "pipesim render: the timeline picture draws every op: " + (dir / "big.json") +
                       "'s header says at least 2097152 ops (an F and a backward per "
                       "microbatch and stage), more than the 200000 it draws (use fewer "
                       "microbatches, or --trace for Perfetto or --gantt)\n");
    CHECK(dir.files() == 1);
    // DualPipe's header gives each microbatch's range of stages instead: 4,096 microbatches
    // over 32 of the 64 stages each, 262,144 ops at least.
    std::string ranges;
    for (int mb = 0; mb < 4096; ++mb)
        ranges += fmt::format("{}[{}, {}]", mb ? ", " : "", mb % 2 ? 32 : 0, mb % 2 ? 63 : 31);
    std::ofstream(dir / "dual.json")
        << R"({"format": "pipesim-timeline", "version": 1, "schedule": "dualpipe", "devices": 32,
  "microbatches": 4096, "chunks": 2, "time_unit": "unit", "stage_device": [0],
  "microbatch_stages": [)" +
               ranges + R"(],
  "device_ops": [ not read)";
    const auto dual = run_pipesim("render " + (dir / "dual.json") + " -o " + (dir / "t.svg"));
    CHECK(dual.exit_code == 2);
    CHECK_THAT(dual.err, Catch::Contains("dual.json's header says at least 262144 ops"));
    CHECK(dir.files() == 2);
    // Without a picture the whole file is read, and its error found.
    const auto gantt = run_pipesim("render " + (dir / "big.json") + " --gantt");
    CHECK(gantt.exit_code == 2);
    CHECK_THAT(gantt.err, Catch::Contains("invalid JSON"));
}

TEST_CASE("a picture of more ops than it draws is refused before the run", "[viz][cli]") {
    TempDir dir;
    // 64·65,536 microbatches run for a second and take 450 MB before the picture was refused.
    const std::string why =
        "the timeline picture draws every op: 1f1b's p·v·m = 64·1·65536 makes 8388608 ops (an F "
        "and a backward per microbatch on every stage), more than the 200000 it draws";
    const auto one = run_pipesim("analyze -s 1f1b -p 64 -m 65536 --timeline " + (dir / "t.svg"));
    CHECK(one.exit_code == 2);
    CHECK_THAT(one.err, Catch::StartsWith("pipesim analyze: " + why));
    const auto html =
        run_pipesim("compare -s 1f1b,zb-h1 -p 64 -m 65536 --html " + (dir / "r.html"));
    CHECK(html.exit_code == 2);
    CHECK_THAT(html.err, Catch::StartsWith("pipesim compare: " + why));
    // compare checks every schedule before the first runs: at p 64, m 1024 1F1B's 131,072 ops
    // and ZB-H1's 196,608 fit, and v-min's 3·64·2·1024 = 393,216 do not (it drew 1F1B and
    // ZB-H1 first, 9 s); at m 1200 ZB-H1's F, B and W, 230,400, do not either.
    const auto later =
        run_pipesim("compare -s 1f1b,zb-h1,v-min -p 64 -m 1024 --html " + (dir / "r.html"));
    CHECK(later.exit_code == 2);
    CHECK_THAT(later.err,
               Catch::StartsWith("pipesim compare: the timeline picture draws every op: v-min's "
                                 "p·v·m = 64·2·1024 makes 393216 ops (an F, a B and a W per "
                                 "microbatch on every stage)"));
    CHECK_THAT(run_pipesim("compare -s 1f1b,zb-h1 -p 64 -m 1200 --html " + (dir / "r.html")).err,
               Catch::Contains("zb-h1's p·v·m = 64·1·1200 makes 230400 ops"));
    // DualPipe's microbatches pass through half of its 2p stages, an F&B pair one op:
    // about 2·p·m ops, and a count that fits is drawn.
    const auto dualpipe =
        run_pipesim("analyze -s dualpipe -p 8 -m 16 --timeline " + (dir / "d.dot"));
    CHECK(dualpipe.exit_code == 0);
    CHECK_THAT(run_pipesim("analyze -s dualpipe -p 64 -m 1600 --timeline " + (dir / "d.svg")).err,
               Catch::Contains("dualpipe's p·m = 64·1600 makes at least 204800 ops"));
    CHECK(dir.files() == 1);  // d.dot
}

TEST_CASE("a picture is refused, not crashed, when Graphviz's libraries would not fit",
          "[viz][cli]") {
    // Under 60 MB of address space pango's font thread could not start: glib aborted the
    // process (SIGTRAP) or fontconfig crashed (SIGSEGV).
    TempDir dir;
    const auto r =
        pipesim::test::run_program("ulimit -v 60000; " + std::string(PIPESIM_BINARY),
                                   "analyze -s 1f1b -p 4 -m 8 --timeline " + (dir / "t.svg"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: drawing the svg picture needs about "));
    CHECK_THAT(r.err, Catch::EndsWith("left under this process's address-space limit (ulimit "
                                      "-v)\n"));
    CHECK(dir.files() == 0);
    // The DOT text needs no Graphviz: it is written under the same limit.
    const auto dot =
        pipesim::test::run_program("ulimit -v 60000; " + std::string(PIPESIM_BINARY),
                                   "analyze -s 1f1b -p 4 -m 8 --timeline " + (dir / "t.dot"));
    CHECK(dot.exit_code == 0);
    CHECK(dir.files() == 1);
}

TEST_CASE("render draws a saved timeline exactly as analyze drew it", "[viz][cli]") {
    TempDir dir;
    REQUIRE(run_pipesim("analyze -s interleaved-1f1b -p 4 -m 8 -v 2 --mem-w-ratio 0.5 --comm 0.1 "
                        "--timeline " +
                        (dir / "a.dot") + " --save-timeline " + (dir / "tl.json"))
                .exit_code == 0);
    const auto r = run_pipesim("render " + (dir / "tl.json") + " -o " + (dir / "b.dot"));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(read_file(dir / "a.dot") == read_file(dir / "b.dot"));
    // Its times and memory model are the saved ones: flags that would change them are
    // refused, not ignored (--mem-w-ratio drew the same picture without a word).
    for (const std::string flag : {"--mem-w-ratio 0.2", "--costs 1,2,1", "--comm 0.5"}) {
        CAPTURE(flag);
        const auto refused =
            run_pipesim("render " + (dir / "tl.json") + " -o " + (dir / "c.dot") + " " + flag);
        CHECK(refused.exit_code == 2);
        CHECK_THAT(refused.err, Catch::StartsWith("pipesim render: " + (dir / "tl.json") +
                                                  " is a saved timeline"));
        CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
        CHECK_FALSE(fs::exists(dir / "c.dot"));
    }
    // Each named as given (--a2a was told that --costs and --comm did not apply).
    for (const std::string flag : {"--comm", "--a2a", "--overlap-fb"}) {
        const auto refused = run_pipesim("render " + (dir / "tl.json") + " -o " + (dir / "c.dot") +
                                         " " + flag + " 0.5");
        CHECK(refused.exit_code == 2);
        CHECK(refused.err == "pipesim render: " + (dir / "tl.json") +
                                 " is a saved timeline: its times are fixed, so " + flag +
                                 " does not apply\n");
    }
    // The picture and the Gantt chart cannot share standard output (the chart followed
    // </svg> and made a corrupt picture, exit 0).
    const auto both = run_pipesim("render " + (dir / "tl.json") + " -o - --format svg --gantt");
    CHECK(both.exit_code == 2);
    CHECK(both.out.empty());
    CHECK_THAT(both.err, Catch::Contains("- and --gantt both print to standard output"));
}

TEST_CASE("render draws a timeline no run could produce and warns after the picture",
          "[viz][cli]") {
    TempDir dir;
    // One microbatch's ops where five are claimed.
    std::ofstream(dir / "part.json")
        << R"({"format": "pipesim-timeline", "version": 1, "schedule": "1f1b", "devices": 2,
  "microbatches": 5, "chunks": 1, "time_unit": "unit", "stage_device": [0, 1], "device_ops": [
  [{"pass": "F", "mb": 0, "stage": 0, "start": 0, "end": 1},
   {"pass": "BW", "mb": 0, "stage": 0, "start": 4, "end": 6}],
  [{"pass": "F", "mb": 0, "stage": 1, "start": 1, "end": 2},
   {"pass": "BW", "mb": 0, "stage": 1, "start": 2, "end": 4}]]})";
    const auto r = run_pipesim("render " + (dir / "part.json") + " -o " + (dir / "p.dot"));
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(dir / "p.dot"));
    CHECK(r.err == "pipesim render: warning: " + (dir / "part.json") +
                       ": not a whole run of p=2 m=5 v=1: F(mb 1, stage 0) is missing (it belongs "
                       "on device 0); the picture and its figures are of the ops the file holds\n");
}

TEST_CASE("render replays a schedule file before drawing it", "[viz][cli]") {
    TempDir dir;
    REQUIRE(run_pipesim("analyze -s 1f1b -p 4 -m 8 --save " + (dir / "s.json") + " --timeline " +
                        (dir / "a.dot"))
                .exit_code == 0);
    const auto r = run_pipesim("render " + (dir / "s.json") + " -o " + (dir / "b.dot"));
    REQUIRE(r.exit_code == 0);
    CHECK(read_file(dir / "a.dot") == read_file(dir / "b.dot"));
}

TEST_CASE("analyze --gantt prints the chart after the table, fitted to COLUMNS", "[viz][cli]") {
    const auto r = run_pipesim("analyze -s 1f1b -p 4 -m 8 --gantt");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("makespan") && Catch::Contains("\nd3 |."));
    const auto narrow = run_pipesim("analyze -s 1f1b -p 2 -m 2 --gantt");
    CHECK_THAT(narrow.out, Catch::Contains("d0 |F"));
    CHECK(run_pipesim("analyze -s 1f1b -p 4 -m 8 --gantt --json").exit_code == 2);
    // A width beyond any screen is held to 1,000 columns (2^31 took 8 GB and never ended).
    ::setenv("COLUMNS", "2147483647", 1);
    const auto wide = run_pipesim("analyze -s 1f1b -p 4 -m 8 --gantt");
    ::unsetenv("COLUMNS");
    REQUIRE(wide.exit_code == 0);
    std::size_t longest = 0;
    for (const auto& line : pipesim::test::lines_of(wide.out))
        longest = std::max(longest, line.size());
    CHECK(longest > 900);
    CHECK(longest <= 1000);
}

TEST_CASE("bad picture requests fail with exit code 2 and leave no file behind", "[viz][cli]") {
    TempDir dir;
    std::ofstream(dir / "broken.json")
        << "{\n  \"format\": \"pipesim-timeline\",\n  \"version\": 1,\n"
           "  \"devices\": 2,,\n}\n";
    std::ofstream(dir / "bad_field.json") << R"({"format": "pipesim-timeline", "version": 1,
 "schedule": "x", "devices": 1, "microbatches": 1, "chunks": 1, "time_unit": "unit",
 "stage_device": [0], "device_ops": [[{"pass": "F", "mb": 0, "stage": 0, "start": 2, "end": 1}]]})";
    std::ofstream(dir / "fortnight.json") << R"({"format": "pipesim-timeline", "version": 1,
 "schedule": "x", "devices": 1, "microbatches": 1, "chunks": 1, "time_unit": "fortnight",
 "stage_device": [0], "device_ops": [[{"pass": "F", "mb": 0, "stage": 0, "start": 0, "end": 1}]]})";
    using row = std::tuple<std::string, std::string>;
    auto [args, expected] = GENERATE(table<std::string, std::string>({
        row{"analyze -s 1f1b -p 4 -m 8 --timeline OUT/t.jpg", "unknown picture format '.jpg'"},
        row{"analyze -s 1f1b -p 4 -m 8 --timeline OUT/t",
            "no extension to tell the format by; add --format"},
        row{"analyze -s 1f1b -p 4 -m 8 --dep-graph OUT/g.txt", "unknown picture format '.txt'"},
        row{"analyze -s 1f1b -p 4 -m 8 --timeline OUT/missing/t.svg",
            "cannot write OUT/missing/t.svg: No such file or directory"},
        row{"analyze -s 1f1b -p 4 -m 8 --trace OUT/missing/t.json", "cannot write OUT/missing"},
        row{"analyze -s 1f1b -p 4 -m 8 --save-timeline OUT/broken.json/t.json",
            "cannot write OUT/broken.json/t.json: Not a directory"},
        row{"analyze -s 1f1b -p 16 -m 64 --dep-graph OUT/g.svg", "it is drawn for up to 600"},
        row{"render OUT/broken.json -o OUT/t.svg", "OUT/broken.json:4:16: invalid JSON"},
        row{"render OUT/bad_field.json -o OUT/t.svg",
            "OUT/bad_field.json:3:93: device_ops[0][0].end: F(mb 0, stage 0) ends at 1"},
        row{"render OUT/nope.json -o OUT/t.svg", "OUT/nope.json: cannot read"},
        row{"render OUT/fortnight.json -o OUT/t.svg",
            "OUT/fortnight.json:2:78: time_unit: expected \"unit\", \"s\", \"ms\" or \"us\""},
        row{"render OUT/fortnight.json --gantt", "OUT/fortnight.json:2:78: time_unit: expected"},
        row{"render OUT/fortnight.json --trace OUT/t.json",
            "OUT/fortnight.json:2:78: time_unit: expected"},
        row{"render OUT/broken.json", "nothing to write"},
        row{"render -o OUT/t.svg", "missing the input file"},
        row{"render OUT/broken.json -o OUT/t.gif", "unknown picture format '.gif'"},
    }));
    const std::string out = dir.path.string();
    auto expand = [&](std::string text) {
        for (auto at = text.find("OUT"); at != std::string::npos; at = text.find("OUT", at))
            text.replace(at, 3, out);
        return text;
    };
    CAPTURE(args);
    const std::size_t before = dir.files();
    const auto r = run_pipesim(expand(args));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(expand(expected)));
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
    CHECK(dir.files() == before);                 // nothing written, no temporary left
}

TEST_CASE("an unwritable directory is bad input, not a crash", "[viz][cli]") {
    TempDir dir;
    fs::create_directories(dir.path / "ro");
    fs::permissions(dir.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    const auto r = run_pipesim("analyze -s 1f1b -p 2 -m 2 --timeline " + (dir / "ro/t.svg"));
    fs::permissions(dir.path / "ro", fs::perms::owner_all);
    if (::geteuid() == 0) {
        WARN("running as root, which may write anywhere: permission check skipped");
    } else {
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("Permission denied"));
        CHECK(fs::is_empty(dir.path / "ro"));
    }
}
