// calibrate and gpu-run on the command line without a GPU: usage errors (2) and the clear
// "no GPU" exit (3). The GPU is hidden (CUDA_VISIBLE_DEVICES="") so these never use one.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using pipesim::test::read_file;
using pipesim::test::run_pipesim;

namespace {

// What a build says when it cannot run GPU work here: a CUDA build finds no device (hidden),
// a build without CUDA says so.
std::string no_gpu_message(const char* command) {
    return PIPESIM_CUDA_BUILD
               ? std::string("no CUDA device found")
               : std::string("pipesim built without CUDA: ") + command + " needs a CUDA build";
}

void hide_gpus() {
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
}

}  // namespace

TEST_CASE("calibrate without a GPU says why and exits with 3", "[calibration][cli]") {
    hide_gpus();
    const auto r = run_pipesim("calibrate --model zb-1.5b --mb 6 -o /tmp/pipesim_never.json");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("pipesim calibrate: " + no_gpu_message("calibrate")));
}

TEST_CASE("calibrate takes the Llama presets with either attention kernel", "[calibration][cli]") {
    hide_gpus();
    const std::string attention = GENERATE("fused", "unfused");
    const auto r = run_pipesim("calibrate --model llama3-8b --mb 1 --seq 2048 --attention " +
                               attention + " -o /tmp/pipesim_never.json");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains(no_gpu_message("calibrate")));
}

TEST_CASE("gpu-run without a GPU says why and exits with 3", "[calibration][cli]") {
    hide_gpus();
    const auto r = run_pipesim("gpu-run -s 1f1b -p 4 -m 16 --model zb-1.5b --mb 6");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Contains("pipesim gpu-run: " + no_gpu_message("gpu-run")));
}

TEST_CASE("calibrate and gpu-run reject bad usage before looking for a GPU", "[calibration][cli]") {
    hide_gpus();
    const auto [args, message] = GENERATE(table<std::string, std::string>({
        {"calibrate --model zb-1.5b --mb 6", "missing -o FILE"},
        {"calibrate --mb 6 -o x.json", "missing --model NAME"},
        {"calibrate --model zb-1.5b -o x.json", "missing --mb B"},
        {"calibrate --model llama2-7b --mb 1 --attention flash -o x.json",
         "--attention: expected fused or unfused, got 'flash'"},
        {"calibrate --model zb-1.5b --mb 1 -t 5 -o x.json", "does not divide"},
        {"calibrate --model zb-1.5b --mb 1 --gpu tpu -o x.json", "unknown GPU 'tpu'"},
        {"calibrate --model zb-1.5b --mb 1 --bogus -o x.json", "unknown option '--bogus'"},
        {"gpu-run -p 4 -m 16 --model zb-1.5b --mb 6", "missing -s NAME"},
        {"gpu-run -s 1f1b -m 16 --model zb-1.5b --mb 6", "missing -p P"},
        {"gpu-run -s 1f1b -p 4 -m 16 --model zb-1.5b --mb 6 --mode tpu",
         "--mode: expected auto, gpus or partitions, got 'tpu'"},
        {"gpu-run -s nope -p 4 -m 16 --model zb-1.5b --mb 6", "unknown schedule 'nope'"},
        {"gpu-run -s 1f1b -p 30 -m 16 --model zb-1.5b --mb 6",
         "cannot split 22 layers into 30 stages"},
    }));
    const auto r = run_pipesim(args);
    INFO(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
}

TEST_CASE("calibrate and gpu-run have help and appear in the usage", "[calibration][cli]") {
    CHECK(run_pipesim("calibrate --help").exit_code == 0);
    CHECK_THAT(run_pipesim("gpu-run --help").out, Catch::Contains("--mode MODE"));
    CHECK_THAT(run_pipesim("--help").out,
               Catch::Contains("calibrate --model NAME") && Catch::Contains("gpu-run -s NAME"));
}

TEST_CASE("pipesim itself loads no CUDA library", "[calibration][cli]") {
    const auto listing =
        std::filesystem::temp_directory_path() / ("pipesim_test_ldd_" + std::to_string(::getpid()));
    const std::string command =
        std::string("ldd ") + PIPESIM_BINARY + " >" + listing.string() + " 2>&1";
    const int status = std::system(command.c_str());
    const std::string libraries = read_file(listing);
    std::filesystem::remove(listing);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK_THAT(libraries, Catch::Contains("libc.so"));
    CHECK_THAT(libraries, !Catch::Contains("libcublas") && !Catch::Contains("libcudart"));
}

TEST_CASE("pipesim without pipesim-gpu beside it parses the flags and reports no CUDA",
          "[calibration][cli]") {
    hide_gpus();
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_test_alone_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto alone = dir / "pipesim";
    std::filesystem::copy_file(PIPESIM_BINARY, alone,
                               std::filesystem::copy_options::overwrite_existing);
    auto run = [&](const std::string& args) {
        const std::string command =
            alone.string() + " " + args + " >/dev/null 2>" + (dir / "err").string() + " </dev/null";
        const int status = std::system(command.c_str());
        return std::pair{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(dir / "err")};
    };
    const auto [calibrate_code, calibrate_err] =
        run("calibrate --model zb-1.5b --mb 6 -o /tmp/pipesim_never.json");
    const auto [gpu_run_code, gpu_run_err] =
        run("gpu-run -s 1f1b -p 4 -m 16 --model zb-1.5b --mb 6");
    const auto [usage_code, usage_err] = run("calibrate --model zb-1.5b --mb 6");
    std::filesystem::remove_all(dir);
    CHECK(calibrate_code == 3);
    CHECK(calibrate_err ==
          "pipesim calibrate: pipesim built without CUDA: calibrate needs a CUDA build\n");
    CHECK(gpu_run_code == 3);
    CHECK(gpu_run_err ==
          "pipesim gpu-run: pipesim built without CUDA: gpu-run needs a CUDA build\n");
    CHECK(usage_code == 2);
    CHECK_THAT(usage_err, Catch::Contains("missing -o FILE"));
}
