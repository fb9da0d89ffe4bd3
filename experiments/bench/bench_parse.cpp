// Reading input files: a generated 1F1B schedule (p=32) of about 10 MB as schedule JSON and as
// PyTorch CSV, a one-line CSV of 80,000 cells (p=1), and a saved timeline of about 10 MB, each
// read from disk and parsed as `pipesim analyze --schedule-file` / `render` do. Prints seconds
// and MB/s; asserts nothing.
//   bench_parse [--mb SIZE] [--cells N]     (defaults: 10 MB, 80000 cells)
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "bench_timing.hpp"
#include "fileio/files.hpp"
#include "schedules/heap.hpp"
#include "schedules/pytorch_csv.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_file.hpp"
#include "schedules/schedule_json.hpp"
#include "sim/replay.hpp"
#include "viz/timeline_file.hpp"

using pipesim::bench::seconds_per_run;

namespace {

// The 1F1B schedule with `devices` devices whose file (as `write` makes it) is about `bytes`
// long. A file grows about linearly with the microbatches (their numbers get longer): sized
// from a small sample, then corrected once.
pipesim::Schedule sized_schedule(
    int devices, double bytes, const std::function<std::string(const pipesim::Schedule&)>& write) {
    int m = 64;
    pipesim::Schedule s = pipesim::generate_schedule("1f1b", {devices, m, 1, 0});
    for (int pass = 0; pass < 2; ++pass) {
        m = std::max(1, static_cast<int>(m * bytes / static_cast<double>(write(s).size())));
        s = pipesim::generate_schedule("1f1b", {devices, m, 1, 0});
    }
    return s;
}

// Writes `text` to `path`, reads it back with `read` (the mean of runs filling at least
// 0.5 s, at least one) and prints one line.
void measure(const std::string& what, const std::string& path, const std::string& text,
             std::size_t ops, const std::function<void(const std::string&)>& read) {
    pipesim::fileio::write_file_atomically(path, text);
    const double seconds = seconds_per_run([&] { read(path); }, 1, 0.5);
    const double mb = static_cast<double>(text.size()) / 1e6;
    fmt::print("{:<34} {:>6.2f} MB {:>8} ops {:>8.3f} s {:>8.3g} MB/s\n", what, mb, ops, seconds,
               mb / seconds);
}

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();  // as pipesim does
    double megabytes = 10;
    int cells = 80'000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--mb") == 0) megabytes = std::atof(argv[i + 1]);
        if (std::strcmp(argv[i], "--cells") == 0) cells = std::atoi(argv[i + 1]);
    }
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("pipesim_bench_parse_{}", ::getpid());
    std::filesystem::create_directories(dir);
    const double bytes = megabytes * 1e6;

    const auto json = sized_schedule(32, bytes, pipesim::schedule_to_json);
    measure(fmt::format("schedule JSON (1f1b p=32 m={})", json.microbatches),
            (dir / "s.json").string(), pipesim::schedule_to_json(json), json.op_count(),
            [](const std::string& path) { pipesim::read_schedule_file(path); });

    const auto csv = sized_schedule(32, bytes, pipesim::schedule_to_pytorch_csv);
    measure(fmt::format("PyTorch CSV (1f1b p=32 m={})", csv.microbatches), (dir / "s.csv").string(),
            pipesim::schedule_to_pytorch_csv(csv), csv.op_count(),
            [](const std::string& path) { pipesim::read_schedule_file(path); });

    // One rank: F and BW of every microbatch, all in one row.
    const auto line = pipesim::generate_schedule("1f1b", {1, std::max(1, cells / 2), 1, 0});
    measure(fmt::format("one-line CSV ({} cells)", line.op_count()), (dir / "line.csv").string(),
            pipesim::schedule_to_pytorch_csv(line), line.op_count(),
            [](const std::string& path) { pipesim::read_schedule_file(path); });

    auto timeline_of = [](const pipesim::Schedule& s) {
        return pipesim::viz::timeline_json(
            pipesim::sim::replay(s, pipesim::uniform_stage_costs(s.devices, s.chunks, 1, 1, 1)));
    };
    const auto timed = sized_schedule(32, bytes, timeline_of);
    measure(fmt::format("saved timeline (1f1b p=32 m={})", timed.microbatches),
            (dir / "t.json").string(), timeline_of(timed), timed.op_count(),
            [](const std::string& path) { pipesim::viz::read_timeline_file(path); });

    std::filesystem::remove_all(dir);
    return 0;
}
