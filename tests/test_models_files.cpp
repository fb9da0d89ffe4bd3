// Model JSON and calibration files: parsing, messages with file:line:column, calibrated costs.
#include <string>

#include <catch2/catch.hpp>

#include "models/cost_model.hpp"
#include "models/gpu_json.hpp"
#include "models/model_json.hpp"
#include "models/presets.hpp"

using namespace pipesim::models;

TEST_CASE("a model JSON file gives the same config as the equivalent preset", "[models]") {
    const TransformerConfig c = parse_model_json(R"({
        "name": "my-llama",
        "layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 11008, "vocab": 32000,
        "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm", "linear_bias": false,
        "learned_positions": false, "tied_embeddings": false, "dropout": false
    })",
                                                 "my.json");
    CHECK(c.name == "my-llama");
    CHECK(total_params(c) == total_params(find_model("llama2-7b")));
}

TEST_CASE("a model JSON file can start from a preset", "[models]") {
    const TransformerConfig c =
        parse_model_json(R"({"base": "llama3-8b", "layers": 16})", "half.json");
    CHECK(c.name == "llama3-8b-custom");
    CHECK(c.layers == 16);
    CHECK(c.kv_heads == 8);
    CHECK(c.vocab == 128256);
}

TEST_CASE("malformed model JSON names the file, line and column", "[models]") {
    auto [text, message] = GENERATE(table<std::string, std::string>({
        {"{\n  \"layers\": 4,\n  \"hidden\": ,\n}",
         "m.json:3:13: invalid JSON: syntax error while parsing value"},
        {"{\n  \"layers\": 4,\n  \"hiden\": 64\n}",
         "m.json:3:3: unknown key 'hiden' in the document (known: format, version, name, "},
        {"{\"layers\": \"four\", \"hidden\": 64, \"heads\": 2, \"vocab\": 10}",
         "m.json:1:12: layers: expected an integer in 1..10000, got '\"four\"'"},
        {"{\"layers\": 2, \"hidden\": 64, \"heads\": 2}",
         "m.json:1:1: missing required field 'vocab'"},
        {"{\"layers\": 2, \"hidden\": 64, \"heads\": 3, \"vocab\": 10}",
         "m.json:1:1: model 'custom': heads (3) must divide hidden (64)"},
        {"{\"base\": \"gpt-4\"}", "m.json:1:10: unknown model 'gpt-4' (known: "},
        {"{\"layers\": 2, \"hidden\": 64, \"heads\": 2, \"vocab\": 10, \"mlp\": \"relu\"}",
         "m.json:1:61: mlp: expected one of gelu, swiglu, got '\"relu\"'"},
        {"[1, 2]", "m.json:1:1: the document: expected an object, got '[1,2]'"},
        {"{\"format\": \"pipesim-schedule\", \"base\": \"zb-1.5b\"}",
         "m.json:1:12: format: expected \"pipesim-model\", got '\"pipesim-schedule\"'"},
    }));
    INFO(text);
    CHECK_THROWS_WITH(parse_model_json(text, "m.json"), Catch::StartsWith(message));
}

TEST_CASE("model files beyond the documented limits are refused with a short message", "[models]") {
    auto [text, message] = GENERATE(table<std::string, std::string>({
        {R"({"base": "zb-1.5b", "layers": 2000000000})",
         "m.json:1:31: layers: expected an integer in 1..10000, got '2000000000'"},
        {R"({"base": "zb-1.5b", "hidden": 1048576})",
         "m.json:1:31: hidden: expected an integer in 1..262144"},
        {R"({"base": "zb-1.5b", "vocab": 8388608})",
         "m.json:1:30: vocab: expected an integer in 1..4194304"},
        {R"({"base": "zb-1.5b", "seq_len": 2097152})",
         "m.json:1:32: seq_len: expected an integer in 1..1048576"},
        {R"({"base": "zb-1.5b", "heads": 8192})",
         "m.json:1:30: heads: expected an integer in 1..4096"},
        {R"({"base": "zb-1.5b", "layers": 4, "layers": 8})",
         "m.json:1:34: key 'layers' appears twice"},
        {"{\"bad\\u001b[31m\": 1}", "m.json:1:2: unknown key 'bad\\x1b[31m'"},
        {"{\"name\": \"a\\u0007b\"}", "m.json:1:10: name: expected text without control"},
        // An empty name printed "model  (1.07B params)".
        {R"({"base": "zb-1.5b", "name": ""})", "m.json:1:29: name: expected a name, got \"\""},
        // A preset's name on another shape printed as that preset in every report.
        {R"({"base": "zb-1.5b", "layers": 4, "name": "llama2-7b"})",
         "m.json:1:42: name: 'llama2-7b' is a preset's name (pipesim list); a model file names "
         "its own model, e.g. 'llama2-7b-custom'"},
    }));
    INFO(text);
    CHECK_THROWS_WITH(parse_model_json(text, "m.json"), Catch::StartsWith(message));
}

TEST_CASE("deeply nested model JSON is refused without recursing into it", "[models]") {
    const std::string deep(200'000, '[');
    CHECK_THROWS_WITH(parse_model_json(deep, "m.json"),
                      Catch::StartsWith("m.json:1:") && Catch::Contains("nesting deeper than"));
    std::string huge_value = "{\"name\": [1";
    for (int i = 0; i < 100'000; ++i)
        huge_value += ",1";
    huge_value += "]}";
    const auto long_message = [&] {
        try {
            parse_model_json(huge_value, "m.json");
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    }();
    CHECK(!long_message.empty());
    CHECK(long_message.size() < 200);
}

TEST_CASE("resolve_model reads files and names unreadable ones", "[models]") {
    CHECK(resolve_model("gpt3-175b").layers == 96);
    CHECK_THROWS_WITH(resolve_model("/nonexistent/model.json"),
                      Catch::StartsWith("/nonexistent/model.json: cannot read"));
    const TransformerConfig c =
        resolve_model(std::string(PIPESIM_SOURCE_DIR) + "/docs/examples/model-llama-like.json");
    CHECK(c.name == "llama-like-1b");
}

namespace {

// One H100 calibration entry for the zb-1.5b layer at b = 1, s = 1024.
std::string calibration_text(double f, double b, double w) {
    return R"({
  "format": "pipesim-calibration",
  "version": 1,
  "gpu": "h100-sxm",
  "device": "NVIDIA H100 80GB HBM3",
  "layers": [
    {"hidden": 2304, "heads": 24, "seq_len": 1024, "microbatch": 1,
     "forward": )" +
           std::to_string(f) + R"(, "backward_input": )" + std::to_string(b) +
           R"(, "backward_weight": )" + std::to_string(w) + "}\n  ]\n}\n";
}

Workload one_sequence() {
    Workload w;
    w.seq_len = 1024;
    return w;
}

}  // namespace

TEST_CASE("a calibrated layer uses the measured times for its exact shape", "[models]") {
    const Calibration cal = parse_calibration(calibration_text(0.001, 0.0012, 0.0009), "c.json");
    REQUIRE(cal.layers.size() == 1);
    CHECK(cal.layers[0].kv_heads == 24);
    CHECK(cal.layers[0].ffn_hidden == 4 * 2304);
    const CalibratedCostModel model(find_gpu("h100-sxm"), cal);
    const PassTimes t = model.layer(find_model("zb-1.5b"), one_sequence());
    CHECK(t.forward == 0.001);
    CHECK(t.backward_input == 0.0012);
    CHECK(t.backward_weight == 0.0009);
    Workload full = one_sequence();
    full.recompute = Recompute::full;
    CHECK(model.layer(find_model("zb-1.5b"), full).backward_input == Approx(0.0022));
}

TEST_CASE("other shapes use the efficiency measured in the calibration file", "[models]") {
    const TransformerConfig& c = find_model("zb-1.5b");
    const PassFlops f = layer_flops(c, one_sequence());
    const double peak = find_gpu("h100-sxm").peak_bf16_flops;
    // Times that correspond to 60 %, 50 % and 40 % of the peak.
    const Calibration cal = parse_calibration(
        calibration_text(f.forward / (0.6 * peak), f.backward_input / (0.5 * peak),
                         f.backward_weight / (0.4 * peak)),
        "c.json");
    const CalibratedCostModel model(find_gpu("h100-sxm"), cal);
    Workload longer = one_sequence();
    longer.microbatch = 4;  // not in the file
    const PassFlops g = layer_flops(c, longer);
    const PassTimes t = model.layer(c, longer);
    // std::to_string keeps 6 decimals, so the measured times are rounded to 1 µs.
    CHECK(t.forward == Approx(g.forward / (0.6 * peak)).epsilon(2e-3));
    CHECK(t.backward_input == Approx(g.backward_input / (0.5 * peak)).epsilon(2e-3));
    CHECK(t.backward_weight == Approx(g.backward_weight / (0.4 * peak)).epsilon(2e-3));
}

TEST_CASE("a calibration file for another GPU is refused", "[models]") {
    const Calibration cal = parse_calibration(calibration_text(0.001, 0.001, 0.001), "c.json");
    CHECK_THROWS_WITH(CalibratedCostModel(find_gpu("a100-80gb"), cal),
                      "c.json: the calibration file was measured on 'h100-sxm', not on the "
                      "chosen GPU 'a100-80gb'");
}

TEST_CASE("a GPU file based on the calibration's GPU takes its measured times", "[models]") {
    // The file's rates differ from the preset's; a layer the calibration measured keeps the
    // measured times, and other shapes are timed at the measured efficiencies of its peak.
    const GpuSpec mine = parse_gpu_json(
        R"({"name": "h100-mine", "base": "h100-sxm", "gemm_efficiency": 0.5})", "g.json");
    const TransformerConfig& c = find_model("zb-1.5b");
    const PassFlops f = layer_flops(c, one_sequence());
    const double peak = mine.peak_bf16_flops;
    const Calibration cal = parse_calibration(
        calibration_text(f.forward / (0.6 * peak), f.backward_input / (0.5 * peak),
                         f.backward_weight / (0.4 * peak)),
        "c.json");
    const CalibratedCostModel model(mine, cal);
    CHECK(model.layer(c, one_sequence()).forward == cal.layers[0].times.forward);
    Workload longer = one_sequence();
    longer.microbatch = 4;
    CHECK(model.layer(c, longer).backward_weight ==
          Approx(layer_flops(c, longer).backward_weight / (0.4 * peak)).epsilon(2e-3));
    // A GPU file based on another preset is other hardware.
    const GpuSpec other = parse_gpu_json(R"({"name": "a100-mine", "base": "a100-80gb"})", "g.json");
    CHECK_THROWS_WITH(CalibratedCostModel(other, cal),
                      "c.json: the calibration file was measured on 'h100-sxm', not on the "
                      "chosen GPU 'a100-mine' (a GPU file based on 'a100-80gb')");
}

// calibration_text() with the first `from` replaced by `to`.
std::string calibration_with(const std::string& from, const std::string& to) {
    std::string text = calibration_text(0.001, 0.001, 0.001);
    return text.replace(text.find(from), from.size(), to);
}

TEST_CASE("a misspelt key in a calibration file is refused, not left at its default", "[models]") {
    // "ffn_hiden" once left ffn_hidden at 4·hidden, so that the entry matched no layer and the
    // analytic model ran instead, with nothing said.
    CHECK_THROWS_WITH(
        parse_calibration(calibration_with("\"seq_len\"", "\"ffn_hiden\": 11008, \"seq_len\""),
                          "c.json"),
        Catch::StartsWith("c.json:7:35: unknown key 'ffn_hiden' in layers[0]"));
    CHECK_THROWS_WITH(parse_calibration(calibration_with("\"device\"", "\"devices\""), "c.json"),
                      Catch::StartsWith("c.json:5:3: unknown key 'devices' in the document"));
    // What `pipesim calibrate` records of how it measured is read past.
    std::string recorded = calibration_with(
        "\"layers\"", "\"measured\": {\"tool\": \"pipesim calibrate\"}, \"layers\"");
    recorded.replace(recorded.find("\"seq_len\""), 9,
                     "\"tflops\": {\"forward\": 1}, \"kernels\": [], \"seq_len\"");
    CHECK(parse_calibration(recorded, "c.json").layers.size() == 1);
}

TEST_CASE("a calibration layer whose heads do not divide says which rule and the values",
          "[models]") {
    CHECK_THROWS_WITH(
        parse_calibration(calibration_with("\"heads\": 24", "\"heads\": 30"), "c.json"),
        Catch::EndsWith("heads must divide hidden: 30 heads, hidden 2304"));
    CHECK_THROWS_WITH(
        parse_calibration(calibration_with("\"heads\": 24", "\"heads\": 24, \"kv_heads\": 64"),
                          "c.json"),
        Catch::EndsWith("kv_heads must divide heads: 64 kv_heads, 24 heads"));
    // A tp the layer cannot be split over was read, and its efficiencies applied.
    CHECK_THROWS_WITH(
        parse_calibration(calibration_with("\"heads\": 24", "\"heads\": 24, \"tp\": 5"), "c.json"),
        Catch::StartsWith("c.json:7:41: ") &&
            Catch::EndsWith("tp 5 does not divide the layer's heads (24)"));
    CHECK_THROWS_WITH(
        parse_calibration(
            calibration_with("\"heads\": 24", "\"heads\": 24, \"kv_heads\": 2, \"tp\": 4"),
            "c.json"),
        Catch::EndsWith("tp 4 does not divide the layer's kv_heads (2)"));
    CHECK(parse_calibration(calibration_with("\"heads\": 24", "\"heads\": 24, \"tp\": 8"), "c.json")
              .layers.front()
              .tp == 8);
}

TEST_CASE("malformed calibration files name the file, line and column", "[models]") {
    std::string bad_time = calibration_text(0.001, 0.001, 0.001);
    bad_time.replace(bad_time.find("\"backward_weight\": 0.001000"),
                     std::string("\"backward_weight\": 0.001000").size(),
                     "\"backward_weight\": -1");
    CHECK_THROWS_WITH(
        parse_calibration(bad_time, "c.json"),
        Catch::StartsWith("c.json:8:") &&
            Catch::Contains(
                "'backward_weight' must be a time in seconds > 0 and ≤ 3600, got '-1'"));
    std::string bad_gpu = calibration_text(0.001, 0.001, 0.001);
    bad_gpu.replace(bad_gpu.find("h100-sxm"), 8, "tpu-v5");
    CHECK_THROWS_WITH(parse_calibration(bad_gpu, "c.json"),
                      Catch::StartsWith("c.json:4:10: unknown GPU 'tpu-v5'"));
    CHECK_THROWS_WITH(parse_calibration(R"({"format": "pipesim-calibration", "version": 1,
        "gpu": "h200", "layers": []})",
                                        "c.json"),
                      "c.json:2:34: 'layers' must be a non-empty array of measured layer shapes");
    CHECK_THROWS_WITH(parse_calibration("{\"format\": \"other\"}", "c.json"),
                      "c.json:1:12: format: expected \"pipesim-calibration\", got '\"other\"'");
}

TEST_CASE("a calibration time below what the GPU's peak allows is refused", "[models]") {
    // Counted by hand: zb-1.5b's layer shape (h 2304, GPT MLP of 4h) has 12h² weights, whose
    // GEMMs take 2·s·b FLOPs each per pass: 24 · 1024 · 2304² = 130.46 GFLOP, 0.13186 ms at
    // the H100's 989.4 TFLOP/s. 1e-300 s once gave an MFU of 445 %.
    CHECK_THROWS_WITH(parse_calibration(calibration_text(0.0001, 0.001, 0.001), "c.json"),
                      Catch::StartsWith("c.json:8:17:") &&
                          Catch::Contains("'forward' 0.0001 s is faster than the GPU can be: "
                                          "the layer's GEMMs alone (130.5 GFLOP) take 0.1319 ms "
                                          "at the h100-sxm peak (989.4 TFLOP/s) on 1 GPU"));
    CHECK_THROWS_WITH(parse_calibration(calibration_text(0.001, 0.001, 0.000131), "c.json"),
                      Catch::Contains("'backward_weight' 0.000131 s is faster"));
    CHECK(
        parse_calibration(calibration_text(0.000132, 0.000132, 0.000132), "c.json").layers.size() ==
        1);
}

TEST_CASE("calibration files beyond the documented limits are refused", "[models]") {
    std::string many = R"({"format": "pipesim-calibration", "version": 1, "gpu": "h100-sxm",
        "layers": [)";
    for (int i = 0; i < 10'001; ++i)
        many += std::string(i ? "," : "") + "{}";
    many += "]}";
    CHECK_THROWS_WITH(parse_calibration(many, "c.json"),
                      "c.json:2:19: layers: expected at most 10000 elements, got 10001");
    std::string dup = calibration_text(0.001, 0.001, 0.001);
    dup.replace(dup.find("\"heads\""), 7, "\"hidden\"");
    CHECK_THROWS_WITH(parse_calibration(dup, "c.json"),
                      Catch::StartsWith("c.json:7:") && Catch::Contains("appears twice"));
    CHECK_THROWS_WITH(parse_calibration(std::string(200'000, '['), "c.json"),
                      Catch::Contains("nesting deeper than"));
}

TEST_CASE("the documented calibration example parses", "[models]") {
    const Calibration cal =
        load_calibration(std::string(PIPESIM_SOURCE_DIR) + "/docs/examples/calibration-h100.json");
    CHECK(cal.gpu == "h100-sxm");
    CHECK(cal.layers.size() == 2);
    CHECK_NOTHROW(CalibratedCostModel(find_gpu("h100-sxm"), cal));
}
