// The README's short tour, run in order in an empty folder as a new user would.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.hpp"

namespace fs = std::filesystem;
using pipesim::test::read_file;
using pipesim::test::run_pipesim;

namespace {

// The pipesim commands of the README's "A short tour" block: continuation lines joined,
// comments dropped, `make` lines left out, paths into the source tree made absolute.
std::vector<std::string> tour_commands(const std::string& readme) {
    const auto tour = readme.find("## A short tour");
    REQUIRE(tour != std::string::npos);
    const auto open = readme.find("```\n", tour);
    const auto close = readme.find("\n```", open + 4);
    REQUIRE(close != std::string::npos);
    const std::string block = readme.substr(open + 4, close - open - 4);
    const std::string source = PIPESIM_SOURCE_DIR;
    std::vector<std::string> commands;
    std::string current;
    for (const std::string& line : pipesim::test::lines_of(block + "\n")) {
        std::string text = std::regex_replace(line, std::regex(R"(\s+#.*$)"), "");
        if (!text.empty() && text.back() == '\\') {
            current += text.substr(0, text.size() - 1) + " ";
            continue;
        }
        current += text;
        const std::string prefix = "build/cli/pipesim ";
        if (current.rfind(prefix, 0) == 0) {
            std::string args = current.substr(prefix.size());
            args = std::regex_replace(args, std::regex(R"( (tests|experiments)/)"),
                                      " " + source + "/$1/");
            commands.push_back(args);
        } else {
            CHECK(
                (current.empty() || current.rfind("make ", 0) == 0 || current.rfind("  ", 0) == 0));
        }
        current.clear();
    }
    return commands;
}

}  // namespace

TEST_CASE("the README tour runs in order in an empty folder", "[cli][docs]") {
    const std::vector<std::string> commands =
        tour_commands(read_file(fs::path(PIPESIM_SOURCE_DIR) / "README.md"));
    REQUIRE(commands.size() >= 15);
    const fs::path dir = fs::temp_directory_path() / ("pipesim_tour_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path previous = fs::current_path();
    fs::current_path(dir);
    for (const std::string& args : commands) {
        CAPTURE(args);
        const auto r = run_pipesim(args);
        CHECK(r.exit_code == 0);
        CHECK(r.err.find("pipesim") == std::string::npos);  // no error line
    }
    // What the tour says it writes.
    for (const char* file : {"zb-h1.csv", "zb-h1.json", "zbv.svg", "t.json", "trace.json", "t.png",
                             "results.csv", "pareto.svg"}) {
        CAPTURE(file);
        CHECK(fs::file_size(dir / file) > 0);
    }
    fs::current_path(previous);
    fs::remove_all(dir);
}
