#pragma once
// The JSON a pipesim command prints, after checking in the running test case that it ran.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "cli_runner.hpp"

namespace pipesim::test {

/// `pipesim <args>`'s standard output parsed as JSON; the command must exit 0.
inline nlohmann::json run_pipesim_json(const std::string& args) {
    const CommandResult r = run_pipesim(args);
    INFO(args << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace pipesim::test
