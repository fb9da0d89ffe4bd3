// pipesim simulate: output and bad input, and where pipesim finds the SimGrid engine plugin.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using pipesim::test::run_pipesim;

TEST_CASE("simulate --json reports the contract's fields and the iteration time",
          "[simgrid][cli]") {
    const auto r = run_pipesim(
        "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --costs 0.01,0.02,0.01 --dp 2 "
        "--message-bytes 1e6 --grad-bytes 1e8 --no-overlap-grad-reduce --json");
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

TEST_CASE("simulate measures the speed-up over 1F1B on the same cluster", "[simgrid][cli]") {
    const std::string shape =
        " -p 4 -m 8 --cluster dgx-h100 --costs 0.01,0.02,0.01 --message-bytes 1e6 --json";
    const auto one = nlohmann::json::parse(run_pipesim("simulate -s 1f1b" + shape).out);
    const auto zb = nlohmann::json::parse(run_pipesim("simulate -s zb-h1" + shape).out);
    // The baseline runs in a child process (SimGrid runs once per process): the same
    // simulation as 1F1B's own.
    CHECK(one["speedup_1f1b"].get<double>() == Approx(1));
    CHECK(zb["baseline_1f1b_time"].get<double>() == Approx(one["iteration_time"].get<double>()));
    CHECK(zb["speedup_1f1b"].get<double>() ==
          Approx(one["iteration_time"].get<double>() / zb["iteration_time"].get<double>()));
    CHECK(zb["speedup_1f1b"].get<double>() > 1);
    CHECK(zb["efficiency"].get<double>() > one["efficiency"].get<double>());
    CHECK(zb["stage_lifespan_max"].size() == 4);
}

TEST_CASE("gradient-reduction overlap flags without data parallelism are refused",
          "[simgrid][cli]") {
    for (const char* flag : {"--overlap-grad-reduce", "--no-overlap-grad-reduce"}) {
        const auto r =
            run_pipesim(std::string("simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 ") + flag);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains(flag) && Catch::Contains("--dp"));
    }
    const auto ok = run_pipesim(
        "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --dp 2 --grad-bytes 1e8 "
        "--overlap-grad-reduce --json");
    CHECK(ok.exit_code == 0);
}

TEST_CASE("byte counts for runs without a model are refused with one", "[simgrid][cli]") {
    // The model gives the bytes between stages and the gradients; the flags were ignored.
    for (const char* flag : {"--message-bytes 1e6", "--grad-bytes 1e8"}) {
        const auto r = run_pipesim(
            std::string("simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --model zb-1.5b --gpu "
                        "h100-sxm --mb 1 --dp 2 ") +
            flag);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::EndsWith("--message-bytes and --grad-bytes give the bytes of a "
                                          "run without a model; with --model, the model gives "
                                          "those between stages and the gradients\n"));
    }
}

TEST_CASE("simulate reports whether one replica stood for all (symmetric) or all ran (full)",
          "[simgrid][cli]") {
    using row = std::tuple<std::string, std::string, std::string>;
    auto [extra, mode, line] = GENERATE(table<std::string, std::string, std::string>({
        row{"", "symmetric", "mode                  symmetric"},
        row{"--straggler 5:1.5", "full", "mode                  full (a straggler)"},
    }));
    const std::string args =
        "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --costs 0.01,0.02,0.01 --dp 2 "
        "--grad-bytes 1e8 " +
        extra;
    const auto json = run_pipesim(args + " --json");
    REQUIRE(json.exit_code == 0);
    CHECK(nlohmann::json::parse(json.out)["mode"] == mode);
    CHECK_THAT(run_pipesim(args).out, Catch::Contains(line));
}

namespace {

// Runs pipesim with `args` under an address-space limit of `kib` KiB (ulimit -v).
pipesim::test::CommandResult run_limited(long kib, const std::string& args) {
    // One file per process: ctest runs the tests that use this side by side.
    const auto tag = std::to_string(::getpid());
    const auto dir = std::filesystem::temp_directory_path();
    const auto err = dir / ("pipesim_simulate_ulimit_err_" + tag);
    const auto out = dir / ("pipesim_simulate_ulimit_out_" + tag);
    const std::string command = "sh -c 'ulimit -v " + std::to_string(kib) + "; exec " +
                                std::string(PIPESIM_BINARY) + " " + args + "' 2>" + err.string() +
                                " >" + out.string();
    const int status = std::system(command.c_str());
    pipesim::test::CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = pipesim::test::read_file(err);
    r.out = pipesim::test::read_file(out);
    std::filesystem::remove(err);
    std::filesystem::remove(out);
    return r;
}

// A run refused with one line on stderr and exit code 2, the line as `matches` says.
template <typename Matcher>
void check_refused(const pipesim::test::CommandResult& r, const Matcher& matches) {
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(pipesim::test::lines_of(r.err).size() == 1);
    CHECK_THAT(r.err, matches);
}

}  // namespace

TEST_CASE("a simulation that cannot fit in the address-space limit is refused in one line",
          "[simgrid][cli]") {
    // 8 replicas of 512 devices (the straggler keeps them all) need 4,608 actors: over 1 GiB
    // of stacks, which SimGrid would fail to allocate under a 400 MB limit and abort.
    const auto r = run_limited(
        400000,
        "simulate -s 1f1b -p 512 -m 64 --cluster dgx-h100:512 --costs 0.01,0.02,0.01 --dp 8 "
        "--straggler 0:2 --grad-bytes 1e8");
    check_refused(r, Catch::Contains("MiB of address space") && Catch::Contains("ulimit -v"));
    // Refused before the report's first line ("simulating 8 replicas × ..." came first).
    CHECK(r.out.empty());
}

TEST_CASE("a cluster too large for the memory is refused before its collectives are planned",
          "[simgrid][cli]") {
    // 131,072 GPUs' hosts and zones alone pass a 300 MB limit: the least the run needs (one
    // replica's actors and pipeline routes) is refused as such, before the symmetry, the
    // all-reduce algorithms and the 851,726 routes of 16,384 replicas are worked out (over 4
    // million GPUs, that took 20 s before the refusal).
    const auto r = run_limited(300000,
                               "simulate -s 1f1b -p 8 -m 8 --cluster dgx-a100:16384 --dp 16384 "
                               "--costs 0.01,0.02,0.01 --grad-bytes 1e8");
    check_refused(r, Catch::StartsWith("pipesim simulate: the simulation needs at least ") &&
                         Catch::Contains("MiB of address space (16 actors with 256 KiB stacks, "
                                         "131072 GPUs, 14 routes, 128 messages)"));
}

TEST_CASE("a simulation with more actors than the kernel's mapping limit is refused in one line",
          "[simgrid][cli]") {
    // SimGrid maps each actor's stack with a guard page (two mappings) and aborts with a
    // backtrace past vm.max_map_count. 8 stages × dp replicas, kept apart by the straggler,
    // with dp chosen so that they need more mappings than the limit allows.
    std::ifstream in("/proc/sys/vm/max_map_count");
    long limit = 0;
    if (!(in >> limit) || limit > 70000) {
        WARN("vm.max_map_count is not the default 65530 here (" << limit << "): not checked");
        return;
    }
    const long dp = (limit / 2) / 8 + 64;
    const auto r = run_limited(
        16000000, fmt::format("simulate -s 1f1b -p 8 -m 8 --cluster dgx-h100:{} --dp {} "
                              "--straggler 5:2 --costs 0.01,0.02,0.01 --json",
                              dp, dp));
    check_refused(r, Catch::Contains("vm.max_map_count") && Catch::Contains("SimGrid actors"));
}

TEST_CASE("a 2,048-device pipeline fits in 1 GB: mailboxes only between neighbours, small stacks",
          "[simgrid][cli]") {
    // Mailboxes for every pair of devices would be 4 million; 8 MiB stacks 16 GiB.
    const auto r = run_limited(1000000,
                               "simulate -s 1f1b -p 2048 -m 2 --cluster dgx-h100:256 --costs "
                               "0.01,0.02,0.01 --message-bytes 1e6 --json");
    INFO(r.err);
    CHECK(r.exit_code == 0);
}

TEST_CASE("link scales that leave the cluster files' bounds are refused in one line",
          "[simgrid][cli]") {
    using row = std::tuple<std::string, std::string>;
    auto [flag, expected] = GENERATE(table<std::string, std::string>({
        row{"--bw-scale 1e308", "--bw-scale: must be ≤ 1e+30, got 1e308"},
        row{"--bw-scale 1e20", "bandwidth scale 1e+20 makes the intra-node bandwidth"},
        row{"--bw-scale 1e-13", "scaled links must stay within 1e-06..1e+09 GB/s"},
        row{"--lat-scale 1e12", "latency scale 1e+12 makes the intra-node latency"},
        // Byte counts are bounded at the flag (they once failed later, naming an internal
        // "workload message_bytes[0]").
        row{"--message-bytes 1e30", "pipesim simulate: --message-bytes: must be ≤ 1e+15, got 1e30"},
        row{"--message-bytes 2e15", "pipesim simulate: --message-bytes: must be ≤ 1e+15, got 2e15"},
    }));
    CAPTURE(flag);
    const auto r = run_pipesim(
        "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --costs 0.01,0.02,0.01 --dp 2 "
        "--grad-bytes 1e8 --json " +
        flag);
    CHECK(r.exit_code == 2);
    CHECK(pipesim::test::lines_of(r.err).size() == 1);
    CHECK_THAT(r.err, Catch::Contains(expected));
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
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + bad_file.string() + ":4",
            "':4' resizes a preset; a cluster file lists its nodes itself"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + bad_file.string(),
            bad_file.string() + ":2:11: nodes: expected an array"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + (dir / "missing.json").string(),
            "missing.json: cannot read"},
        row{"simulate -s 1f1b -p 16 -m 8 --cluster h200x8",
            "needs 16 GPUs; cluster 'h200x8' has 8"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --straggler 9:2",
            "straggler GPU 9 is not one of the 4 GPUs in use"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --straggler 1", "expected GPU:FACTOR"},
        // A "straggler" of 0.5 ran faster than the rest.
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --straggler 0:0.5",
            "straggler GPU 0: factor must be a number ≥ 1 (it runs that many times slower), got "
            "0.5; a faster GPU is a node group's 'speed' in a cluster file"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --straggler 0:2 --straggler 0:3",
            "straggler GPU 0 is given more than once"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --layout-order tp,pp",
            "name each of tp, dp, pp exactly once"},
        row{"simulate -s 1f1b -p 4 -m 8", "missing --cluster"},
        // Refused at the flag, before "simulating ..." is printed (and not in --help).
        row{"simulate -s dualpipe -p 4 -m 8 --cluster h200x8 --a2a 0.1",
            "--a2a is an option of the analytic replay (analyze, compare, search, block, render)"},
        row{"simulate -s dualpipe -p 4 -m 8 --cluster h200x8 --overlap-fb 0.5",
            "--overlap-fb is an option of the analytic replay"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --costs 0,0,0",
            "every pass takes no time"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --comm 1", "--comm is the analytic"},
        // SimGrid's 1 ns clock step made every device busy 1.5e-8 s instead of 2.4e-11.
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --costs 1e-12,1e-12,1e-12",
            "stage 0's F takes 1e-12 s, under the 1e-06 s the cluster simulation times to 0.1 %"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --grad-bytes 1e8",
            "--grad-bytes needs data parallelism (--dp D above 1): there is no gradient "
            "reduction"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster h200x8 --bw-scale 1e20",
            "bandwidth scale 1e+20 makes the intra-node bandwidth"},
        row{"simulate -s zb-v -p 4 -m 8 --cluster h200x8 --costs 1e-3,1e-3,1e-6",
            "stage 0's W takes 5e-07 s"},
        row{"simulate -s 1f1b -p 4 -m 8 --cluster " + tpu_file.string(),
            "cluster file " + tpu_file.string() +
                ":2:32: nodes[0].gpu: unknown GPU 'tpu' (known: "},
    }));
    CAPTURE(args);
    const auto r = run_pipesim(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(expected));
    CHECK(r.out.empty());  // "simulating ..." went to stdout before a refusal inside the run
}

namespace {

// A directory holding a copy of pipesim, and of the SimGrid engine plugin if asked; removed
// at the end of the test.
struct CopiedPipesim {
    std::filesystem::path dir;
    std::string binary;

    explicit CopiedPipesim(bool with_plugin) {
        dir = std::filesystem::temp_directory_path() /
              ("pipesim_copy_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
        std::filesystem::create_directories(dir);
        const std::filesystem::path built(PIPESIM_BINARY);
        std::filesystem::copy_file(built, dir / "pipesim");
        if (with_plugin)
            std::filesystem::copy_file(built.parent_path() / "pipesim-simgrid.so",
                                       dir / "pipesim-simgrid.so");
        binary = (dir / "pipesim").string();
    }
    ~CopiedPipesim() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST_CASE("without the engine plugin, simulate and compare --cluster exit 3 naming the file",
          "[simgrid][cli]") {
    const CopiedPipesim copy(false);
    for (const char* command : {"simulate -s 1f1b", "compare -s 1f1b,zb-h1"}) {
        CAPTURE(command);
        const auto r = pipesim::test::run_program(
            copy.binary, std::string(command) + " -p 4 -m 8 --cluster dgx-h100 --json");
        CHECK(r.exit_code == 3);
        CHECK(r.out.empty());
        CHECK(pipesim::test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::Contains("SimGrid engine is not available") &&
                              Catch::Contains("pipesim-simgrid.so") &&
                              Catch::Contains(copy.dir.string()) &&
                              Catch::Contains("PIPESIM_SIMGRID_ENGINE"));
    }
    // What needs no SimGrid runs as before.
    CHECK(pipesim::test::run_program(copy.binary, "list").exit_code == 0);
    CHECK(pipesim::test::run_program(copy.binary, "analyze -s 1f1b -p 4 -m 8").exit_code == 0);
}

TEST_CASE("the engine plugin is found next to pipesim or where PIPESIM_SIMGRID_ENGINE says",
          "[simgrid][cli]") {
    const std::string run = "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --json";
    const CopiedPipesim with(true);
    const auto next_to = pipesim::test::run_program(with.binary, run);
    CHECK(next_to.exit_code == 0);
    // (m + p − 1)(F + B + W) = 33 unit costs, plus the transfers' microseconds.
    CHECK(nlohmann::json::parse(next_to.out)["makespan"].get<double>() == Approx(33).epsilon(1e-4));

    const CopiedPipesim without(false);
    const auto given = pipesim::test::run_program(
        "PIPESIM_SIMGRID_ENGINE=" + (with.dir / "pipesim-simgrid.so").string() + " " +
            without.binary,
        run);
    CHECK(given.exit_code == 0);
    CHECK(given.out == next_to.out);

    // A file that is not a loadable plugin: the loader's reason, and the file.
    const std::filesystem::path junk = without.dir / "junk.so";
    std::ofstream(junk) << "not a shared object\n";
    const auto bad = pipesim::test::run_program(
        "PIPESIM_SIMGRID_ENGINE=" + junk.string() + " " + PIPESIM_BINARY, run);
    CHECK(bad.exit_code == 3);
    CHECK_THAT(bad.err, Catch::Contains("cannot load " + junk.string()));
}

TEST_CASE("a shared object without the engine's entry point or of another version is refused",
          "[simgrid][cli]") {
    const std::pair<const char*, const char*> refused[] = {
        {PIPESIM_FAKE_ENGINE_NONE, "is not a pipesim engine plugin"},
        {PIPESIM_FAKE_ENGINE_OLD, "built from another version of pipesim"}};
    for (const auto& [file, reason] : refused) {
        CAPTURE(file);
        const auto r = pipesim::test::run_program(
            std::string("PIPESIM_SIMGRID_ENGINE=") + file + " " + PIPESIM_BINARY,
            "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --json");
        CHECK(r.exit_code == 3);
        CHECK(pipesim::test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::Contains(file) && Catch::Contains(reason));
    }
}

TEST_CASE(
    "simulate reports the parameter all-gather it moves beside the first forward, as "
    "analyze does",
    "[simgrid][cli]") {
    const std::string run =
        " -s zb-v -p 4 -m 8 --model llama2-7b --gpu h100-sxm --mb 1 --dp 4 -t 2 --dist-opt "
        "--overlap-param-gather --json";
    const auto closed = nlohmann::json::parse(run_pipesim("analyze" + run).out);
    const auto simulated =
        nlohmann::json::parse(run_pipesim("simulate --cluster dgx-h100" + run).out);
    REQUIRE(simulated.contains("param_gather_time"));
    // On an idle network the two differ only by the links' latencies.
    CHECK(simulated["param_gather_time"].get<double>() ==
          Approx(closed["param_gather_time"].get<double>()).epsilon(0.01));
    CHECK(simulated["param_gather_exposed"].get<double>() == 0);
    // With a fiftieth of the bandwidth the gather outlasts device 0's first forward, which
    // starts with it at 0 and then waits for it: part of the gather is exposed, not all.
    const auto slow =
        nlohmann::json::parse(run_pipesim("simulate --cluster dgx-h100 --bw-scale 0.02" + run).out);
    const double gather = slow["param_gather_time"].get<double>();
    CHECK(slow["param_gather_exposed"].get<double>() > 0);
    CHECK(slow["param_gather_exposed"].get<double>() < gather);
}

TEST_CASE("simulate's first line counts replicas and ops apart and the mode line what ran",
          "[simgrid][cli]") {
    const std::string shape = "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100 --costs 1,2,1";
    // 1F1B at p 4, m 8: 8 microbatches × 4 devices × (F, and B with its W) = 64 ops a replica.
    const auto symmetric = run_pipesim(shape + " --dp 4");
    REQUIRE(symmetric.exit_code == 0);
    CHECK_THAT(symmetric.out,
               Catch::StartsWith("simulating 4 replicas × 64 ops on 16 GPUs of 'dgx-h100'"));
    CHECK_THAT(symmetric.out, Catch::Contains("symmetric (replica 0's 64 ops simulated, with the "
                                              "collectives of all 4 replicas)"));
    const auto full = run_pipesim(shape + " --dp 2 --straggler 5:1.5");
    REQUIRE(full.exit_code == 0);
    CHECK_THAT(full.out, Catch::StartsWith("simulating 2 replicas × 64 ops on 8 GPUs"));
    CHECK_THAT(full.out, Catch::Contains("full (a straggler)"));
    const auto one = run_pipesim(shape);
    CHECK_THAT(one.out, Catch::StartsWith("simulating 64 ops on 4 GPUs"));
}

TEST_CASE("simulate --progress lines writes whole lines for logs and none writes nothing",
          "[simgrid][cli]") {
    // Full mode (a straggler) over 64 replicas: 262,144 ops, a second or two of one core.
    const std::string run =
        "simulate -s 1f1b -p 8 -m 256 --cluster dgx-a100:64 --dp 64 "
        "--straggler 3:1.1 --costs 0.01,0.02,0.01 --progress ";
    const auto started = std::chrono::steady_clock::now();
    const auto lines = run_pipesim(run + "lines");
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    REQUIRE(lines.exit_code == 0);
    CHECK(lines.err.find('\r') == std::string::npos);
    CHECK(lines.err.find('\033') == std::string::npos);
    for (const std::string& line : pipesim::test::lines_of(lines.err))
        CHECK_THAT(line, Catch::Matches(
                             R"(  simulated [0-9.e+]+ of ~[0-9.e+]+ s, [0-9]+ of 262144 ops.*)"));
    // The engine reports after a second of run time: a run this long has shown one.
    if (took > 1.5) CHECK_FALSE(lines.err.empty());
    if (!lines.err.empty()) CHECK(lines.err.back() == '\n');
    const auto none = run_pipesim(run + "none");
    REQUIRE(none.exit_code == 0);
    CHECK(none.err.empty());
    CHECK(none.out == lines.out);
}

TEST_CASE(
    "simulate's throughput counts microbatches per iteration, reduction and slower replica "
    "included",
    "[simgrid][cli]") {
    // GPU 1 is replica 1's first device (dp varies before pp): that replica takes twice as
    // long at its first stage, and the iteration waits for it.
    const std::string run =
        "simulate -s zb-h1 -p 4 -m 8 --costs 0.01,0.02,0.01 --cluster dgx-h100:1 --dp 2 "
        "--grad-bytes 1e8 --straggler 1:2";
    const auto r = run_pipesim(run + " --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const double iteration = j["iteration_time"].get<double>();
    REQUIRE(iteration > 1.5 * j["makespan"].get<double>());
    CHECK(j["throughput"].get<double>() == Approx(8 / iteration).epsilon(1e-12));
    CHECK_THAT(
        run_pipesim(run).out,
        Catch::Contains(fmt::format(
            "throughput            {:.6g} microbatches / s over the iteration", 8 / iteration)));
}

TEST_CASE("simulate names the slowest replica where it is not replica 0", "[simgrid][cli]") {
    const std::string run =
        "simulate -s 1f1b -p 4 -m 8 --costs 0.01,0.02,0.01 "
        "--cluster dgx-h100:1 --dp 2 --grad-bytes 1e6";
    // GPU 1 is replica 1's first device (dp varies before pp).
    const auto slow = run_pipesim(run + " --straggler 1:2 --json");
    REQUIRE(slow.exit_code == 0);
    const std::vector<double> makespans = nlohmann::json::parse(slow.out)["replica_makespan"];
    REQUIRE(makespans.size() == 2);
    REQUIRE(makespans[1] > makespans[0]);
    CHECK_THAT(run_pipesim(run + " --straggler 1:2").out,
               Catch::Contains(fmt::format("replica 0's pipeline: {:.6g} s; the slowest, replica "
                                           "1's: {:.6g} s;",
                                           makespans[0], makespans[1])));
    // GPU 0 is replica 0's: it is the slowest, and the line says nothing more.
    CHECK_THAT(run_pipesim(run + " --straggler 0:2").out, !Catch::Contains("the slowest"));
}

TEST_CASE("simulate warns that --bw-scale changes nothing where no bytes move", "[simgrid][cli]") {
    const std::string run =
        "simulate -s 1f1b -p 4 -m 8 --costs 0.01,0.02,0.01 --cluster dgx-h100 --json";
    const auto empty = run_pipesim(run + " --bw-scale 0.01");
    REQUIRE(empty.exit_code == 0);
    CHECK_THAT(empty.err, Catch::Contains("--bw-scale") && Catch::Contains("changes nothing"));
    // The same makespan as without it: the warning is true.
    CHECK(nlohmann::json::parse(empty.out)["makespan"] ==
          nlohmann::json::parse(run_pipesim(run).out)["makespan"]);
    const auto moving = run_pipesim(run + " --bw-scale 0.01 --message-bytes 1e6");
    REQUIRE(moving.exit_code == 0);
    CHECK(moving.err.empty());
    // A model on one GPU moves nothing either; on two stages it sends their activations.
    const std::string model =
        "simulate -s 1f1b -m 4 --cluster dgx-a100:1 --model zb-1.5b --gpu a100-80gb --mb 1 "
        "--bw-scale 0.001 -p ";
    CHECK_THAT(run_pipesim(model + "1").err, Catch::Contains("changes nothing"));
    CHECK(run_pipesim(model + "2").err.empty());
}

TEST_CASE("simulate counts the cluster's link latencies among the times that must not round away",
          "[simgrid][cli]") {
    // As analyze's --comm: 1e30 s passes beside DGX H100's 2 µs NVLink latency lost the links
    // without a word (makespan exactly 3.3e31).
    const auto far = run_pipesim(
        "simulate -s 1f1b -p 4 -m 8 --costs 1e30,1e30,1e30 --cluster "
        "dgx-h100");
    CHECK(far.exit_code == 2);
    CHECK(far.out.empty());
    CHECK_THAT(far.err, Catch::StartsWith("pipesim simulate: the times are too far apart") &&
                            Catch::Contains("latency (--comm or the cluster's) or all-to-all, "
                                            "2e-06, would round away"));
    // One GPU uses no link; 16 over two nodes use both, the NVLink's the shorter.
    CHECK(run_pipesim("simulate -s 1f1b -p 1 -m 8 --costs 1e30,1e30,1e30 --cluster dgx-h100")
              .exit_code == 0);
    const auto nodes = run_pipesim(
        "simulate -s 1f1b -p 4 -m 8 --dp 4 --costs 1e12,1e12,1e12 "
        "--grad-bytes 1e6 --cluster dgx-h100:2");
    CHECK(nodes.exit_code == 2);
    CHECK_THAT(nodes.err, Catch::Contains("2e-06, would round away"));
    CHECK(run_pipesim("simulate -s 1f1b -p 4 -m 8 --dp 4 --costs 1e3,1e3,1e3 --grad-bytes 1e6 "
                      "--cluster dgx-h100:2")
              .exit_code == 0);
}

TEST_CASE("simulate refuses a model's transfers beyond SimGrid's before it announces the run",
          "[simgrid][cli]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipesim_simulate_bytes";
    std::filesystem::create_directories(dir);
    // h 262,144 at s 1,048,576: one sequence's activations are 2·s·h = 5.5e11 bytes; 4,096 of
    // them a microbatch, 2.25e15, past the 1e15 bytes SimGrid moves at once.
    std::ofstream(dir / "wide.json")
        << R"({"name": "wide", "layers": 2, "hidden": 262144, "heads": 4096, "vocab": 1000,
  "seq_len": 1048576, "learned_positions": false, "mlp": "swiglu"})";
    const auto r =
        run_pipesim("simulate -s 1f1b -p 2 -m 2 --model " + (dir / "wide.json").string() +
                    " --gpu h100-sxm --mb 4096 --cluster dgx-h100:1");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());  // nothing announced
    CHECK(r.err ==
          "pipesim simulate: a stage's message (its activations of one microbatch) "
          "would be 2.25e+15 bytes, more than the 1e+15 the cluster simulation moves "
          "at once: give a smaller --mb, a larger -t or --cp, or a smaller model\n");
    std::filesystem::remove_all(dir);
}

namespace {

// Starts `args`, sends SIGINT once `due(output so far)` holds and checks that the run ended by
// the interrupt (one that finished first only warns). `name` tells the output file apart.
void interrupt_when(const std::vector<std::string>& args, const std::string& name,
                    const std::function<bool(const std::string&)>& due) {
    namespace fs = std::filesystem;
    const fs::path out = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
    const pid_t pid = pipesim::test::start_pipesim(args, out.string());
    REQUIRE(pid > 0);
    int status = 0;
    bool interrupted = false;
    const auto started = std::chrono::steady_clock::now();
    while (::waitpid(pid, &status, WNOHANG) != pid) {
        if (!interrupted && due(pipesim::test::read_file(out))) {
            ::kill(pid, SIGINT);
            interrupted = true;
        }
        if (std::chrono::steady_clock::now() - started > std::chrono::minutes(2)) {
            ::kill(pid, SIGKILL);
            FAIL("simulate was not interrupted and did not finish in 2 minutes");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    fs::remove(out);
    REQUIRE(interrupted);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        WARN("the simulation finished before the interrupt");
    } else {
        CAPTURE(WIFEXITED(status), WEXITSTATUS(status));
        REQUIRE(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGINT);
    }
}

}  // namespace

TEST_CASE("Ctrl-C during the SimGrid run ends simulate by the interrupt", "[simgrid][cli]") {
    // SimGrid's engine installs a handler that ended the process with status 1 and no word,
    // where every other phase ends by the signal (130 in the shell) and removes temporaries.
    // Some 600,000 ops on 128 GPUs: seconds of SimGrid, whose progress lines (from its first
    // second on) say it runs; the first comes from inside the simulation.
    interrupt_when({"simulate", "-s", "zb-h1", "-p", "128", "-m", "1536", "--cluster",
                    "dgx-h100:16", "--costs", "0.01,0.02,0.01", "--progress", "lines"},
                   "pipesim_sim_sigint", [](const std::string& output) {
                       return output.find("simulated ") != std::string::npos;
                   });
}

TEST_CASE("Ctrl-C while the cluster's platform is built ends simulate by the interrupt",
          "[simgrid][cli]") {
    // The caller's handler came back only before the run: an interrupt while SimGrid built a
    // large platform (seconds at 65,536 GPUs) ended the process with status 1 and no word.
    // Half a second after it names its run (before the engine), it builds the platform of
    // 262,144 GPUs: 0.6 s to the name, 2.3 s from there to the end on this 2-core machine
    // (131,072 GPUs took 0.9 s in all once zones were sealed out of the engine's sight).
    std::optional<std::chrono::steady_clock::time_point> named;
    interrupt_when({"simulate", "-s", "1f1b", "-p", "8", "-m", "8", "--costs", "1,1,1", "--cluster",
                    "dgx-a100:32768", "--dp", "32768", "--progress", "none"},
                   "pipesim_build_sigint", [&](const std::string& output) {
                       const auto now = std::chrono::steady_clock::now();
                       if (!named && output.find("simulating ") != std::string::npos) named = now;
                       return named && now - *named > std::chrono::milliseconds(500);
                   });
}

TEST_CASE("simulate names a data-parallel collective of 50000 flows or more as it starts",
          "[simgrid][cli]") {
    // SimGrid settles a collective's flows with no progress report until they end: a tree
    // all-reduce over 1,024 nodes once ran 10 minutes with nothing on stderr but the opening
    // line. Four GPUs per node, one replica each: four tree channels of 4(dp − 1) flows.
    namespace fs = std::filesystem;
    const fs::path cluster =
        fs::temp_directory_path() / fmt::format("pipesim_flows_{}.json", ::getpid());
    std::ofstream(cluster) << R"({"format": "pipesim-cluster", "version": 1, "gpus_per_node": 4,
        "nodes": [{"count": 782, "gpu": "h100-sxm"}],
        "intra_node": {"bandwidth_gb_s": 450, "latency_us": 2},
        "nic": {"bandwidth_gb_s": 50, "latency_us": 5}})";
    const std::string run = "simulate -s 1f1b -p 1 -m 1 --cluster " + cluster.string() +
                            " --costs 0.01,0.02,0.01 --grad-bytes 1e6 --nccl-algo tree";
    const auto large = run_pipesim(run + " --dp 3128 --progress lines");  // 16 · 3127 flows
    CHECK(large.exit_code == 0);
    CHECK_THAT(large.err, Catch::Contains("a data-parallel collective of 50032 flows at once "
                                          "starts; SimGrid settles them with no report"));
    const auto smaller = run_pipesim(run + " --dp 3124 --progress lines");  // 49,968
    CHECK(smaller.exit_code == 0);
    CHECK(smaller.err.empty());
    const auto quiet = run_pipesim(run + " --dp 3128 --progress none");
    CHECK(quiet.exit_code == 0);
    CHECK(quiet.err.empty());
    fs::remove(cluster);
}

TEST_CASE("simulate refuses to move a gradient reduction it does not have", "[simgrid][cli]") {
    // Without a model or --grad-bytes there are no gradients: the flag changed nothing.
    const std::string run =
        "simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100:2 --costs 0.01,0.02,0.01 --dp 2 "
        "--no-overlap-grad-reduce";
    const auto r = run_pipesim(run);
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "pipesim simulate: --no-overlap-grad-reduce moves the gradient reduction: give "
          "--grad-bytes N (or --model, --gpu, --mb); without them there is none\n");
    CHECK(run_pipesim(run + " --grad-bytes 1e8").exit_code == 0);
    // The default restated moves nothing, and is taken as Python takes overlap_grad_reduce=True.
    CHECK(run_pipesim("simulate -s 1f1b -p 4 -m 8 --cluster dgx-h100:2 --costs 0.01,0.02,0.01 "
                      "--dp 2 --overlap-grad-reduce")
              .exit_code == 0);
}

TEST_CASE("a stage's --message-bytes: with -t T each GPU sends a 1/T of it", "[simgrid][cli]") {
    // As a model's message: -t 2 had each GPU send the whole --message-bytes, twice the stage's
    // message, and all-gathered that.
    namespace fs = std::filesystem;
    const fs::path saved =
        fs::temp_directory_path() / ("pipesim_tp_message_" + std::to_string(::getpid()) + ".json");
    const auto r = run_pipesim(
        "simulate -s 1f1b -p 2 -m 1 --costs 0.01,0.01,0.01 --message-bytes 44.6e6 "
        "--cluster dgx-a100:1 -t 2 --save-timeline " +
        saved.string());
    REQUIRE(r.exit_code == 0);
    const auto timeline = nlohmann::json::parse(pipesim::test::read_file(saved));
    fs::remove(saved);
    const auto& first = timeline["transfers"][0];  // F's message, device 0 to 1
    REQUIRE(first["producer"]["pass"] == "F");
    CHECK(first["bytes"].get<double>() == Approx(22.3e6));
    // Each GPU's half at NCCL's send/receive rate inside an A100 node (44.6 GB/s) plus 2 µs.
    CHECK(first["end"].get<double>() - first["start"].get<double>() ==
          Approx(2e-6 + 22.3e6 / 44.6e9).epsilon(1e-6));
    // Then the receivers' all-gather of the whole message: a ring of 2 at the 200 GB/s bus
    // rate moves one half, plus 2 µs.
    const auto& gather = timeline["transfers"][1];
    REQUIRE(gather["kind"] == "tensor-parallel");
    CHECK(gather["end"].get<double>() - gather["start"].get<double>() ==
          Approx(2e-6 + 22.3e6 / 200e9).epsilon(1e-6));
}
