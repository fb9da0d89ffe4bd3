// Schedule files: malformed input is rejected with "file:line:column: what was expected".
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "fileio/parse_error.hpp"
#include "schedules/pytorch_csv.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_json.hpp"

using namespace pipesim;
using namespace pipesim::fileio;

namespace {

// A valid one-line document: 2 devices, 1 microbatch, F and BW on each.
const std::string head = R"({"format":"pipesim-schedule","version":1,)";
const std::string shape = R"("devices":2,"microbatches":1,"chunks":1,"placement":"looped",)";
const std::string ops = R"("device_ops":["F0:0 BW0:0","F0:1 BW0:1"]})";

std::string message_of(const std::string& file, const std::string& text) {
    try {
        if (file.size() > 4 && file.substr(file.size() - 4) == ".csv")
            parse_pytorch_csv(text, file);
        else
            parse_schedule_json(text, file);
    } catch (const ParseError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("not a ParseError: ") + e.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("the one-line sample document is valid", "[files]") {
    CHECK(message_of("m.json", head + shape + ops) == "accepted");
}

TEST_CASE("malformed schedule files get a positioned message saying what was expected", "[files]") {
    using row = std::tuple<std::string, std::string, std::string>;
    auto [file, text, expected] = GENERATE(table<std::string, std::string, std::string>({
        // --- JSON syntax ---
        row{"m.json", "",
            "m.json:1:1: invalid JSON: syntax error while parsing value - "
            "unexpected end of input"},
        row{"m.json", "{\"format\": \"pipesim-schedule\",}",
            "m.json:1:31: invalid JSON: syntax error while parsing object key"},
        row{"m.json", "{\n  \"format\": tru\n}",
            "m.json:2:16: invalid JSON: syntax error "
            "while parsing value - invalid literal"},
        row{"m.json", "{\"format\": \"a\xff\"}",
            "m.json:1:14: invalid JSON: syntax error while "
            "parsing value - invalid string: ill-formed "
            "UTF-8 byte"},
        row{"m.json", "{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}",
            "m.json:1:38: nesting deeper than 32 levels"},
        row{"m.json", R"({"format": "pipesim-schedule", "version": 1, "name": ""})",
            "m.json:1:54: name: expected a name, got \"\""},
        row{"m.json", R"({"format":"pipesim-schedule","format":"x"})",
            "m.json:1:30: key 'format' appears twice in this object"},
        // --- JSON document shape ---
        // Refused from its first byte, before it is parsed (a large one took seconds).
        row{"m.json", "[1, 2]",
            "m.json:1:1: expected a JSON object with \"format\": "
            "\"pipesim-schedule\", got '[1, 2]'"},
        row{"m.json", "\xEF\xBB\xBF \n \"" + std::string(100'000, 'a') + "\"",
            "m.json:2:2: expected a JSON object with \"format\": \"pipesim-schedule\", got "
            "'\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'..."},
        row{"m.json", "nonsense",
            "m.json:1:1: expected a JSON object with \"format\": \"pipesim-schedule\", got "
            "'nonsense'"},
        row{"m.json", R"({"version": 1})",
            "m.json:1:1: missing format: expected \"format\": \"pipesim-schedule\", \"version\": "
            "1"},
        row{"m.json", R"({"format": "pipesim-timeline"})",
            "m.json:1:12: format: expected \"pipesim-schedule\", got '\"pipesim-timeline\"'"},
        row{"m.json", head + R"("devicess":2})",
            "m.json:1:42: unknown key 'devicess' in the document (known: format, version, name, "
            "devices, microbatches, chunks, placement, microbatch_stages, device_ops, fb_pairs)"},
        row{"m.json", R"({"format":"pipesim-schedule","version":2})",
            "m.json:1:40: version 2 is not supported: this pipesim reads version 1"},
        row{"m.json", head + R"("devices":0})",
            "m.json:1:52: devices: expected an integer in 1..4096, got '0'"},
        // A name goes to the terminal as it is: an escape sequence in it would run there.
        row{"m.json", head + R"("name":"a\u001b[31mred",)" + shape + ops,
            "m.json:1:49: name: expected text without control characters, got "
            "'a\\x1b[31mred'"},
        row{"m.json", head + R"("name":"a\u009b31mred",)" + shape + ops,
            "m.json:1:49: name: expected text without control characters, got "
            "'a\\u009b31mred'"},
        row{"m.json", head + R"("name":"a\u2028b",)" + shape + ops,
            "m.json:1:49: name: expected text without control characters, got "
            "'a\\u2028b'"},
        row{"m.json", head + R"("devices":"four"})",
            "m.json:1:52: devices: expected an integer in 1..4096, got '\"four\"'"},
        row{"m.json", head + R"("devices":2,"microbatches":1000000000000})",
            "m.json:1:69: microbatches: expected an integer in 1..1048576, got '1000000000000'"},
        row{"m.json", head + R"("devices":2,"microbatches":1,"chunks":2.0})",
            "m.json:1:80: chunks: expected an integer in 1..64, got '2.0'"},
        row{"m.json", head + R"("devices":2,"microbatches":1,"chunks":1})",
            "m.json:1:1: missing placement: expected \"looped\", \"v-shape\" or an array of "
            "device numbers"},
        row{"m.json", head + R"("devices":2,"microbatches":1,"chunks":1,"placement":"zigzag"})",
            "m.json:1:94: placement: expected \"looped\", \"v-shape\" or an array of p·v = 2 "
            "device numbers, got '\"zigzag\"'"},
        row{"m.json", head + R"("devices":2,"microbatches":1,"chunks":3,"placement":"v-shape"})",
            "m.json:1:94: v-shape placement needs an even number of chunks, got chunks = 3"},
        row{"m.json", head + R"("devices":2,"microbatches":1,"chunks":1,"placement":[0,1,0]})",
            "m.json:1:94: placement: expected at most 2 elements, got 3"},
        row{"m.json", head + R"("devices":2,"microbatches":1,"chunks":1,"placement":[0,5]})",
            "m.json:1:97: placement[1]: expected an integer in 0..1, got '5'"},
        row{"m.json", head + shape + R"("device_ops":"F0:0"})",
            "m.json:1:116: device_ops: expected an array, got '\"F0:0\"'"},
        row{"m.json", head + shape + R"("device_ops":["F0:0 F0:1 BW0:1 BW0:0"]})",
            "m.json:1:116: device_ops: expected 2 op strings, one per device, got 1"},
        // Ops are separated by whitespace; an escaped NUL is not whitespace.
        row{"m.json", head + shape + R"("device_ops":["F0:0\u0000 BW0:0","F0:1 BW0:1"]})",
            "m.json:1:118: expected an op like F3:1 (pass F, B, W or BW, microbatch, ':', "
            "stage), got 'F0:0\\x00'"},
        row{"m.json", head + shape + R"("device_ops":["F0:0 X0:0","F0:1 BW0:1"]})",
            "m.json:1:123: expected an op like F3:1 (pass F, B, W or BW, microbatch, ':', "
            "stage), got 'X0:0'"},
        row{"m.json", head + shape + R"("device_ops":["F0:0 BW0","F0:1 BW0:1"]})",
            "m.json:1:123: expected an op like F3:1"},
        row{"m.json", head + shape + R"("device_ops":["F0:0 BW7:0","F0:1 BW0:1"]})",
            "m.json:1:123: 'BW7:0': microbatch '7' is outside 0..0"},
        // The whole number, not its first digit and "...".
        row{"m.json",
            head + shape + R"("device_ops":["F0:0 BW99999999999999999999:0","F0:1 BW0:1"]})",
            "m.json:1:123: 'BW99999999999999999999:0': microbatch '99999999999999999999' is "
            "outside 0..0"},
        row{"m.json", head + shape + R"("device_ops":["F0:0 BW0:2","F0:1 BW0:1"]})",
            "m.json:1:123: 'BW0:2': stage '2' is outside 0..1"},
        row{"m.json", head + shape + "\"device_ops\":[\"F0:0\\tBW0:1\",\"F0:1 BW0:0\"]}",
            "m.json:1:124: invalid schedule: device 0 position 1: BW(mb 0, stage 1) belongs on "
            "device 1"},
        row{"m.json", head + shape + R"("device_ops":["F0:0","F0:1 BW0:1"]})",
            "m.json: invalid schedule: BW(mb 0, stage 0) is missing (it belongs on device 0)"},
        row{"m.json", head + shape + R"("device_ops":["BW0:0 F0:0","F0:1 BW0:1"]})",
            "m.json:1:118: invalid schedule: device 0 position 0: BW(mb 0, stage 0) needs F(mb "
            "0, stage 0), which device 0 runs later in its order"},
        row{"m.json",
            head + R"("devices":2,"microbatches":1048576,"chunks":1,"placement":)"
                   R"("looped","device_ops":["F0:0 BW0:0","F0:1 BW0:1"]})",
            "m.json: the file lists 4 ops, but 1048576 microbatches × 2 stages need at least "
            "4194304"},
        // A deadlock that only an F&B pair causes, named at the pair's F.
        row{"m.json",
            head + R"("devices":2,"microbatches":2,"chunks":1,"placement":"looped",)"
                   R"("device_ops":["F0:0 F1:0 BW0:0 BW1:0","F0:1 F1:1 BW0:1 BW1:1"],)"
                   R"("fb_pairs":[[1],[]]})",
            "m.json:1:123: invalid schedule: deadlock: device 0 at positions 1 and 2 (the F&B "
            "pair F(mb 1, stage 0) BW(mb 0, stage 0)) waits for BW(mb 0, stage 1) on device 1; "
            "device 1 at position 1 (F(mb 1, stage 1)) waits for F(mb 1, stage 0) on device 0, "
            "which closes the cycle"},
        row{"m.json", head + R"("name":")" + std::string(300, 'x') + "\"}",
            "m.json:1:49: name: expected a string of at most 256 bytes, got 300"},
        // --- PyTorch CSV ---
        row{"t.csv", "", "t.csv: empty file: expected one row of actions per rank"},
        row{"t.csv", "0F0,0X0",
            "t.csv:1:5: expected an action like 2F0 (stage, then F, I, B, "
            "W, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD or "
            "REDUCE_GRAD, then microbatch), got '0X0'"},
        row{"t.csv", "F0,0B0", "t.csv:1:1: expected an action like 2F0"},
        row{"t.csv", "0F0,0B",
            "t.csv:1:5: expected a microbatch number after '0B': compute "
            "actions name their microbatch"},
        row{"t.csv", "0F0,0B0x",
            "t.csv:1:5: unexpected 'x' after action '0B0' (PyTorch's "
            "loader would silently drop it)"},
        row{"t.csv", "0F0,0B99999999999",
            "t.csv:1:5: microbatch number '99999999999' is over "
            "the limit of 1048575"},
        row{"t.csv", "0F0,0OVERLAP_F_B0", "t.csv:1:5: expected an action like 2F0"},
        // Communication actions agree with the compute actions: the rank's own stage, a
        // microbatch for a send or receive and none for a whole-stage action.
        row{"t.csv", "0F0,9SEND_F0,0B0\n1F0,1B0",
            "t.csv:1:5: '9SEND_F0' is for stage 9, which no compute action runs (stages 0..1)"},
        row{"t.csv", "0F0,1SEND_F0,0B0\n1F0,1B0",
            "t.csv:1:5: '1SEND_F0' on rank 0 is for stage 1, which runs on rank 1"},
        row{"t.csv", "0F0,0UNSHARD7,0B0\n1F0,1B0",
            "t.csv:1:5: '0UNSHARD7': UNSHARD acts on the stage as a whole and names no "
            "microbatch (PyTorch writes 0UNSHARD)"},
        row{"t.csv", "0F0,0SEND_F,0B0\n1F0,1B0",
            "t.csv:1:5: expected a microbatch number after '0SEND_F': SEND_F names the "
            "microbatch it moves"},
        row{"t.csv", "0F0,0B0\n1F0,(1RECV_B3;1B0)OVERLAP_F_B",
            "t.csv:2:6: '1RECV_B3' moves microbatch 3, but the compute actions run "
            "microbatches 0..0"},
        row{"t.csv", "(0F0;0B0)F",
            "t.csv:1:1: expected OVERLAP_F_B after a parenthesized "
            "group, got 'F' (PyTorch runs only OVERLAP_F_B groups)"},
        row{"t.csv", "0F0,( ; )OVERLAP_F_B,0B0",
            "t.csv:1:5: expected actions inside the OVERLAP_F_B group, got none"},
        row{"t.csv", "0F0,\"0B0\n", "t.csv:1:5: unterminated quoted cell: expected a closing '\"'"},
        row{"t.csv", std::string("0F0,0B0\n1F\0", 11), "t.csv:2:3: unexpected NUL byte"},
        row{"t.csv", "0F0,1B0\n1F0,0B0",
            "t.csv:2:1: stage 1 runs on rank 1 here but on rank 0 "
            "at line 1, column 5: a stage belongs to one rank"},
        row{"t.csv", "0F0,0B0\n2F0,2B0",
            "t.csv: stage 1 runs on no rank, but stage 2 does: "
            "stages must be numbered 0..2 without gaps"},
        row{"t.csv", "0F0,2F0,2B0,0B0\n1F0,1B0",
            "t.csv:1:1: rank 0 runs 2 stages, but 3 stages over 2 ranks needs the same number on "
            "every rank"},
        row{"t.csv", "0B0,0F0",
            "t.csv:1:1: invalid schedule: device 0 position 0: BW(mb 0, "
            "stage 0) needs F(mb 0, stage 0), which device 0 runs later"},
        row{"t.csv", "0F0,0F1,0B0", "t.csv: invalid schedule: BW(mb 1, stage 0) is missing"},
        row{"t.csv", "0F0,0I0", "t.csv: invalid schedule: W(mb 0, stage 0) is missing"},
        row{"t.csv", "0F0,0B0,0F0",
            "t.csv:1:9: invalid schedule: device 0 position 2: F(mb 0, "
            "stage 0) appears twice"},
        row{"t.csv", "0F0,1B0,1F0,0B0\n2F0,3F0,3B0,2B0",
            "t.csv:1:5: invalid schedule: device 0 position 1: BW(mb 0, stage 1) needs F(mb 0, "
            "stage 1), which device 0 runs later in its order"},
        row{"t.csv", "0F0,,1F0\n1B0",
            "t.csv:2:1: stage 1 runs on rank 1 here but on rank 0 at "
            "line 1, column 6"},
        row{"t.csv", "0F0," + std::string(200000, ' '),
            "t.csv:1:5: cell longer than 131072 bytes, Python's csv field limit"},
    }));
    CAPTURE(file, text.substr(0, 200));
    CHECK_THAT(message_of(file, text), Catch::StartsWith(expected));
}

TEST_CASE("an error late in a large schedule file is located as in a small one", "[files]") {
    // 1F1B (one rank for line.csv: 4000 cells on one line) with its last op replaced by `op`.
    using row = std::tuple<std::string, int, int, std::string, std::string>;
    auto [file, p, m, op,
          expected] = GENERATE(table<std::string, int, int, std::string, std::string>({
        row{"big.json", 16, 256, "Q1:1",
            "expected an op like F3:1 (pass F, B, W or BW, microbatch, ':', stage), got 'Q1:1'"},
        row{"big.json", 16, 256, "F0:0",
            "invalid schedule: device 15 position 511: F(mb 0, stage 0) belongs on device 0"},
        row{"line.csv", 1, 2000, "0X1", "expected an action like 2F0"},
        row{"rows.csv", 16, 256, "0F0",
            "stage 0 runs on rank 15 here but on rank 0 at line 1, column 1: a stage belongs "
            "to one rank"},
        row{"rows.csv", 16, 256, "15F0",
            "invalid schedule: device 15 position 511: F(mb 0, stage 15) appears twice (first "
            "at position 0)"},
    }));
    CAPTURE(file, op);
    const Schedule schedule = generate_schedule("1f1b", GeneratorOptions{p, m, 1, 0});
    const bool csv = file.ends_with(".csv");
    std::string text = csv ? schedule_to_pytorch_csv(schedule) : schedule_to_json(schedule);
    REQUIRE(message_of(file, text) == "accepted");
    const std::size_t end = text.rfind(csv ? '\n' : '"');
    const std::size_t at = text.rfind(csv ? ',' : ' ', end - 1) + 1;
    text.replace(at, end - at, op);
    // Where the plain scan from the start of the file puts it.
    const TextPosition where = position_at(text, at);
    CHECK_THAT(
        message_of(file, text),
        Catch::StartsWith(fmt::format("{}:{}:{}: {}", file, where.line, where.column, expected)));
}

TEST_CASE("a file with more rows than ranks allowed stops at the first extra row", "[files]") {
    std::string text;
    for (int r = 0; r < 4097; ++r)
        text += "0F0\n";
    CHECK(message_of("rows.csv", text) ==
          "rows.csv:4097:1: more than 4096 rows: expected one row per rank, at most 4096");
}

TEST_CASE("a claimed 10^12 microbatches or 10^9 stages allocates nothing", "[files]") {
    CHECK_THAT(message_of("big.csv", "0F999999999999"),
               Catch::StartsWith("big.csv:1:1: microbatch number '999999999999' is over"));
    CHECK_THAT(message_of("big.csv", "999999999F0"),
               Catch::StartsWith("big.csv:1:1: stage number '999999999F0' is over the limit of "
                                 "262143"));
    // In range, but the ops do not back the claim: refused before validation allocates.
    CHECK_THAT(message_of("big.csv", "0F1048575,0B1048575"),
               Catch::StartsWith("big.csv: the file lists 2 ops, but 1048576 microbatches"));
}
