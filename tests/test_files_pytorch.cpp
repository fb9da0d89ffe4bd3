// PyTorch pipelining CSV: hand-written files import with the right placement and timing.
#include <catch2/catch.hpp>

#include <string>

#include "fileio/files.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/costs.hpp"
#include "schedules/placement.hpp"
#include "schedules/pytorch_csv.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_file.hpp"
#include "sim/replay.hpp"

#include "child_process.hpp"
#include "cli_runner.hpp"

using namespace pipesim;
using namespace pipesim::fileio;
using namespace pipesim::sim;

namespace {

const std::string data_dir = std::string(PIPESIM_SOURCE_DIR) + "/tests/data/";

PytorchCsvImport import_data_file(const std::string& name) {
    const std::string path = data_dir + name;
    return parse_pytorch_csv(read_text_file(path, 1 << 20), path, file_stem(path));
}

// Makespan of the analytic replay with F = B = W = 1 per full stage (1/v per chunk).
double unit_makespan(const Schedule& s) {
    const Timeline t = replay(s, uniform_stage_costs(s.devices, s.chunks, 1, 1, 1));
    double end = 0;
    for (const auto& ops : t.device_ops)
        for (const TimedOp& op : ops)
            end = std::max(end, op.end);
    return end;
}

}  // namespace

TEST_CASE("a hand-written PyTorch 1F1B CSV imports as 1F1B with its makespan", "[files]") {
    const PytorchCsvImport imported = import_data_file("pytorch_1f1b_p4_m6.csv");
    const Schedule& s = imported.schedule;
    CHECK(s.devices == 4);
    CHECK(s.microbatches == 6);
    CHECK(s.chunks == 1);
    CHECK(imported.placement == PlacementKind::looped);
    CHECK(s.device_ops[3][1] == Op{Pass::BW, 0, 3});  // PyTorch's B is the fused backward
    const Schedule generated = generate_schedule("1f1b", {4, 6, 0, 0});
    CHECK(s.device_ops == generated.device_ops);
    CHECK(unit_makespan(s) == Approx(unit_makespan(generated)));
    CHECK(unit_makespan(s) == Approx(27.0));  // (m + p − 1)(F + B + W)
}

TEST_CASE("a CSV that starts with a UTF-8 byte order mark imports as without it", "[files]") {
    const std::string path = data_dir + "pytorch_1f1b_p4_m6.csv";
    const std::string text = read_text_file(path, 1 << 20);
    const PytorchCsvImport plain = parse_pytorch_csv(text, path, "x");
    const PytorchCsvImport marked = parse_pytorch_csv("\xEF\xBB\xBF" + text, path, "x");
    CHECK(marked.schedule == plain.schedule);
    // Positions stay byte positions in the file: a bad first cell is at column 4.
    CHECK_THROWS_WITH(parse_pytorch_csv("\xEF\xBB\xBF"
                                        "0X0\n",
                                        "bom.csv", "x"),
                      Catch::StartsWith("bom.csv:1:4: "));
}

TEST_CASE("a hand-written interleaved CSV imports with looped placement and its makespan",
          "[files]") {
    const PytorchCsvImport imported = import_data_file("pytorch_interleaved_p2_v2_m4.csv");
    const Schedule& s = imported.schedule;
    CHECK(s.devices == 2);
    CHECK(s.chunks == 2);
    CHECK(s.microbatches == 4);
    CHECK(imported.placement == PlacementKind::looped);
    CHECK(s.stage_device == looped_placement(2, 2));
    const Schedule generated = generate_schedule("interleaved-1f1b", {2, 4, 2, 0});
    CHECK(unit_makespan(s) == Approx(unit_makespan(generated)));
    CHECK(unit_makespan(s) == Approx(13.5));
}

TEST_CASE("a hand-written V-shape CSV (CRLF, blank cells) imports with V-shape placement",
          "[files]") {
    const PytorchCsvImport imported = import_data_file("pytorch_vshape_p2_m4.csv");
    const Schedule& s = imported.schedule;
    CHECK(s.devices == 2);
    CHECK(s.chunks == 2);
    CHECK(s.microbatches == 4);
    CHECK(imported.placement == PlacementKind::vshape);
    CHECK(s.stage_device == vshape_placement(2, 2));
    CHECK(s.device_ops[0][2] == Op{Pass::B, 0, 3});  // PyTorch's I is the input-gradient B
    CHECK(s.device_ops[0][4] == Op{Pass::W, 0, 3});
    // Rank 0 runs 24 chunk passes of 1/2 and idles 3 steps waiting for rank 1: 13.5.
    CHECK(unit_makespan(s) == Approx(13.5));
    // The file follows the offset-2 V block's order (V-Half's for odd p); even-p v-half
    // delays the V's turn and fills the warm-up: no idle slot, 3m + ½ (rank 1 starts ½ later).
    const Schedule offset_two = schedule_from_block(vshape_block(2, 2), 4);
    CHECK(offset_two.stage_device == s.stage_device);
    CHECK(unit_makespan(s) == Approx(unit_makespan(offset_two)));
    REQUIRE(find_generator("v-half") != nullptr);
    CHECK(unit_makespan(generate_schedule("v-half", {2, 4, 2, 0})) == Approx(12.5));
}

TEST_CASE("communication actions and overlap groups are kept as annotations", "[files]") {
    const PytorchCsvImport imported = import_data_file("pytorch_comms_p2_m2.csv");
    const Schedule& s = imported.schedule;
    CHECK(s.devices == 2);
    CHECK(s.microbatches == 2);
    // Rank 1: F0 I0 (F1; W0 overlapped) I1 W1 — the group's actions in written order.
    CHECK(s.device_ops[1] == std::vector<Op>{{Pass::F, 0, 1},
                                             {Pass::B, 0, 1},
                                             {Pass::F, 1, 1},
                                             {Pass::W, 0, 1},
                                             {Pass::B, 1, 1},
                                             {Pass::W, 1, 1}});
    REQUIRE(imported.annotations.size() == 15);  // 7 on rank 0, 8 on rank 1
    CHECK(imported.annotations[0] == CsvAnnotation{0, 0, "0UNSHARD", 1, 1});
    CHECK(imported.annotations[1] == CsvAnnotation{0, 1, "0SEND_F0", 1, 14});
    const CsvAnnotation& overlap = imported.annotations[11];
    CHECK(overlap.action == "(1F1;1W0)OVERLAP_F_B");
    CHECK(overlap.rank == 1);
    CHECK(overlap.before_op == 2);
    CHECK(overlap.line == 2);
}

TEST_CASE("CSV cells follow Python's csv module: quotes, CRLF, blank lines", "[files]") {
    // Quoted cells, a doubled quote inside quotes, whitespace around actions.
    const auto quoted = parse_pytorch_csv("\"0F0\", 0B0 \n", "q.csv");
    CHECK(quoted.schedule.device_ops[0] == std::vector<Op>{{Pass::F, 0, 0}, {Pass::BW, 0, 0}});
    // "\r" alone ends a row as "\n" and "\r\n" do.
    const auto cr = parse_pytorch_csv("0F0,,0B0\r,1F0,1B0\r", "cr.csv");
    CHECK(cr.schedule.devices == 2);
    // A blank line is a rank with no actions, as csv.reader yields an empty row for it.
    CHECK_THROWS_WITH(parse_pytorch_csv("0F0,0B0\n\n1F0,1B0\n", "blank.csv"),
                      Catch::Contains("blank.csv:2:1: rank 1 has no compute actions"));
}

TEST_CASE("read_schedule_file picks the format by extension and names the schedule", "[files]") {
    const Schedule csv = read_schedule_file(data_dir + "pytorch_1f1b_p4_m6.csv");
    CHECK(csv.name == "pytorch_1f1b_p4_m6");
    const Schedule json = read_schedule_file(data_dir + "schedule_vshape_p2_m2.json");
    CHECK(json.name == "hand-written V-shape, split backward");
    CHECK(classify_placement(json.stage_device, 2) == PlacementKind::vshape);
    const Schedule custom = read_schedule_file(data_dir + "schedule_custom_placement.json");
    CHECK(custom.stage_device == std::vector<int>{1, 0, 0, 1});
    CHECK_THROWS_WITH(read_schedule_file(data_dir + "nothing.txt"),
                      Catch::Contains("unknown schedule file type '.txt'"));
}

TEST_CASE("every annotation of a large CSV keeps the line and column of its cell", "[files]") {
    const std::string plain =
        schedule_to_pytorch_csv(generate_schedule("1f1b", GeneratorOptions{8, 128, 1, 0}));
    std::string text;  // a RECV_F of the rank's own stage before every compute cell
    int rank = 0;
    for (std::size_t i = 0; i < plain.size(); ++i) {
        if (i > 0 && plain[i - 1] == '\n') ++rank;
        const bool cell_start = i == 0 || plain[i - 1] == '\n' || plain[i - 1] == ',';
        if (cell_start && plain[i] != ',' && plain[i] != '\n')
            text += std::to_string(rank) + "RECV_F1, ";
        text += plain[i];
    }
    const PytorchCsvImport imported = parse_pytorch_csv(text, "a.csv");
    REQUIRE(imported.annotations.size() == 8 * 128 * 2);
    const std::vector<std::string> lines = test::lines_of(text);
    for (const CsvAnnotation& a : imported.annotations) {
        CAPTURE(a.rank, a.before_op, a.line, a.column);
        REQUIRE(a.line == a.rank + 1);
        CHECK(lines[static_cast<std::size_t>(a.line - 1)].substr(
                  static_cast<std::size_t>(a.column - 1), a.action.size()) == a.action);
    }
}

TEST_CASE("idle steps cost no memory: a file of 20 million empty cells reads in 300 MB",
          "[files][memory]") {
    // Each empty cell was kept as a cell (45 bytes): 20 MB of commas needed about 1 GB.
    const std::string message = test::run_in_child([]() -> std::string {
        const std::string text = "0F0," + std::string(20'000'000, ',') + "0B0\n";
        if (!test::cap_address_space(std::size_t{300} << 20)) return "setrlimit failed";
        const PytorchCsvImport imported = parse_pytorch_csv(text, "idle.csv");
        return std::to_string(imported.schedule.op_count());
    });
    CHECK(message == "2");
}

TEST_CASE("semicolons outside an overlap group are not counted as actions", "[files][memory]") {
    // 40 cells of 60,000 'x;' each: counted as 2.4 million actions, a file of 4.8 MB was
    // refused for memory under 100 MB instead of getting the error at its first cell.
    const std::string message = test::run_in_child([]() -> std::string {
        std::string text;
        for (int row = 0; row < 40; ++row) {
            for (int k = 0; k < 60'000; ++k)
                text += "x;";
            text += "\n";
        }
        if (!test::cap_address_space(std::size_t{100} << 20)) return "setrlimit failed";
        try {
            (void)parse_pytorch_csv(text, "semicolons.csv");
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "read";
    });
    CHECK_THAT(message, Catch::StartsWith("semicolons.csv:1:1: expected an action like 2F0"));
}

TEST_CASE("a CSV's schedule error maps pipesim's pass names onto the file's letters", "[files]") {
    // PyTorch writes a full backward B and an input gradient I; pipesim calls them BW and B.
    // '0B0' with '0W0' has a weight gradient twice: the message says which letters it means.
    try {
        parse_pytorch_csv("0F0,0B0,0W0\n1F0,1B0\n", "mixed.csv", "mixed");
        FAIL("a full backward and a weight gradient of one microbatch was read");
    } catch (const std::invalid_argument& e) {
        CHECK_THAT(e.what(), Catch::StartsWith("mixed.csv:1:9: invalid schedule: device 0: "
                                               "microbatch 0 stage 0 has both BW and W"));
        CHECK_THAT(e.what(),
                   Catch::EndsWith("(pipesim's BW is this file's B, a full backward, and its B "
                                   "this file's I, the input gradient: '0B1' is BW(mb 1, stage "
                                   "0))"));
    }
    // A message naming no backward gets no such note.
    try {
        parse_pytorch_csv("0F0,0F0,0B0\n1F0,1B0\n", "twice.csv", "twice");
        FAIL("a forward listed twice was read");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()) ==
              "twice.csv:1:5: invalid schedule: device 0 position 1: F(mb 0, stage 0) appears "
              "twice (first at position 0)");
    }
}
