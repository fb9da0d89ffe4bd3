// compare --cluster: every schedule simulated with SimGrid (one process each), the same
// figures `pipesim simulate` gives for it alone.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "cli_json.hpp"

using pipesim::test::run_pipesim;
using pipesim::test::run_pipesim_json;

TEST_CASE("compare --cluster gives each schedule the figures simulate gives it alone",
          "[simgrid][cli][compare]") {
    const std::string pipeline = " -p 4 -m 8 --costs 0.01,0.02,0.01 --cluster dgx-h100 --json";
    const nlohmann::json c = run_pipesim_json("compare -s 1f1b,zb-h1,zb-v" + pipeline);
    CHECK(c["engine"] == "simgrid");
    CHECK(c["cluster"] == "dgx-h100");
    REQUIRE(c["schedules"].size() == 3);
    for (const auto& row : c["schedules"]) {
        const nlohmann::json s =
            run_pipesim_json("simulate -s " + row["schedule"].get<std::string>() + pipeline);
        CHECK(row["makespan"].get<double>() == Approx(s["iteration_time"].get<double>()));
        CHECK(row["bubble_rate"].get<double>() == Approx(s["bubble_rate"].get<double>()));
        CHECK(row["peak_activation_max"].get<double>() ==
              Approx(s["peak_activation_max"].get<double>()));
    }
    // Speed-ups over the first row, from the rows themselves.
    const double first = c["schedules"][0]["makespan"].get<double>();
    for (const auto& row : c["schedules"])
        CHECK(row["speedup"].get<double>() == Approx(first / row["makespan"].get<double>()));
}

TEST_CASE("compare --cluster with a model and two replicas matches simulate's iteration",
          "[simgrid][cli][compare]") {
    const std::string pipeline =
        " -p 4 -m 8 --model llama2-7b --gpu h100-sxm --mb 1 --dp 2 --cluster dgx-h100 --json";
    const nlohmann::json c = run_pipesim_json("compare -s 1f1b,zb-v" + pipeline);
    for (const auto& row : c["schedules"]) {
        const nlohmann::json s =
            run_pipesim_json("simulate -s " + row["schedule"].get<std::string>() + pipeline);
        CHECK(row["iteration_time"].get<double>() == Approx(s["iteration_time"].get<double>()));
        CHECK(row["samples_per_second"].get<double>() ==
              Approx(s["samples_per_second"].get<double>()));
        CHECK(row["tokens_per_second"].get<double>() ==
              Approx(s["tokens_per_second"].get<double>()));
        CHECK(row["mfu"].get<double>() == Approx(s["mfu"].get<double>()));
    }
}

TEST_CASE("compare --cluster refuses --comm, unknown clusters and names the schedule that fails",
          "[simgrid][cli][compare]") {
    auto r = run_pipesim("compare -s 1f1b,zb-h1 -p 4 -m 8 --cluster dgx-h100 --comm 0.1");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--comm") != std::string::npos);
    r = run_pipesim("compare -s 1f1b,zb-h1 -p 4 -m 8 --cluster no-such-cluster");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no-such-cluster") != std::string::npos);
    // DualPipe needs an even m: the error comes from its simulation process, named.
    r = run_pipesim("compare -s 1f1b,dualpipe -p 4 -m 7 --cluster dgx-h100");
    CHECK(r.exit_code == 2);
    // Its message begins with the name, so the name is not put in front once more.
    CHECK(r.err.rfind("pipesim compare: dualpipe needs an even number of microbatches", 0) == 0);
    CHECK(r.out.empty());
    // Without a cluster, --dp still needs a model.
    r = run_pipesim("compare -s 1f1b,zb-h1 -p 4 -m 8 --dp 2");
    CHECK(r.exit_code == 2);
}
