// Memory estimated before it is allocated: the op cap counts the passes a schedule has, and a
// run that will not fit is refused with its estimate (one line, exit code 2), never
// std::bad_alloc.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "cli_runner.hpp"
#include "schedules/heap.hpp"
#include "schedules/registry.hpp"
#include "sim/memory_budget.hpp"

using namespace pipesim;
using namespace pipesim::sim;

TEST_CASE("max_op_count bounds every generator's ops and is exact but for DualPipe's",
          "[schedules][memory]") {
    for (const ScheduleGenerator& g : schedule_generators()) {
        CAPTURE(g.name);
        const Schedule s = generate_schedule(g.name, GeneratorOptions{4, 8, 0, 0});
        const double bound = max_op_count(g, s.devices, s.chunks, s.microbatches);
        CHECK(static_cast<double>(s.op_count()) <= bound);
        // DualPipe fuses some backwards and splits others; the rest do one or the other.
        if (!g.name.starts_with("dualpipe")) CHECK(static_cast<double>(s.op_count()) == bound);
    }
    CHECK(find_generator("1f1b")->ops_per_microbatch_stage == 2);
    CHECK(find_generator("zb-v")->ops_per_microbatch_stage == 3);
}

TEST_CASE("check_memory refuses an estimate over either budget and names both", "[sim][memory]") {
    CHECK_NOTHROW(check_memory(1e9, MemoryBudget{2e9, 8e9}, "x"));
    CHECK_THROWS_WITH(check_memory(3e9, MemoryBudget{2e9, 8e9}, "zb-v with p·v·m = 1·2·3"),
                      "zb-v with p·v·m = 1·2·3 needs about 3.00 GB of memory, more than the "
                      "2.00 GB left under this process's address-space limit (ulimit -v)");
    CHECK_THROWS_WITH(check_memory(9e9, MemoryBudget{1e12, 8e9}, "x"),
                      "x needs about 9.00 GB of memory, more than this machine's 8.00 GB");
    ReplayOptions bare;
    bare.record_ops = false;
    bare.record_transfers = false;
    ReplayOptions records;
    CHECK(replay_peak_bytes(1e6, 5e5, records) >
          replay_peak_bytes(1e6, 5e5, bare) + 1e6 * (sizeof(TimedOp) + sizeof(Transfer)) - 1);
}

namespace {

struct Limited {
    int exit_code = -1;
    std::string err;
};

// `pipesim ARGS` in a shell whose address space is limited to `kilobytes` (ulimit -v).
// `input`: a shell command whose output pipesim reads on its standard input.
Limited run_limited(long kilobytes, const std::string& args, const std::string& input = "") {
    const auto err =
        std::filesystem::temp_directory_path() / ("pipesim_limited_" + std::to_string(::getpid()));
    const std::string command = "ulimit -v " + std::to_string(kilobytes) + " && " +
                                (input.empty() ? "" : input + " | ") + PIPESIM_BINARY + " " + args +
                                " >/dev/null 2>" + err.string();
    const int status = std::system(command.c_str());
    Limited r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_file(err)};
    std::filesystem::remove(err);
    return r;
}

}  // namespace

TEST_CASE("under ulimit -v a run too large is refused up front with its estimate",
          "[cli][memory]") {
    const long limit = 120'000;  // KB: pipesim itself starts in about 10 MB
    SECTION("too many ops for the limit") {
        const auto r = run_limited(limit, "analyze -s zb-v -p 64 -m 65536");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: zb-v with p·v·m = 64·2·65536 "
                                            "(25165824 ops) needs about") &&
                              Catch::Contains("ulimit -v") && !Catch::Contains("bad_alloc"));
    }
    SECTION("the records an output needs count: the same run fits without them") {
        CHECK(run_limited(limit, "analyze -s 1f1b -p 64 -m 8192").exit_code == 0);
        const auto r = run_limited(
            limit,
            "analyze -s 1f1b -p 64 -m 8192 --save-timeline " +
                (std::filesystem::temp_directory_path() / "pipesim_never_written.json").string());
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::Contains("needs about"));
    }
    SECTION("a schedule laid out from a building block counts the layout it holds meanwhile") {
        // v-zb at p 256, m 1024 peaks at 132 MiB, of which the replay is estimated at a third:
        // the run once ran out of memory after starting instead of being refused.
        const auto r = run_limited(limit, "analyze -s v-zb -p 256 -m 1024");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: v-zb with p·v·m = 256·2·1024 "
                                            "(1572864 ops) needs about"));
    }
    SECTION("ZB-1P and ZB-2P count the candidate they hold while they time the next") {
        // zb-2p at p 256, m 3072 ran out of memory after starting (0.9 s), its estimate a
        // third under the peak.
        for (const char* name : {"zb-1p", "zb-2p"}) {
            const auto r = run_limited(limit, fmt::format("analyze -s {} -p 256 -m 3072", name));
            CHECK(r.exit_code == 2);
            CHECK(test::lines_of(r.err).size() == 1);
            CHECK_THAT(r.err, Catch::StartsWith(fmt::format(
                                  "pipesim analyze: {} with p·v·m = 256·1·3072 (2359296 ops) "
                                  "needs about",
                                  name)));
        }
    }
    SECTION("search counts its largest candidates, not only its 1F1B baseline") {
        // p 256, m 1024: 1F1B's 524,288 ops fit; the v = 3 and V-shape candidates (179 MB
        // measured) do not: refused before the first candidate, not at the eleventh.
        const auto r = run_limited(limit, "search -p 256 -m 1024 --mem-limit 256");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim search: search at p·m = 256·1024 "
                                            "(candidates of up to 2359296 ops: v = 3 with split "
                                            "backwards) needs about"));
        CHECK(run_limited(limit, "analyze -s 1f1b -p 256 -m 1024").exit_code == 0);
    }
    SECTION("block counts what --fill holds while it lays the block out") {
        // The repeated block's timeline besides the schedule and a second order: a
        // 4,096-device block filled at m 4096 ran out of memory after 2 s instead.
        const std::string run = "block " + std::string(PIPESIM_SOURCE_DIR) +
                                "/tests/data/blocks/v-half-p4.json -m 65536";
        CHECK(run_limited(limit, run).exit_code == 0);
        const auto r = run_limited(limit, run + " --fill");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim block: block 'v-half' repeated for 65536 "
                                            "microbatches (1572864 ops) needs about"));
    }
    SECTION("a Chrome trace streams to its file; its flows' graph counts") {
        // zb-h1 at p 64, m 1024: 196,608 ops, a trace of 79 MB. Held whole, the text peaked
        // at three times its size (a trace of 427,200 ops at 551 MB); written a megabyte at a
        // time, it fits under 40 MB. The flows' dependency graph (62 bytes an op) does not.
        const auto trace = std::filesystem::temp_directory_path() /
                           ("pipesim_trace_" + std::to_string(::getpid()) + ".json");
        const std::string run = "analyze -s zb-h1 -p 64 -m 1024 --trace " + trace.string();
        const auto fits = run_limited(40'000, run);
        CHECK(fits.exit_code == 0);
        CHECK(fits.err.empty());
        const std::string text = test::read_file(trace);
        CHECK(text.size() > 50'000'000);     // some 400 bytes an op
        CHECK(text.ends_with("\n ]\n}\n"));  // whole
        std::filesystem::remove(trace);
        const auto r = run_limited(40'000, run + " --trace-flows");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: zb-h1 with p·v·m = 64·1·1024 "
                                            "(196608 ops) needs about"));
        CHECK_FALSE(std::filesystem::exists(trace));
    }
    SECTION("--save's text counts: the run that fits without it is refused with it") {
        // zb-h1 at p 64, m 30000: 5.76 million ops, whose JSON text took 29 bytes an op more
        // at the peak; the run was admitted and then ran out of memory composing it.
        const auto saved = std::filesystem::temp_directory_path() /
                           ("pipesim_save_" + std::to_string(::getpid()) + ".json");
        const std::string run = "analyze -s zb-h1 -p 64 -m 30000";
        CHECK(run_limited(250'000, run).exit_code == 0);
        const auto r = run_limited(250'000, run + " --save " + saved.string());
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim analyze: zb-h1 with p·v·m = 64·1·30000 "
                                            "(5760000 ops) needs about"));
        CHECK_FALSE(std::filesystem::exists(saved));
    }
    SECTION("1F1B counts two passes: under the op cap, refused for memory") {
        const auto r = run_limited(limit, "analyze -s 1f1b -p 64 -m 1048576");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Catch::Contains("(134217728 ops) needs about"));
    }
}

TEST_CASE("under ulimit -v render, simulate and sweep refuse what will not fit in one line",
          "[cli][memory]") {
    const long limit = 150'000;  // KB
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_limited_dir_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    SECTION("render: a schedule file too large to replay under the limit") {
        const auto schedule = dir / "big.json";
        REQUIRE(test::run_pipesim("analyze -s 1f1b -p 64 -m 8192 --save " + schedule.string())
                    .exit_code == 0);
        const auto picture = dir / "big.svg";
        const auto r = run_limited(
            limit, "render " + schedule.string() + " -o " + picture.string() + " --no-memory");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim render: ") && !Catch::Contains("bad_alloc"));
        CHECK_FALSE(std::filesystem::exists(picture));
    }
    SECTION("simulate: a cluster run too large for the limit") {
        const auto r = run_limited(
            limit, "simulate -s 1f1b -p 64 -m 65536 --cluster dgx-h100:8 --costs 1,1,1");
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::Contains("needs about") && !Catch::Contains("bad_alloc"));
    }
    SECTION("sweep: a job too large for the limit is an error row, run again on resume") {
        // Too large for this process, not a configuration that cannot run: recorded as
        // infeasible, it was skipped for good by a resume without the limit.
        const auto grid = dir / "big.json";
        std::ofstream(grid) << R"({"format": "pipesim-sweep", "version": 1,
            "schedule": "zb-v", "p": 64, "m": [8, 16384]})";
        const auto out = dir / "r.csv";
        const auto r =
            run_limited(limit, "sweep " + grid.string() + " -o " + out.string() + " -j 1");
        CHECK(r.exit_code == 1);  // a failed job, as a sweep reports one
        CHECK_THAT(r.err, Catch::Contains("run the same command again to retry"));
        const std::string rows = test::read_file(out);
        CHECK_THAT(rows, Catch::Contains(",ok,") && Catch::Contains(",error,") &&
                             Catch::Contains("needs about") && !Catch::Contains("infeasible") &&
                             !Catch::Contains("bad_alloc"));
        const auto resumed = test::run_pipesim("sweep " + grid.string() + " -o " + out.string() +
                                               " -j 1 --progress none");
        CHECK(resumed.exit_code == 0);
        const std::string rows_after = test::read_file(out);
        CHECK_THAT(rows_after, !Catch::Contains(",error,"));
        CHECK(test::lines_of(rows_after).size() == 3);  // the header and both jobs, ok
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("under ulimit -v a schedule file too large to read is refused before its ops",
          "[cli][memory]") {
    // zb-h1 at p 64, m 8000: 1,536,000 ops in 13 MB of JSON or 12 MB of CSV. Read under
    // 80 MB, they ran out of memory halfway ("out of memory: the run needs more ...").
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_read_limited_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const std::string extension : {".json", ".csv"}) {
        CAPTURE(extension);
        const auto file = dir / ("big" + extension);
        REQUIRE(
            test::run_pipesim("analyze -s zb-h1 -p 64 -m 8000 --save " + file.string()).exit_code ==
            0);
        const auto converted = dir / ("converted" + extension);
        const auto r =
            run_limited(80'000, "convert " + file.string() + " -o " + converted.string());
        CHECK(r.exit_code == 2);
        CHECK(test::lines_of(r.err).size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("pipesim convert: reading " + file.string() +
                                            " (up to 1536000 ops) needs about"));
        CHECK_FALSE(std::filesystem::exists(converted));
        CHECK(run_limited(200'000, "convert " + file.string() + " -o " + converted.string())
                  .exit_code == 0);
    }
    std::filesystem::remove_all(dir);
}

namespace {

// The VmFlags of the mapping of /proc/self/smaps that holds `address` (empty if none).
std::string vm_flags_at(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        std::uintptr_t low = 0, high = 0;
        char dash = 0;
        std::istringstream range(line);
        if (range >> std::hex >> low >> dash >> high && dash == '-') {
            inside = low <= at && at < high;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return {};
}

}  // namespace

TEST_CASE("tune_heap serves large blocks from a heap marked for huge pages", "[memory]") {
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_AS, &limit) == 0);
    if (limit.rlim_cur != RLIM_INFINITY) return;  // tested below
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    std::getline(thp, modes);
    const bool huge_pages = !modes.empty() && modes.find("[never]") == std::string::npos;
    // In a child: tune_heap() changes the process for good.
    CHECK(test::run_in_child([&]() -> std::string {
              tune_heap();
              if (!heap_tuned()) return "not tuned";
              // 8 MiB: glibc would map it on its own (above the heap) untuned.
              char* block = static_cast<char*>(std::malloc(std::size_t{8} << 20));
              if (block == nullptr || static_cast<void*>(block) >= ::sbrk(0))
                  return "8 MiB not from the heap";
              if (huge_pages && vm_flags_at(block + (4 << 20)).find(" hg") == std::string::npos)
                  return "no huge-page hint: " + vm_flags_at(block + (4 << 20));
              std::free(block);
              tune_heap();  // a second call changes nothing
              return heap_tuned() ? "ok" : "untuned by a second call";
          }) == "ok");
}

TEST_CASE("tune_heap leaves a process under ulimit -v as it is", "[memory]") {
    CHECK(test::run_in_child([]() -> std::string {
              rlimit limit{std::size_t{4} << 30, std::size_t{4} << 30};
              if (::setrlimit(RLIMIT_AS, &limit) != 0) return "setrlimit failed";
              tune_heap();
              if (heap_tuned()) return "tuned under a limit";
              // Where an 8 MiB block comes from depends on the blocks this test process freed
              // before the fork (glibc raises its mapping threshold up to 32 MiB, tuned or
              // not). The heap's growth does not: tuned, it grows by at least its 256 MiB pad,
              // untuned by glibc's 128 KiB. Small blocks until the heap grows once:
              const char* top = static_cast<const char*>(::sbrk(0));
              std::vector<void*> blocks;
              while (static_cast<const char*>(::sbrk(0)) == top && blocks.size() < 16384)
                  blocks.push_back(std::malloc(64 << 10));
              const std::ptrdiff_t grown = static_cast<const char*>(::sbrk(0)) - top;
              for (void* b : blocks)
                  std::free(b);
              if (grown <= 0) return "the heap never grew";
              return grown < (std::ptrdiff_t{64} << 20) ? "ok"
                                                        : fmt::format("grew by {} bytes", grown);
          }) == "ok");
}

TEST_CASE("a device that never ends, read under ulimit -v, is named in one line", "[cli][memory]") {
    // `yes` read as a saved timeline: the text grows until the address space runs out
    // (before the 1 GiB cap on a timeline file); once a bad_alloc and "try fewer stages".
    const auto r = run_limited(300'000, "render - -o /dev/null --format svg", "yes");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("pipesim render: standard input: cannot read: out of "
                                        "memory after "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
