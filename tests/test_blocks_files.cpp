// Block files: the example blocks under tests/data/blocks, positioned errors for malformed
// files, and the `pipesim block` command (golden numbers, bound ≥ peak, collisions, exit 2).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "fileio/parse_error.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/block_json.hpp"

using namespace pipesim;
using namespace pipesim::fileio;
using pipesim::test::run_pipesim;

namespace {

const std::string blocks_dir = std::string(PIPESIM_SOURCE_DIR) + "/tests/data/blocks/";

// A one-line JSON body is hard to read in a table; this is the ZB-H1 block for p = 2 with
// `edit` applied (a key → raw JSON text; "" removes the key).
std::string zb_h1_p2(const std::string& key = "", const std::string& raw = "") {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(block_to_json(zb_h1_block(2)));
    if (!key.empty()) {
        if (raw.empty())
            j.erase(key);
        else
            j[key] = nlohmann::ordered_json::parse(raw);
    }
    return j.dump(1);
}

std::string parse_message(const std::string& text) {
    try {
        parse_block_json(text, "b.json");
    } catch (const ParseError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("the example block files are the catalog's blocks", "[blocks][files]") {
    CHECK(read_block_file(blocks_dir + "1f1b-p4.json").passes == one_f_one_b_block(4).passes);
    CHECK(read_block_file(blocks_dir + "zb-h1-p4.json") == zb_h1_block(4));
    CHECK(read_block_file(blocks_dir + "v-min-p4.json") == vshape_block(4, 1, {}, "v-min"));
    CHECK(read_block_file(blocks_dir + "v-half-p4.json") == v_half_block(4, {}, "v-half"));
}

TEST_CASE("block files round-trip exactly, groups and unequal lengths included",
          "[blocks][files]") {
    for (const BuildingBlock& b :
         {interleaved_1f1b_block(3, 2), zb_h2_block(4, {3, 4, 2}), vshape_block(5, 2, {2, 3, 1})}) {
        CAPTURE(b.name);
        const std::string text = block_to_json(b);
        CHECK(parse_block_json(text, "x.json") == b);
        CHECK(block_to_json(parse_block_json(text, "x.json")) == text);
    }
}

TEST_CASE("malformed block files name file:line:column, the field and what was expected",
          "[blocks][files]") {
    using Catch::Contains;
    CHECK_THAT(parse_message("{\"format\": \"pipesim-block\",\n \"version\": 1,"),
               Contains("b.json:2:"));
    CHECK_THAT(parse_message(R"({"format": "pipesim-schedule", "version": 1})"),
               Contains("expected \"pipesim-block\""));
    CHECK_THAT(parse_message(zb_h1_p2("devices", "0")), Contains("devices"));
    CHECK_THAT(parse_message(zb_h1_p2("devices", "0")), Contains("1..4096"));
    CHECK_THAT(parse_message(zb_h1_p2("interval")), Contains("interval"));
    CHECK_THAT(parse_message(zb_h1_p2("interval", "2.5")), Contains("interval"));
    CHECK_THAT(parse_message(zb_h1_p2("colour", "1")), Contains("colour"));
    CHECK_THAT(parse_message(zb_h1_p2("placement", "[0, 0]")),
               Contains("device 0 holds 2 stages, expected 1"));
    // Said at the placement's line and column, not at the passes.
    CHECK_THAT(parse_message(zb_h1_p2("placement", "[0, 0]")),
               Contains("placement: device 0 holds 2 stages"));
    CHECK_THAT(parse_message(zb_h1_p2("placement", "\"spiral\"")),
               Contains("expected \"looped\", \"v-shape\""));
    CHECK_THAT(parse_message(zb_h1_p2("lengths", R"({"F": 0})")), Contains("lengths.F"));
    CHECK_THAT(parse_message(zb_h1_p2("passes", R"([{"pass": "X", "stage": 0, "start": 0}])")),
               Contains("passes[0].pass: expected \"F\", \"B\", \"W\" or \"BW\", got 'X'"));
    CHECK_THAT(parse_message(zb_h1_p2("passes", R"([{"pass": "F", "stage": 9, "start": 0}])")),
               Contains("passes[0].stage"));
    CHECK_THAT(parse_message(zb_h1_p2("passes", R"([{"pass": "F", "stage": 0}])")),
               Contains("start"));
    // Block-level problems point at the pass.
    const std::string early =
        zb_h1_p2("passes",
                 R"([{"pass": "F", "stage": 0, "start": 0}, {"pass": "F", "stage": 1, "start": 0},
            {"pass": "BW", "stage": 1, "start": 1}, {"pass": "BW", "stage": 0, "start": 3}])");
    CHECK_THAT(parse_message(early), Contains("passes[1]"));
    CHECK_THAT(parse_message(early), Contains("starts before its input F(mb 0, stage 0)"));
    CHECK_THAT(parse_message(zb_h1_p2("passes", R"([{"pass": "F", "stage": 0, "start": 0}])")),
               Contains("has no backward"));
    // Size limit before parsing.
    BlockFileLimits tiny;
    tiny.max_bytes = 10;
    CHECK_THROWS_WITH(parse_block_json(zb_h1_p2(), "b.json", "b", tiny),
                      Contains("more than the limit of 10"));
    BlockFileLimits few;
    few.max_passes = 3;
    CHECK_THROWS_WITH(parse_block_json(zb_h1_p2(), "b.json", "b", few), Contains("passes"));
}

TEST_CASE("pipesim block reports the golden metrics and the lifespan bound of each example",
          "[blocks][files][cli]") {
    struct Golden {
        const char* file;
        double makespan;
        std::vector<double> peak;
        std::vector<double> bound;
    };
    for (const Golden& g : {Golden{"1f1b-p4", 33, {4, 3, 2, 1}, {4, 3, 2, 1}},
                            Golden{"zb-h1-p4", 27, {4, 4, 4, 4}, {4, 4, 4, 4}},
                            Golden{"v-min-p4", 29.5, {2, 2, 2, 2}, {2, 2, 2.5, 2}},
                            Golden{"v-half-p4", 29, {3, 3, 3, 3}, {3, 3, 3, 3}}}) {
        CAPTURE(g.file);
        const auto r = run_pipesim("block " + blocks_dir + g.file + ".json -m 8 --json");
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["makespan"].get<double>() == Approx(g.makespan));
        CHECK(j["peak_activation"].get<std::vector<double>>() == g.peak);
        CHECK(j["block"]["lifespan_bound"].get<std::vector<double>>() == g.bound);
    }
    // 1F1B: bubble (p−1)/(m+p−1); ZB-H1: (p−1)(F+B−W) idle on a span of 3m + p − 1.
    const auto one =
        nlohmann::json::parse(run_pipesim("block " + blocks_dir + "1f1b-p4.json -m 8 --json").out);
    CHECK(one["bubble_rate"].get<double>() == Approx(3.0 / 11));
    const auto h1 =
        nlohmann::json::parse(run_pipesim("block " + blocks_dir + "zb-h1-p4.json -m 8 --json").out);
    CHECK(h1["bubble_rate"].get<double>() == Approx(3.0 / 27));
}

TEST_CASE("the measured peak never exceeds the lifespan bound, with costs and reordering",
          "[blocks][files][cli]") {
    for (const char* file : {"1f1b-p4", "zb-h1-p4", "v-min-p4", "v-half-p4"}) {
        for (const char* flags :
             {"", "--reorder", "--costs 1,2,1 --comm 0.25 --reorder", "--mem-w-ratio 0.5", "--fill",
              "--costs 1,2,1 --comm 0.25 --fill"}) {
            CAPTURE(file, flags);
            const auto r =
                run_pipesim("block " + blocks_dir + file + ".json -m 12 --json " + flags);
            REQUIRE(r.exit_code == 0);
            const auto j = nlohmann::json::parse(r.out);
            const auto peak = j["peak_activation"].get<std::vector<double>>();
            const auto bound = j["block"]["lifespan_bound"].get<std::vector<double>>();
            for (std::size_t d = 0; d < peak.size(); ++d)
                CHECK(peak[d] <= bound[d] + 1e-9);
        }
    }
}

TEST_CASE("pipesim block --fill says when its order runs longer than the block unfilled",
          "[blocks][files][cli]") {
    // The fill chooses in the block's slot lengths: with F twice B and W, ZB-H1's filled order
    // takes 55 where the block repeated and squeezed takes 54 (checked here with both runs).
    const std::string block = "block " + blocks_dir + "zb-h1-p4.json -m 12 --json --costs ";
    const auto filled = run_pipesim(block + "2,1,1 --fill");
    const auto plain = run_pipesim(block + "2,1,1");
    REQUIRE(filled.exit_code == 0);
    REQUIRE(plain.exit_code == 0);
    const double longer = nlohmann::json::parse(filled.out)["makespan"].get<double>();
    const double shorter = nlohmann::json::parse(plain.out)["makespan"].get<double>();
    REQUIRE(longer > shorter);
    CHECK(filled.err == fmt::format("pipesim block: warning: --fill: with these pass times the "
                                    "filled order runs {:.6g}, {:.1f} % longer than the block "
                                    "unfilled ({:.6g}): the fill chooses in the block's slot "
                                    "lengths\n",
                                    longer, 100 * (longer / shorter - 1), shorter));
    // Where it is no longer (unit costs here), nothing is said.
    const auto unit = run_pipesim(block + "1,1,1 --fill");
    REQUIRE(unit.exit_code == 0);
    CHECK(unit.err.empty());
}

TEST_CASE("pipesim block saves and draws the schedule it builds", "[blocks][files][cli]") {
    // It printed the figures alone: the schedule could not be replayed, drawn or converted.
    using Catch::Contains;
    const auto dir = std::filesystem::temp_directory_path() / "pipesim_block_save_test";
    std::filesystem::create_directories(dir);
    const std::string saved = (dir / "v.json").string(), picture = (dir / "v.svg").string();
    const std::string block = "block " + blocks_dir + "v-half-p4.json -m 12 --fill --costs 1,2,1";
    const auto built = run_pipesim(block + " --json --save " + saved + " --timeline " + picture);
    REQUIRE(built.exit_code == 0);
    const auto b = nlohmann::json::parse(built.out);
    // The saved order, replayed with the same costs, gives the block's figures.
    const auto replayed = run_pipesim("analyze --schedule-file " + saved + " --costs 1,2,1 --json");
    REQUIRE(replayed.exit_code == 0);
    const auto a = nlohmann::json::parse(replayed.out);
    for (const char* field : {"makespan", "bubble_rate", "peak_activation_max", "lifespan_max"})
        CHECK(a[field].get<double>() == Approx(b[field].get<double>()).epsilon(1e-12));
    std::ifstream svg(picture);
    const std::string text((std::istreambuf_iterator<char>(svg)), {});
    CHECK_THAT(text, Contains("<svg"));
    CHECK_THAT(text, Contains("p=4 m=12 v=2"));
    // The Gantt chart after the table; a refused output writes nothing.
    CHECK_THAT(run_pipesim(block + " --gantt").out, Contains("d0 |"));
    std::filesystem::remove(saved);
    const auto refused = run_pipesim(block + " --save " + saved + " --gantt --json");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("--gantt prints text; it cannot go with --json"));
    CHECK_FALSE(std::filesystem::exists(saved));
    std::filesystem::remove_all(dir);
}

TEST_CASE("pipesim block refuses a repetition too large before building it", "[blocks][cli]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipesim_block_large_test";
    std::filesystem::create_directories(dir);
    // ZB-H1's block on 64 devices: 192 passes, repeated for 2^20 microbatches 201,326,592 ops.
    const std::string file = (dir / "zb64.json").string();
    std::ofstream(file) << block_to_json(zb_h1_block(64));
    const auto many = run_pipesim("block " + file + " -m 1048576");
    CHECK(many.exit_code == 2);
    CHECK(many.err ==
          "pipesim block: block 'zb-h1-block' repeated for 1048576 microbatches gives "
          "201326592 ops, more than the 2e+08 a schedule may have\n");
    // Under an address-space limit: refused from the estimate (the 8,388,608 ops of 1F1B's
    // 4-device block need some 300 MB), where it once filled the limit and died.
    const auto capped =
        pipesim::test::run_program("ulimit -v 150000; " + std::string(PIPESIM_BINARY),
                                   "block " + blocks_dir + "1f1b-p4.json -m 1048576");
    CHECK(capped.exit_code == 2);
    CHECK_THAT(capped.err,
               Catch::StartsWith("pipesim block: block '1f1b-block' repeated for 1048576 "
                                 "microbatches (8388608 ops) needs about"));
    CHECK_THAT(capped.err, Catch::Contains("(ulimit -v)"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("pipesim block: bad files, collisions and bad flags are one line and exit 2",
          "[blocks][files][cli]") {
    const auto dir = std::filesystem::temp_directory_path() / "pipesim_block_test";
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    using Catch::Contains;
    const std::string colliding = write("collide.json", zb_h1_p2("interval", "2"));
    const auto c = run_pipesim("block " + colliding + " -m 4");
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK_THAT(c.err, Contains("collides when repeated every 2 slots: on device"));
    CHECK_THAT(c.err, Contains("overlaps"));
    CHECK(std::count(c.err.begin(), c.err.end(), '\n') == 1);

    const auto bad =
        run_pipesim("block " + write("bad.json", zb_h1_p2("interval", "\"3\"")) + " -m 4");
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Contains("bad.json:"));
    CHECK_THAT(bad.err, Contains("interval"));

    CHECK(run_pipesim("block " + blocks_dir + "v-min-p4.json").exit_code == 2);  // no -m
    CHECK_THAT(run_pipesim("block " + blocks_dir + "v-min-p4.json").err, Contains("missing -m M"));
    CHECK(run_pipesim("block -m 4").exit_code == 2);
    CHECK_THAT(run_pipesim("block " + (dir / "absent.json").string() + " -m 4").err,
               Contains("cannot read"));
    const auto group = run_pipesim(
        "block " + write("g.json", block_to_json(interleaved_1f1b_block(3, 2))) + " -m 4");
    CHECK(group.exit_code == 2);
    CHECK_THAT(group.err, Contains("multiple of 3"));
    std::filesystem::remove_all(dir);
}
