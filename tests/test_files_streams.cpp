// '-' for standard input and output, and --format for outputs named without an extension.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

using pipesim::test::read_file;
using pipesim::test::run_pipesim;

namespace {

// A fresh directory for one test's files.
std::filesystem::path scratch_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_streams_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("analyze --save - writes the schedule to standard output and nothing else",
          "[files][cli][streams]") {
    const auto dir = scratch_dir("save");
    const auto json = run_pipesim("analyze -s zb-h1 -p 4 -m 8 --save - --format json");
    REQUIRE(json.exit_code == 0);
    // The whole of standard output is the schedule file: it parses, and is the same schedule
    // as the one written to a named file.
    const auto parsed = nlohmann::json::parse(json.out);
    CHECK(parsed["format"] == "pipesim-schedule");
    REQUIRE(
        run_pipesim("analyze -s zb-h1 -p 4 -m 8 --save " + (dir / "zb.json").string()).exit_code ==
        0);
    CHECK(nlohmann::json::parse(read_file(dir / "zb.json")) == parsed);

    const auto csv = run_pipesim("analyze -s 1f1b -p 2 -m 2 --save - --format csv");
    REQUIRE(csv.exit_code == 0);
    // PyTorch's CSV: one row per device, its first op first.
    CHECK(csv.out.rfind("0F0,", 0) == 0);
    CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 2);
    std::filesystem::remove_all(dir);
}

TEST_CASE("search --save - writes its best schedule to standard output", "[files][cli][streams]") {
    const auto best = run_pipesim("search -p 4 -m 8 --mem-limit 4 --save - --format json");
    REQUIRE(best.exit_code == 0);
    const auto schedule = nlohmann::json::parse(best.out);  // the whole output is the file
    CHECK(schedule["format"] == "pipesim-schedule");
    CHECK(schedule["devices"] == 4);
    CHECK(schedule["microbatches"] == 8);
    const auto refused = run_pipesim("search -p 4 -m 8 --mem-limit 4 --save -");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("add --format json|csv"));
}

TEST_CASE("a schedule read from standard input gives the same analysis as from its file",
          "[files][cli][streams]") {
    const auto dir = scratch_dir("stdin");
    for (const char* ext : {".json", ".csv"}) {
        CAPTURE(ext);
        const auto file = dir / (std::string("zb") + ext);
        REQUIRE(run_pipesim("analyze -s zb-h1 -p 4 -m 8 --save " + file.string()).exit_code == 0);
        const auto from_file =
            run_pipesim("analyze --schedule-file " + file.string() + " --costs 1,2,1 --json");
        const auto from_stdin =
            run_pipesim("analyze --schedule-file - --costs 1,2,1 --json", file.string());
        REQUIRE(from_stdin.exit_code == 0);
        const auto a = nlohmann::json::parse(from_file.out),
                   b = nlohmann::json::parse(from_stdin.out);
        CHECK(a["makespan"] == b["makespan"]);
        CHECK(a["bubble_rate"] == b["bubble_rate"]);
        CHECK(a["peak_activation"] == b["peak_activation"]);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE(
    "render reads a PyTorch CSV schedule from standard input and from a file without "
    "an extension",
    "[files][cli][streams][viz]") {
    const auto dir = scratch_dir("render_csv");
    // The picture's title is the schedule's name, the input's stem ("stdin" for standard
    // input), so the file is named to match and the three pictures must be the same text.
    const auto csv = dir / "stdin.csv";
    REQUIRE(run_pipesim("analyze -s 1f1b -p 2 -m 4 --save " + csv.string()).exit_code == 0);
    std::filesystem::copy_file(csv, dir / "stdin");
    const auto from_file = run_pipesim("render " + csv.string() + " -o - --format dot");
    REQUIRE(from_file.exit_code == 0);
    CHECK(from_file.out.find("label=\"stdin   p=2 m=4") != std::string::npos);
    const auto from_stdin = run_pipesim("render - -o - --format dot", csv.string());
    CHECK(from_stdin.err == "");
    REQUIRE(from_stdin.exit_code == 0);
    const auto no_extension =
        run_pipesim("render " + (dir / "stdin").string() + " -o - --format dot");
    REQUIRE(no_extension.exit_code == 0);
    CHECK(from_stdin.out == from_file.out);
    CHECK(no_extension.out == from_file.out);
    std::filesystem::remove_all(dir);
}

TEST_CASE("render names both kinds of input it takes when the file is empty",
          "[files][cli][streams][viz]") {
    const auto dir = scratch_dir("render_empty");
    for (const auto& name : {"empty", "empty.json", "blank.json"}) {
        write_text(dir / name, std::string(name) == "blank.json" ? " \n\t\n" : "");
        const auto r = run_pipesim("render " + (dir / name).string() + " -o - --format dot");
        CAPTURE(name, r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Catch::Contains(std::string(name) +
                                          ": empty file: expected a saved timeline (JSON) or a "
                                          "schedule file"));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    const auto piped = run_pipesim("render - -o - --format dot", (dir / "empty").string());
    CHECK(piped.exit_code == 2);
    CHECK_THAT(piped.err, Catch::Contains("standard input: empty file: expected a saved timeline"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a byte-order mark before a saved timeline or a schedule read by content is skipped",
          "[files][cli][streams][viz]") {
    const auto dir = scratch_dir("bom");
    const auto timeline = dir / "t.json";
    const auto schedule = dir / "s.json";
    REQUIRE(run_pipesim("analyze -s 1f1b -p 2 -m 2 --comm 0.5 --save-timeline " +
                        timeline.string() + " --save " + schedule.string())
                .exit_code == 0);
    for (const auto& file : {timeline, schedule}) {
        const auto marked = dir / ("bom_" + file.filename().string());
        write_text(marked, "\xEF\xBB\xBF" + read_file(file));
        const auto plain = run_pipesim("render " + file.string() + " -o - --format dot");
        REQUIRE(plain.exit_code == 0);
        // Named by file (a .json) and on standard input (read by content): the same picture
        // as without the mark (the title is the schedule's, not the file's name).
        const auto named = run_pipesim("render " + marked.string() + " -o - --format dot");
        CHECK(named.err == "");
        CHECK(named.exit_code == 0);
        const auto piped = run_pipesim("render - -o - --format dot", marked.string());
        CHECK(piped.err == "");
        CHECK(piped.exit_code == 0);
        if (file == timeline) {
            CHECK(named.out == plain.out);
            CHECK(piped.out == plain.out);
        }
    }
    const auto converted =
        run_pipesim("convert - -o - --format csv", (dir / "bom_s.json").string());
    CHECK(converted.exit_code == 0);
    CHECK(converted.out == run_pipesim("convert " + schedule.string() + " -o - --format csv").out);
    std::filesystem::remove_all(dir);
}

TEST_CASE("convert reads '-' by its content and writes '-' in the named format",
          "[files][cli][streams]") {
    const auto dir = scratch_dir("convert");
    const auto json_file = dir / "v.json";
    REQUIRE(run_pipesim("analyze -s v-half -p 4 -m 8 --save " + json_file.string()).exit_code == 0);
    const auto csv = run_pipesim("convert - -o - --format csv", json_file.string());
    REQUIRE(csv.exit_code == 0);
    write_text(dir / "from_stdin.csv", csv.out);
    // Back to JSON through standard input again: the same ops as the original file.
    const auto back =
        run_pipesim("convert - -o - --format json", (dir / "from_stdin.csv").string());
    REQUIRE(back.exit_code == 0);
    const auto original = nlohmann::json::parse(read_file(json_file));
    const auto round_trip = nlohmann::json::parse(back.out);
    CHECK(round_trip["devices"] == original["devices"]);
    CHECK(round_trip["device_ops"] == original["device_ops"]);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a timeline picture to standard output is the picture", "[files][cli][streams][viz]") {
    const auto dot = run_pipesim("analyze -s 1f1b -p 4 -m 8 --timeline - --format dot");
    REQUIRE(dot.exit_code == 0);
    CHECK(dot.out.rfind("digraph", 0) == 0);
    // The DOT text and nothing after it: no report table mixed in.
    CHECK(dot.out.size() > 2);
    CHECK(dot.out.substr(dot.out.size() - 2) == "}\n");
}

TEST_CASE("outputs without a format, or two on standard output, are refused before any work",
          "[files][cli][streams]") {
    const auto dir = scratch_dir("refuse");
    const std::string unnamed = (dir / "schedule").string();
    struct Case {
        std::string args, message;
    };
    const Case cases[] = {
        {"analyze -s 1f1b -p 4 -m 8 --save -",
         "--save '-': no extension to tell the format by; add --format json|csv"},
        {"analyze -s 1f1b -p 4 -m 8 --save " + unnamed, "no extension to tell the format by"},
        {"analyze -s 1f1b -p 4 -m 8 --save - --format png",
         "--format 'png': --save '-' takes json or csv"},
        {"analyze -s 1f1b -p 4 -m 8 --timeline - --format csv",
         "--format 'csv': --timeline '-' takes svg, png, pdf or dot"},
        {"analyze -s 1f1b -p 4 -m 8 --timeline - --save - --format json",
         "--timeline and --save both write to standard output"},
        {"analyze -s 1f1b -p 4 -m 8 --save - --format json --json",
         "--save - and --json both print to standard output"},
        {"analyze -s 1f1b -p 4 -m 8 --format svg", "no output is written to '-'"},
        // A trace named without an extension is such an output, but always JSON.
        {"analyze -s 1f1b -p 4 -m 8 --trace run-trace --format svg",
         "--format 'svg': --trace 'run-trace' is always JSON"},
        {"convert - -o -", "-o '-': no extension to tell the format by; add --format json|csv"},
        {"convert - -o out.json --format csv", "takes its format from its extension"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const auto r = run_pipesim(c.args);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, Catch::Contains(c.message));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    CHECK_FALSE(std::filesystem::exists(unnamed));
    std::filesystem::remove_all(dir);
}
