// pipesim simulate: output and bad input.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using pipesim::test::run_pipesim;

TEST_CASE("simulate --json reports the contract's fields and the iteration time",
          "[simgrid][cli]") {
    const auto r = run_pipesim(
        "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --costs 0.01,0.02,0.01 --dp 2 "
        "--message-bytes 1e6 --grad-bytes 1e8 --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["engine"] == "simgrid");
    CHECK(j["schedule"] == "1f1b");
    CHECK(j["gpus"] == 8);
    CHECK(j["peak_activation"].size() == 4);
    // Pipeline alone: (m+p−1)(F+B+W) = 0.44 s plus a few microseconds of transfers.
    CHECK(j["makespan"].get<double>() == Approx(0.44).epsilon(1e-3));
    CHECK(j["makespan"].get<double>() > 0.44);
    CHECK(j["iteration_time"].get<double>() > j["makespan"].get<double>());
    CHECK(j["grad_reduce_time"].get<double>() > 0);
}

TEST_CASE("simulate rejects bad clusters and layouts with exit code 2", "[simgrid][cli]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipesim_simulate_cli";
    std::filesystem::create_directories(dir);
    const auto bad_file = dir / "bad.json";
    std::ofstream(bad_file) << "{\"gpus_per_node\": 8,\n \"nodes\": 3}";
    const auto tpu_file = dir / "tpu.json";
    std::ofstream(tpu_file) << R"({"name": "x", "gpus_per_node": 4,
 "nodes": [{"count": 1, "gpu": "tpu"}],
 "intra_node": {"bandwidth_gb_s": 100, "latency_us": 1},
 "nic": {"bandwidth_gb_s": 10, "latency_us": 5}})";
    using row = std::tuple<std::string, std::string>;
    auto [args, expected] = GENERATE_COPY(table<std::string, std::string>({
        row{"simulate -s 1f1b -p 4 -m 8 --cluster nope", "unknown cluster 'nope' (presets: "},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + bad_file.string(),
            bad_file.string() + ":2:11: nodes: expected an array"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + (dir / "missing.json").string(),
            "missing.json: cannot read"},
        row{"simulate -s 1f1b -p 16 -m 8 --cluster h200x8",
            "needs 16 GPUs; cluster 'h200x8' has 8"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --straggler 9:2",
            "straggler GPU 9 is not one of the 4 GPUs in use"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --straggler 1", "expected GPU:FACTOR"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --layout-order tp,pp",
            "name each of tp, dp, pp exactly once"},
        row{"simulate -s 1f1b -p 4 -m 8", "missing --cluster"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --comm 1", "--comm is the analytic"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + tpu_file.string(),
            tpu_file.string() + ":2:32: unknown GPU 'tpu' (known: "},
    }));
    CAPTURE(args);
    const auto r = run_pipesim(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(expected));
}
