// Property test of the command line. Random command lines — valid and invalid flags, values
// at and beyond their bounds, repeated and conflicting flags, files from the fuzz corpora as
// inputs — run against the pipesim binary. Every run must
//  - end within 10 s with exit code 0, 2 or 3 (never 1, an internal error, nor a signal);
//  - print at most one line on stderr when it fails, and on success only lines starting
//    "pipesim CMD: warning:" (and sweep's progress and merge's summary, which the sweep tests
//    rely on);
//  - print no backtrace or sanitizer report;
//  - leave every output file it names whole: after a success absent or a complete file of
//    its kind (JSON that parses, CSV ending in a whole line, SVG ending in </svg>, ...),
//    after a failure exactly as it was before (except merge --grid with jobs missing, which
//    is documented to write the merged file and exit with 2); and leave no other new file.
//
// Each case has its own seed, printed with its command line when it fails. Replay one with
// PIPESIM_PROPERTY_SEED=SEED; PIPESIM_PROPERTY_CASES sets the number of cases per command
// (default 12 each, for `make test`; CI runs more); PIPESIM_PROPERTY_VERBOSE=1 prints every
// case's command line, exit code and stderr.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace fs = std::filesystem;
using pipesim::test::lines_of;
using pipesim::test::read_file;

namespace {

constexpr auto run_time_limit = std::chrono::seconds(10);

// ---- randomness: splitmix64, so a seed gives the same case with any standard library -----

class Rng {
  public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    /// Uniform in [lo, hi].
    long long range(long long lo, long long hi) {
        return lo + static_cast<long long>(next() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    bool chance(double p) { return static_cast<double>(next() % 1'000'000) < p * 1e6; }
    template <class T>
    const T& pick(const std::vector<T>& items) {
        return items[next() % items.size()];
    }

  private:
    std::uint64_t state_;
};

// ---- running the binary with a time limit ----------------------------------------------

struct RunResult {
    int exit_code = -1;  ///< -1: killed by a signal (or by the time limit)
    int signal = 0;
    bool timed_out = false;
    std::string out;
    std::string err;
};

// Runs PIPESIM_BINARY with `args` in `dir` (its own process group, stdin /dev/null), killing
// the group after run_time_limit. stdout and stderr go to files in `scratch`.
RunResult run_in(const fs::path& dir, const fs::path& scratch,
                 const std::vector<std::string>& args) {
    const fs::path out_path = scratch / "stdout", err_path = scratch / "stderr";
    std::vector<std::string> words = {PIPESIM_BINARY};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        const int in = ::open("/dev/null", O_RDONLY);
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0 || ::chdir(dir.c_str()) != 0) ::_exit(126);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    RunResult r;
    if (pid < 0) throw std::runtime_error("fork failed");
    const auto deadline = std::chrono::steady_clock::now() + run_time_limit;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            r.timed_out = true;
            ::kill(-pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::kill(-pid, SIGKILL);  // workers a run may have left (a sweep's), if any
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = read_file(out_path);
    r.err = read_file(err_path);
    return r;
}

// ---- the files a case may name -------------------------------------------------------------

/// What an output flag writes: a picture (format from the extension), a schedule (JSON or
/// PyTorch CSV, from the extension), JSON whatever the extension, or a results CSV.
enum class OutputKind { picture, schedule, json, results };

struct Output {
    std::string flag;
    std::string path;  ///< as given, relative to the case directory
    OutputKind kind;
};

// Inputs: the fuzz corpora and test data (read-only, by absolute path), files made once per
// process by running pipesim (valid results, timelines, schedules, grids), and odd paths.
struct Inputs {
    fs::path root;      ///< this process's scratch directory
    fs::path fixtures;  ///< files made once, read-only afterwards

    std::vector<std::string> schedules, timelines, results, grids, blocks, models, clusters,
        calibrations, any;
};

std::string source_path(const std::string& relative) {
    return std::string(PIPESIM_SOURCE_DIR) + "/" + relative;
}

std::vector<std::string> files_in(const std::string& relative_dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(source_path(relative_dir)))
        if (e.is_regular_file()) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());  // directory order differs between file systems
    return out;
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// Runs a command that must succeed, to make a fixture.
void make_fixture(const Inputs& in, const std::vector<std::string>& args) {
    const RunResult r = run_in(in.fixtures, in.root, args);
    INFO("fixture: pipesim " << args.front() << "; stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
}

const Inputs& inputs() {
    static const Inputs made = [] {
        Inputs in;
        in.root = fs::temp_directory_path() / ("pipesim_property_" + std::to_string(::getpid()));
        in.fixtures = in.root / "fixtures";
        fs::remove_all(in.root);
        fs::create_directories(in.fixtures);
        const fs::path& f = in.fixtures;
        write_text(f / "tiny-grid.json",
                   R"({"format": "pipesim-sweep", "version": 1, "schedule": ["1f1b", "zb-h1"],
                       "p": 2, "m": [2, 4]})");
        write_text(f / "simgrid-grid.json",
                   R"({"format": "pipesim-sweep", "version": 1, "engine": "simgrid",
                       "cluster": "h200x8", "schedule": "1f1b", "p": 2, "m": 2,
                       "costs": [0.001, 0.002, 0.001]})");
        write_text(f / "model-grid.json",
                   R"({"format": "pipesim-sweep", "version": 1, "schedule": "zb-v", "p": 2,
                       "m": 4, "model": "zb-1.5b", "gpu": "a100-80gb", "mem_limit": "20GiB"})");
        write_text(f / "bad-grid.json",
                   R"({"format": "pipesim-sweep", "version": 1, "schedule": "1f1b", "p": 0})");
        write_text(f / "empty.json", "");
        write_text(f / "junk.csv", std::string("\x00\xff,\"\n\r", 6));
        make_fixture(in, {"sweep", "tiny-grid.json", "-o", "results.csv", "--progress", "none"});
        make_fixture(in, {"sweep", "tiny-grid.json", "-o", "shard0.csv", "--shard", "0/2",
                          "--progress", "none"});
        make_fixture(in,
                     {"sweep", "model-grid.json", "-o", "model-results.csv", "--progress", "none"});
        make_fixture(in, {"analyze", "-s", "zb-h1", "-p", "3", "-m", "4", "--save", "schedule.json",
                          "--save-timeline", "timeline.json"});
        make_fixture(in, {"analyze", "-s", "interleaved-1f1b", "-p", "2", "-m", "4", "--save",
                          "schedule.csv", "--timeline", "picture.svg"});
        make_fixture(
            in, {"simulate", "-s", "1f1b", "-p", "2", "-m", "2", "--cluster", "h200x8", "--costs",
                 "0.001,0.002,0.001", "--json", "--save-timeline", "sim-timeline.json"});
        fs::copy_file(f / "timeline.json", f / "timeline.txt");
        auto fixture = [&](const char* name) { return (f / name).string(); };
        auto add = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
            to.insert(to.end(), from.begin(), from.end());
        };
        add(in.schedules, files_in("tests/fuzz/corpus/schedule_json"));
        add(in.schedules, files_in("tests/fuzz/corpus/pytorch_csv"));
        add(in.schedules, {fixture("schedule.json"), fixture("schedule.csv")});
        add(in.timelines, files_in("tests/fuzz/corpus/timeline_json"));
        add(in.timelines,
            {fixture("timeline.json"), fixture("sim-timeline.json"), fixture("timeline.txt")});
        add(in.results, files_in("tests/fuzz/corpus/results_csv"));
        add(in.results, {fixture("results.csv"), fixture("shard0.csv"),
                         fixture("model-results.csv"), fixture("junk.csv")});
        // Grids small enough to sweep in well under the time limit: the corpus's grids
        // include the documentation's 288-job example.
        add(in.grids,
            {fixture("tiny-grid.json"), fixture("simgrid-grid.json"), fixture("model-grid.json"),
             fixture("bad-grid.json"), source_path("tests/data/sweeps/bad_schedule.json")});
        add(in.blocks, files_in("tests/data/blocks"));
        add(in.models, files_in("tests/fuzz/corpus/model_json"));
        add(in.clusters, files_in("tests/fuzz/corpus/cluster_json"));
        add(in.calibrations, files_in("tests/fuzz/corpus/calibration_json"));
        for (const auto* list : {&in.schedules, &in.timelines, &in.results, &in.grids, &in.blocks,
                                 &in.models, &in.clusters, &in.calibrations})
            add(in.any, *list);
        add(in.any, {fixture("empty.json"), fixture("junk.csv"), fixture("picture.svg"),
                     in.fixtures.string(), "missing.json", "missing.csv", "", "/dev/null"});
        return in;
    }();
    static const struct Cleanup {  // at exit, the scratch directory goes with the process
        ~Cleanup() { fs::remove_all(made.root); }
    } cleanup;
    return made;
}

// ---- generating command lines ----------------------------------------------------------

// A command line under construction: arguments, the outputs it names, and whether one shape
// value is already large (two large dimensions would make a run slow, not wrong).
struct CommandLine {
    std::string command;
    std::vector<std::string> args;
    std::vector<Output> outputs;
    bool large_used = false;
};

class Generator {
  public:
    /// Half the cases are clean: every value well-formed and in range, no flag repeated, no
    /// stray word; the others go out of their way to be wrong.
    Generator(std::uint64_t seed, const Inputs& in)
        : rng_(seed), in_(in), clean_(rng_.chance(0.5)) {}

    bool clean() const { return clean_; }
    /// `p`, or 0 in a clean case.
    double odd(double p) const { return clean_ ? 0 : p; }

    Rng& rng() { return rng_; }

    /// An integer flag value: usually in [lo, typical], sometimes at or past [min, max], or
    /// not an integer at all. `large_ok`: the value may be `max` (a large shape).
    std::string integer(CommandLine& c, long long lo, long long typical, long long min,
                        long long max, bool large_ok = true) {
        if (!rng_.chance(odd(0.2))) return std::to_string(rng_.range(lo, typical));
        static const std::vector<std::string> odd_values = {
            "", "x", "1.5", "+3", "0x10", " 2", "2 ", "1e3", "99999999999999999999", "-0", "٣"};
        switch (rng_.range(0, 4)) {
            case 0:
                return std::to_string(min - 1);
            case 1:
                return std::to_string(min);
            case 2:
                if (large_ok && !c.large_used) {
                    c.large_used = true;
                    return std::to_string(max);
                }
                return std::to_string(typical);
            case 3:
                return std::to_string(max + 1);
            default:
                return rng_.pick(odd_values);
        }
    }

    /// A real flag value: usually typical, sometimes a boundary or not a number.
    std::string number(const std::vector<std::string>& typical) {
        static const std::vector<std::string> odd_values = {
            "0", "-1",  "1e30", "1e31", "nan", "inf", "-inf",  "1e-300", "abc",
            "",  "1,2", "0.5",  "1",    "2",   "-0",  "1e309", "0x1p3"};
        return rng_.chance(odd(0.25)) ? rng_.pick(odd_values) : rng_.pick(typical);
    }

    /// --costs: one triple, p·v triples, or something malformed.
    std::string costs() {
        static const std::vector<std::string> odd_values = {
            "1,2",    "1,2,3,4", "a,b,c", "-1,1,1", "1e30,1,1", "nan,1,1",  ",,",
            "1,1,1:", ":",       "0,0,0", "1;1;1",  "1,1,1,",   "1e31,1,1", ""};
        if (rng_.chance(odd(0.2))) return rng_.pick(odd_values);
        std::string out;
        const long long triples = rng_.chance(0.8) ? 1 : rng_.range(2, 8);
        for (long long i = 0; i < triples; ++i)
            out += (i ? ":" : "") + triple();
        return out;
    }

    std::string triple() {
        static const std::vector<std::string> parts = {"1", "2", "0.5", "0.001", "3", "0"};
        return rng_.pick(parts) + "," + rng_.pick(parts) + "," + rng_.pick(parts);
    }

    /// An input file: usually from `preferred`, sometimes any file or an odd path.
    std::string input(const std::vector<std::string>& preferred) {
        return rng_.chance(odd(0.2)) ? rng_.pick(in_.any) : rng_.pick(preferred);
    }

    /// An output path of kind `kind` named by `flag`, recorded in `c`.
    std::string output(CommandLine& c, const std::string& flag, OutputKind kind) {
        static const std::vector<std::string> pictures = {"out.svg", "out.dot", "out.png",
                                                          "out.pdf", "out.SVG"};
        static const std::vector<std::string> schedules = {"out.json", "out.csv"};
        static const std::vector<std::string> odd_paths = {
            "out.txt",  "out",     "nodir/out.svg", ".",         "",
            "out.json", "out.csv", "out.svg",       "./out.svg", "x/../out.json"};
        std::string path;
        if (rng_.chance(odd(0.2))) {
            path = rng_.pick(odd_paths);
        } else if (kind == OutputKind::picture) {
            path = rng_.pick(pictures);
        } else if (kind == OutputKind::schedule) {
            path = rng_.pick(schedules);
        } else if (kind == OutputKind::results) {
            path = rng_.chance(0.7) ? "out.csv" : "results.csv";
        } else {
            path = rng_.chance(0.8) ? "out.json" : "trace.json";
        }
        c.outputs.push_back({flag, path, kind});
        return path;
    }

  private:
    Rng rng_;
    const Inputs& in_;
    bool clean_;
};

// One flag: its spellings and a maker of its value (empty maker: a switch).
struct FlagGen {
    std::vector<std::string> names;
    std::function<std::string(Generator&, CommandLine&)> value;
    bool required = false;
};

using Maker = std::function<std::string(Generator&, CommandLine&)>;

Maker out_value(const char* flag, OutputKind kind) {
    return [flag, kind](Generator& g, CommandLine& c) { return g.output(c, flag, kind); };
}

const std::vector<std::string> schedule_names = {
    "gpipe", "1f1b",  "interleaved-1f1b", "zb-h1", "zb-h2",    "zb-1p",      "zb-2p",
    "zb-v",  "v-min", "v-half",           "v-zb",  "dualpipe", "dualpipe-v", "",
    "GPIPE", "zb-h9", "1f1b\x1b[31m"};

std::vector<FlagGen> schedule_flags(bool small) {
    const long long typical_p = small ? 4 : 8, typical_m = small ? 8 : 16;
    return {
        {{"-s", "--schedule"},
         [](Generator& g, CommandLine&) {
             const std::size_t valid = schedule_names.size() - 4;  // the last 4 are not names
             return schedule_names[g.rng().next() % (g.clean() ? valid : schedule_names.size())];
         },
         true},
        {{"-p", "--stages"},
         [=](Generator& g, CommandLine& c) { return g.integer(c, 1, typical_p, 1, 4096, !small); },
         true},
        {{"-m", "--microbatches"},
         [=](Generator& g, CommandLine& c) {
             return g.integer(c, 1, typical_m, 1, 1 << 20, !small);
         },
         true},
        {{"-v", "--chunks"},
         [=](Generator& g, CommandLine& c) { return g.integer(c, 1, 4, 1, 64, !small); }},
        {{"--group-size"},
         [=](Generator& g, CommandLine& c) { return g.integer(c, 1, 8, 1, 1 << 20, !small); }},
        {{"--schedule-file"}, nullptr},  // filled in by the caller (needs the inputs)
        {{"--save"}, out_value("--save", OutputKind::schedule)},
    };
}

std::vector<FlagGen> cost_flags(bool with_comm) {
    std::vector<FlagGen> flags = {
        {{"--costs"}, [](Generator& g, CommandLine&) { return g.costs(); }},
        {{"--mem-w-ratio"},
         [](Generator& g, CommandLine&) {
             return g.number({"0", "0.5", "1", "0.25"});
         }},
    };
    if (with_comm)
        flags.push_back({{"--comm"}, [](Generator& g, CommandLine&) {
                             return g.number({"0", "0.1", "1", "0.05"});
                         }});
    return flags;
}

// The model flags; in a clean case --model, --gpu and --mb always go together.
std::vector<FlagGen> model_flags(bool clean) {
    static const std::vector<std::string> models = {"zb-1.5b", "llama2-7b", "gpt3-175b", "nope"};
    static const std::vector<std::string> gpus = {"a100-80gb", "h100-sxm", "h200", "x"};
    static const std::vector<std::string> recompute = {"none", "selective", "full", "half"};
    auto valid_or_not = [](const std::vector<std::string>& names) {
        return [&names](Generator& g, CommandLine&) {
            return names[g.rng().next() % (names.size() - (g.clean() ? 1 : 0))];
        };
    };
    return {
        {{"--model"},
         [](Generator& g, CommandLine&) {
             if (g.rng().chance(0.3)) return g.input(inputs().models);
             return models[g.rng().next() % (models.size() - (g.clean() ? 1 : 0))];
         },
         clean},
        {{"--gpu"}, valid_or_not(gpus), clean},
        {{"--mb"},
         [](Generator& g, CommandLine& c) { return g.integer(c, 1, 4, 1, 1 << 20, false); },
         clean},
        {{"--recompute"}, valid_or_not(recompute)},
        {{"--no-sp"}, {}},
        {{"--efficiency"},
         [](Generator& g, CommandLine&) {
             return g.number({"0.5", "0.3", "1"});
         }},
        {{"--calibration"},
         [](Generator& g, CommandLine&) { return g.input(inputs().calibrations); }},
        {{"--dist-opt"}, {}},
        {{"--first-stage-layers"},
         [](Generator& g, CommandLine& c) { return g.integer(c, 1, 8, 1, 1 << 20, false); }},
        {{"--last-stage-layers"},
         [](Generator& g, CommandLine& c) { return g.integer(c, 1, 8, 1, 1 << 20, false); }},
        {{"--dp"},
         [](Generator& g, CommandLine& c) { return g.integer(c, 1, 4, 1, 1 << 16, false); }},
        {{"-t", "--tp"},
         [](Generator& g, CommandLine& c) { return g.integer(c, 1, 8, 1, 1024, false); }},
    };
}

std::vector<FlagGen> viz_flags() {
    return {
        {{"--timeline"}, out_value("--timeline", OutputKind::picture)},
        {{"--dep-graph"}, out_value("--dep-graph", OutputKind::picture)},
        {{"--trace"}, out_value("--trace", OutputKind::json)},
        {{"--save-timeline"}, out_value("--save-timeline", OutputKind::json)},
        {{"--gantt"}, {}},
        {{"--transfers"}, {}},
        {{"--critical-path"}, {}},
        {{"--no-memory"}, {}},
    };
}

std::vector<FlagGen> joined(std::initializer_list<std::vector<FlagGen>> groups) {
    std::vector<FlagGen> out;
    for (const auto& g : groups)
        out.insert(out.end(), g.begin(), g.end());
    return out;
}

FlagGen positional(std::function<std::string(Generator&, CommandLine&)> value) {
    return {{}, std::move(value), true};
}

// Builds the arguments: the required flags (each dropped now and then), a few optional ones
// (some twice), now and then an unknown flag, a stray word or "--flag=value" spelling.
void add_flags(Generator& g, CommandLine& c, const std::vector<FlagGen>& flags) {
    Rng& rng = g.rng();
    auto emit = [&](const FlagGen& f) {
        if (f.names.empty()) {  // a positional argument
            c.args.push_back(f.value(g, c));
            return;
        }
        const std::string& name = rng.pick(f.names);
        if (!f.value) {
            c.args.push_back(name);
        } else if (name.starts_with("--") && rng.chance(0.15)) {
            c.args.push_back(name + "=" + f.value(g, c));
        } else {
            c.args.push_back(name);
            c.args.push_back(f.value(g, c));
        }
    };
    std::vector<const FlagGen*> chosen;
    for (const FlagGen& f : flags)
        if (f.required ? !rng.chance(g.odd(0.1)) : rng.chance(g.clean() ? 0.15 : 0.3))
            chosen.push_back(&f);
    for (std::size_t i = 0; i < chosen.size(); ++i) {  // shuffle (Fisher-Yates, our rng)
        const std::size_t j = i + rng.next() % (chosen.size() - i);
        std::swap(chosen[i], chosen[j]);
    }
    for (const FlagGen* f : chosen) {
        emit(*f);
        if (rng.chance(g.odd(0.1))) emit(*f);  // repeated
    }
    static const std::vector<std::string> stray = {"--bogus", "-x",    "--",  "-",     "--json=1",
                                                   "--=",     "extra", "-pp", "--help"};
    if (rng.chance(g.odd(0.12))) {
        const std::string s = rng.pick(stray);
        c.args.insert(c.args.begin() + static_cast<long>(rng.next() % (c.args.size() + 1)), s);
    }
    if (!c.args.empty() && rng.chance(g.odd(0.05))) c.args.pop_back();  // a flag missing its value
}

CommandLine generate(const std::string& command, std::uint64_t seed) {
    const Inputs& in = inputs();
    Generator g(seed, in);
    CommandLine c;
    c.command = command;
    auto input_of = [](const std::vector<std::string>& kind) {
        return [&kind](Generator& gen, CommandLine&) { return gen.input(kind); };
    };
    // A clean case takes its schedule from -s, -p, -m (...) or from a file, not both.
    const bool from_file = g.rng().chance(0.25);
    auto with_schedule_file = [&](std::vector<FlagGen> flags) {
        std::vector<FlagGen> out;
        for (FlagGen& f : flags) {
            const bool file_flag = f.names.front() == "--schedule-file";
            if (file_flag) {
                f.value = input_of(in.schedules);
                f.required = g.clean() && from_file;
            }
            const bool shape_flag = f.names.front() != "--save" && !file_flag;
            if (!g.clean() || (file_flag ? from_file : !(shape_flag && from_file)))
                out.push_back(std::move(f));
        }
        return out;
    };
    // A clean case with a model gives no unit costs.
    const bool with_model = g.rng().chance(0.3);
    const std::vector<FlagGen> costs_or_model =
        with_model ? model_flags(g.clean()) : std::vector<FlagGen>{};
    const FlagGen json{{"--json"}, {}};
    std::vector<FlagGen> flags;
    if (command == "analyze") {
        flags = joined({with_schedule_file(schedule_flags(false)),
                        with_model && g.clean() ? std::vector<FlagGen>{} : cost_flags(true),
                        costs_or_model,
                        viz_flags(),
                        {json}});
    } else if (command == "simulate") {
        static const std::vector<std::string> clusters = {"h200x8",       "dgx-a100:1", "dgx-h100",
                                                          "zb-a100-roce", "h200x8:0",   "nope"};
        static const std::vector<std::string> orders = {"tp,dp,pp", "pp,dp,tp", "dp,tp,pp",
                                                        "tp,tp,pp", "x"};
        flags = joined(
            {with_schedule_file(schedule_flags(true)),
             with_model && g.clean() ? std::vector<FlagGen>{} : cost_flags(false),
             costs_or_model,
             viz_flags(),
             {json},
             {{{"--cluster"},
               [&](Generator& gen, CommandLine&) {
                   return gen.rng().chance(0.7) ? gen.rng().pick(clusters) : gen.input(in.clusters);
               },
               true},
              {{"--layout-order"},
               [](Generator& gen, CommandLine&) { return gen.rng().pick(orders); }},
              {{"--message-bytes"},
               [](Generator& gen, CommandLine&) {
                   return gen.number({"0", "1e6"});
               }},
              {{"--grad-bytes"},
               [](Generator& gen, CommandLine&) {
                   return gen.number({"0", "1e8"});
               }},
              {{"--no-overlap-grad-reduce"}, {}},
              {{"--bw-scale"},
               [](Generator& gen, CommandLine&) {
                   return gen.number({"1", "0.5", "2"});
               }},
              {{"--lat-scale"},
               [](Generator& gen, CommandLine&) {
                   return gen.number({"1", "0", "10"});
               }},
              {{"--straggler"}, [](Generator& gen, CommandLine& cl) {
                   return gen.integer(cl, 0, 3, 0, 1 << 24, false) + ":" + gen.number({"2", "1.5"});
               }}}});
        // The cluster's GPUs are few: keep --dp small unless a bound is being tried.
    } else if (command == "compare") {
        static const std::vector<std::string> lists = {"1f1b,zb-h1",  "1f1b,zb-h1,zb-v,v-half",
                                                       "zb-2p",       "interleaved-1f1b,1f1b",
                                                       "1f1b,,zb-h1", "1f1b,1f1b",
                                                       "nope,1f1b",   ","};
        std::vector<FlagGen> shape = schedule_flags(true);
        shape.front().value = [](Generator& gen, CommandLine&) {
            return gen.clean() ? lists[gen.rng().next() % 4] : gen.rng().pick(lists);
        };
        shape.resize(shape.size() - 2);  // no --schedule-file, no --save
        flags = joined({shape,
                        with_model && g.clean() ? std::vector<FlagGen>{} : cost_flags(true),
                        costs_or_model,
                        {json, FlagGen{{"--csv"}, {}}}});
    } else if (command == "render") {
        flags = joined({{positional([&](Generator& gen, CommandLine&) {
                             return gen.rng().chance(0.5) ? gen.input(in.timelines)
                                                          : gen.input(in.schedules);
                         }),
                         {{"-o", "--output"}, out_value("-o", OutputKind::picture), true}},
                        cost_flags(true),
                        viz_flags()});
    } else if (command == "block") {
        flags = joined(
            {{positional(input_of(in.blocks)),
              {{"-m", "--microbatches"},
               [](Generator& gen, CommandLine& cl) { return gen.integer(cl, 1, 16, 1, 1 << 20); },
               true},
              {{"--reorder"}, {}},
              {{"--fill"}, {}},
              json},
             cost_flags(true)});
    } else if (command == "search") {
        flags = joined({{{{"-p", "--stages"},
                          [](Generator& gen, CommandLine& cl) {
                              return gen.integer(cl, 1, 6, 1, 4096, false);
                          },
                          true},
                         {{"-m", "--microbatches"},
                          [](Generator& gen, CommandLine& cl) {
                              return gen.integer(cl, 1, 12, 1, 1 << 20, false);
                          },
                          true},
                         {{"--mem-limit"},
                          [](Generator& gen, CommandLine&) {
                              return gen.number({"1", "2", "4", "0.5", "8"});
                          },
                          true},
                         {{"--save"}, out_value("--save", OutputKind::schedule)},
                         json},
                        cost_flags(true)});
    } else if (command == "convert") {
        flags = {positional(input_of(in.schedules)),
                 {{"-o", "--output"}, out_value("-o", OutputKind::schedule), true}};
    } else if (command == "sweep") {
        static const std::vector<std::string> progress = {"none", "auto", "lines", "bar", "x"};
        flags = {
            positional(input_of(in.grids)),
            {{"-o", "--output"}, out_value("-o", OutputKind::results), true},
            {{"-j", "--jobs"},
             [](Generator& gen, CommandLine& cl) { return gen.integer(cl, 1, 2, 1, 4096, false); }},
            {{"--shard"},
             [](Generator& gen, CommandLine& cl) {
                 return gen.integer(cl, 0, 2, 0, 3, false) + "/" +
                        gen.integer(cl, 1, 3, 1, 1 << 20, false);
             }},
            {{"--progress"}, [](Generator& gen, CommandLine&) { return gen.rng().pick(progress); }},
            {{"--dry-run"}, {}}};
    } else if (command == "merge") {
        flags = {positional(input_of(in.results)),
                 {{}, input_of(in.results)},
                 {{"-o", "--output"}, out_value("-o", OutputKind::results), true},
                 {{"--grid"}, input_of(in.grids)}};
    } else if (command == "pareto") {
        static const std::vector<std::string> x = {"peak_memory", "peak_activation", "makespan",
                                                   "mfu"};
        static const std::vector<std::string> y = {"samples_per_s_per_gpu", "throughput",
                                                   "bubble_rate", "makespan", "nope"};
        static const std::vector<std::string> where = {"p=2", "m=4", "schedule=1f1b", "p", "nope=1",
                                                       "=",   "p=x"};
        static const std::vector<std::string> group = {"p,m", "schedule", "", "nope", "p,,m"};
        flags = {
            positional(input_of(in.results)),
            {{"-o", "--output"}, out_value("-o", OutputKind::picture), true},
            {{"--x"}, [](Generator& gen, CommandLine&) { return gen.rng().pick(x); }},
            {{"--y"}, [](Generator& gen, CommandLine&) { return gen.rng().pick(y); }},
            {{"--where"}, [](Generator& gen, CommandLine&) { return gen.rng().pick(where); }},
            {{"--group-by"}, [](Generator& gen, CommandLine&) { return gen.rng().pick(group); }},
            {{"--title"}, [](Generator& gen, CommandLine&) {
                 return gen.rng().pick(std::vector<std::string>{"t", "", "<&>\"", "\x01"});
             }}};
    } else if (command == "list") {
        flags = {{{"--help"}, {}}, {{"extra"}, {}}};
    }
    c.args.push_back(command);
    add_flags(g, c, flags);
    // In a clean case, the picture switches come with the picture they change.
    const auto given = [&](const char* flag) {
        return std::find(c.args.begin(), c.args.end(), flag) != c.args.end();
    };
    if (g.clean() && command != "render" && !given("--timeline") &&
        (given("--transfers") || given("--critical-path") || given("--no-memory"))) {
        c.args.push_back("--timeline");
        c.args.push_back(g.output(c, "--timeline", OutputKind::picture));
    }
    return c;
}

// ---- checking a run --------------------------------------------------------------------

std::string shell_quoted(const std::vector<std::string>& args) {
    std::string out = "pipesim";
    for (const std::string& a : args) {
        std::string q = "'";
        for (char ch : a)
            q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        out += " " + q + "'";
    }
    return out;
}

bool ends_with_trimmed(const std::string& text, const std::string& suffix) {
    const std::size_t end = text.find_last_not_of(" \t\r\n");
    return end != std::string::npos && end + 1 >= suffix.size() &&
           text.compare(end + 1 - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether every line of `text` is whole: the text ends with a newline and no line leaves a
// quote open; with `fields` > 0, every line has that many fields.
bool whole_csv(const std::string& text, std::size_t fields) {
    if (text.empty() || text.back() != '\n') return false;
    for (const std::string& line : lines_of(text)) {
        bool quoted = false;
        std::size_t count = 1;
        for (char ch : line) {
            if (ch == '"') quoted = !quoted;
            if (ch == ',' && !quoted) ++count;
        }
        if (quoted || (fields > 0 && count != fields)) return false;
    }
    return true;
}

std::string lower_extension(const std::string& path) {
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return ext;
}

// Why `text` is not a complete file of the kind `o` asks for; empty when it is.
std::string incomplete_because(const Output& o, const std::string& text) {
    const std::string ext = lower_extension(o.path);
    auto json_ok = [&] { return nlohmann::json::accept(text); };
    switch (o.kind) {
        case OutputKind::json:
            return json_ok() ? "" : "not whole JSON";
        case OutputKind::results: {
            const std::size_t header_fields =
                std::count(text.begin(), std::find(text.begin(), text.end(), '\n'), ',') + 1;
            return text.starts_with("job,engine,") && whole_csv(text, header_fields)
                       ? ""
                       : "not a whole results CSV";
        }
        case OutputKind::schedule:
            if (ext == ".json") return json_ok() ? "" : "not whole JSON";
            if (ext == ".csv") return whole_csv(text, 0) ? "" : "not whole CSV";
            return "a schedule written to a file with extension '" + ext + "'";
        case OutputKind::picture:
            if (ext == ".svg") return ends_with_trimmed(text, "</svg>") ? "" : "SVG without </svg>";
            if (ext == ".dot")
                return ends_with_trimmed(text, "}") ? "" : "DOT without its closing }";
            if (ext == ".pdf")
                return text.starts_with("%PDF-") && ends_with_trimmed(text, "%%EOF")
                           ? ""
                           : "not a whole PDF";
            if (ext == ".png")
                return text.starts_with("\x89PNG\r\n\x1a\n") && text.size() >= 12 &&
                               text.ends_with(std::string("IEND\xae\x42\x60\x82"))
                           ? ""
                           : "not a whole PNG";
            return "a picture written to a file with extension '" + ext + "'";
    }
    return "";
}

// Every regular file under `dir` with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file())
            files[fs::relative(e.path(), dir).lexically_normal().string()] = read_file(e.path());
    return files;
}

std::string normal(const std::string& path) {
    return fs::path(path).lexically_normal().string();
}

// The problems with one run; empty when it kept every property.
std::vector<std::string> check_run(const CommandLine& c, const RunResult& r,
                                   const std::map<std::string, std::string>& before,
                                   const std::map<std::string, std::string>& after) {
    std::vector<std::string> problems;
    if (r.timed_out) problems.push_back("still running after 10 s");
    if (r.signal) problems.push_back("killed by signal " + std::to_string(r.signal));
    const bool ok = r.exit_code == 0;
    // Documented exception: merge --grid with jobs missing writes the merged file, prints its
    // summary and the error, and exits with 2.
    const bool merged_with_missing_jobs = c.command == "merge" && r.exit_code == 2 &&
                                          r.err.find("\npipesim merge: ") != std::string::npos;
    const bool written = ok || merged_with_missing_jobs;
    if (!r.timed_out && !r.signal && r.exit_code != 0 && r.exit_code != 2 && r.exit_code != 3)
        problems.push_back("exit code " + std::to_string(r.exit_code));
    for (const char* trace : {"terminate called", "Assertion", "AddressSanitizer",
                              "runtime error:", "Segmentation", "Aborted", "backtrace", "#0 "})
        if (r.err.find(trace) != std::string::npos || r.out.find(trace) != std::string::npos)
            problems.push_back(std::string("a backtrace or crash report (") + trace + ")");
    const std::vector<std::string> lines = lines_of(r.err);
    if (!ok && !merged_with_missing_jobs && lines.size() > 1)
        problems.push_back("failed with " + std::to_string(lines.size()) + " lines on stderr");
    if (!ok && !r.timed_out && !r.signal && lines.empty())
        problems.push_back("failed with nothing on stderr");
    if (ok) {
        // Warnings; and sweep's progress (lines, or the bar "[...] 3/8" --progress bar asks
        // for, redrawn after a carriage return) and merge's summary, "sweep: ..." and "merge: ...",
        // which the sweep tests rely on.
        const std::string warning = "pipesim " + c.command + ": warning:";
        const bool has_summary = c.command == "sweep" || c.command == "merge";
        for (const std::string& line : lines)
            if (!line.starts_with(warning) &&
                !(has_summary && line.starts_with(c.command + ": ")) &&
                !(c.command == "sweep" && line.starts_with("\r[")))
                problems.push_back("succeeded with this on stderr: " + line);
    }
    std::vector<std::string> named;
    for (const Output& o : c.outputs) {
        const std::string path = normal(o.path);
        named.push_back(path);
        const auto was = before.find(path);
        const auto is = after.find(path);
        if (!written) {
            if (was == before.end() && is != after.end())
                problems.push_back(o.flag + " " + o.path + " exists after a failed run");
            if (was != before.end() && (is == after.end() || is->second != was->second))
                problems.push_back(o.flag + " " + o.path + " changed by a failed run");
        } else if (is != after.end() && (was == before.end() || was->second != is->second)) {
            const std::string why = incomplete_because(o, is->second);
            if (!why.empty()) problems.push_back(o.flag + " " + o.path + ": " + why);
        }
    }
    for (const auto& [path, bytes] : after)
        if (!before.contains(path) && std::find(named.begin(), named.end(), path) == named.end())
            problems.push_back("left a file it does not name: " + path);
    return problems;
}

struct CaseResult {
    int exit_code = -1;
    std::vector<std::string> problems;  ///< the first says how to replay the case
};

// Runs one case in a fresh directory.
CaseResult run_case(const std::string& command, std::uint64_t seed) {
    const Inputs& in = inputs();
    const CommandLine c = generate(command, seed);
    const fs::path dir = in.root / "case";
    fs::remove_all(dir);
    fs::create_directories(dir);
    // Some outputs exist already (a whole file of their kind): a failed run must leave them.
    Rng rng(seed ^ 0x5eed);
    for (const Output& o : c.outputs) {
        const std::string ext = lower_extension(o.path);
        const fs::path from = o.kind == OutputKind::results ? in.fixtures / "results.csv"
                              : ext == ".json"              ? in.fixtures / "timeline.json"
                              : ext == ".csv"               ? in.fixtures / "schedule.csv"
                              : ext == ".svg"               ? in.fixtures / "picture.svg"
                                                            : fs::path();
        if (!from.empty() && rng.chance(0.3) && !o.path.empty() && o.path != "." &&
            o.path.find('/') == std::string::npos)
            fs::copy_file(from, dir / o.path, fs::copy_options::overwrite_existing);
    }
    const auto before = snapshot(dir);
    const RunResult r = run_in(dir, in.root, c.args);
    std::vector<std::string> problems = check_run(c, r, before, snapshot(dir));
    if (std::getenv("PIPESIM_PROPERTY_VERBOSE"))
        fmt::print(stderr, "{} exit {}: {}\n  {}", seed, r.exit_code, shell_quoted(c.args), r.err);
    if (!problems.empty()) {
        problems.insert(problems.begin(),
                        "seed " + std::to_string(seed) + " (replay: PIPESIM_PROPERTY_SEED=" +
                            std::to_string(seed) + "), exit " + std::to_string(r.exit_code) + ": " +
                            shell_quoted(c.args) + "\n  stderr: " + r.err);
    }
    return {r.exit_code, problems};
}

int cases_per_command() {
    const char* env = std::getenv("PIPESIM_PROPERTY_CASES");
    return env ? std::max(1, std::atoi(env)) : 12;
}

// The commands, each with a number: a case's seed is command·10^9 + case index, so a seed
// names its command too.
const std::vector<std::string> commands = {"analyze", "simulate", "render", "block",
                                           "search",  "convert",  "sweep",  "merge",
                                           "pareto",  "list",     "compare"};

void run_cases(const std::string& command) {
    const auto index = std::find(commands.begin(), commands.end(), command) - commands.begin();
    const std::uint64_t base = static_cast<std::uint64_t>(index + 1) * 1'000'000'000ull;
    std::vector<std::uint64_t> seeds;
    if (const char* replay = std::getenv("PIPESIM_PROPERTY_SEED")) {
        const std::uint64_t seed = std::strtoull(replay, nullptr, 10);
        if (seed / 1'000'000'000ull != static_cast<std::uint64_t>(index + 1)) return;
        seeds.push_back(seed);
    } else {
        for (int i = 0; i < cases_per_command(); ++i)
            seeds.push_back(base + static_cast<std::uint64_t>(i));
    }
    int failed = 0;
    std::string reports;
    std::map<int, int> exit_codes;
    for (const std::uint64_t seed : seeds) {
        const CaseResult result = run_case(command, seed);
        ++exit_codes[result.exit_code];
        if (result.problems.empty()) continue;
        ++failed;
        for (const std::string& p : result.problems)
            reports += p + "\n";
    }
    std::string codes;
    for (const auto& [code, count] : exit_codes)
        codes += fmt::format(" {}×exit {}", count, code);
    INFO(reports);
    INFO(seeds.size() << " cases of pipesim " << command << " (" << codes << "), " << failed
                      << " failed");
    CHECK(failed == 0);
}

}  // namespace

TEST_CASE("random analyze command lines keep the CLI's contract", "[cli][property]") {
    run_cases("analyze");
}
TEST_CASE("random simulate command lines keep the CLI's contract", "[cli][property]") {
    run_cases("simulate");
}
TEST_CASE("random render command lines keep the CLI's contract", "[cli][property]") {
    run_cases("render");
}
TEST_CASE("random block command lines keep the CLI's contract", "[cli][property]") {
    run_cases("block");
}
TEST_CASE("random search command lines keep the CLI's contract", "[cli][property]") {
    run_cases("search");
}
TEST_CASE("random convert command lines keep the CLI's contract", "[cli][property]") {
    run_cases("convert");
}
TEST_CASE("random sweep command lines keep the CLI's contract", "[cli][property]") {
    run_cases("sweep");
}
TEST_CASE("random merge command lines keep the CLI's contract", "[cli][property]") {
    run_cases("merge");
}
TEST_CASE("random pareto command lines keep the CLI's contract", "[cli][property]") {
    run_cases("pareto");
}
TEST_CASE("random compare command lines keep the CLI's contract", "[cli][property]") {
    run_cases("compare");
}
TEST_CASE("random list command lines keep the CLI's contract", "[cli][property]") {
    run_cases("list");
}
