// Calibration files as `pipesim calibrate` writes them, read back by models/.
#include <filesystem>

#include <catch2/catch.hpp>

#include "calibration/calibration_file.hpp"
#include "calibration/layer_shape.hpp"
#include "models/cost_model.hpp"
#include "models/gpu.hpp"
#include "models/presets.hpp"

using namespace pipesim;
using namespace pipesim::calibration;

namespace {

// A record for zb-1.5b at b = 6, s = 1024 with the unfused attention, as calibrate would
// fill it in.
CalibrationRecord sample_record() {
    const models::TransformerConfig& c = models::find_model("zb-1.5b");
    models::Workload w;
    w.microbatch = 6;
    w.attention = models::AttentionKernel::unfused;
    const LayerShape shape = layer_shape(c, w);
    LayerMeasurement m;
    m.entry = {c.hidden,
               c.heads,
               c.heads,
               4 * c.hidden,
               models::Mlp::gelu,
               1024,
               6,
               1,
               {0.0061, 0.0072, 0.0049},
               models::AttentionKernel::unfused};
    m.flops = steps_flops(layer_steps(shape));
    for (const KernelStep& k : layer_steps(shape))
        m.kernels.push_back({std::string(k.name), k.pass, 1e-4, k.flops, k.bytes});
    CalibrationRecord r;
    r.gpu = "h200";
    r.model = "zb-1.5b";
    r.method = "median of 30 after 5 warm-up runs, 3 rotating buffer sets";
    r.device = {"NVIDIA H200", 132, 132, 1980, 3201, 150e9, 13000, 13000};
    r.copy = {"device", 2.0 * 1024 * 6 * 2304, 1.2e-5};
    r.layers.push_back(m);
    return r;
}

}  // namespace

TEST_CASE("a calibration file round-trips through the models/ reader", "[calibration]") {
    const CalibrationRecord r = sample_record();
    const std::string text = calibration_json(r).dump(2);
    const models::Calibration cal = models::parse_calibration(text, "calib.json");
    CHECK(cal.gpu == "h200");
    CHECK(cal.device == "NVIDIA H200");
    REQUIRE(cal.layers.size() == 1);
    const models::CalibrationEntry& e = cal.layers[0];
    const models::CalibrationEntry& want = r.layers[0].entry;
    CHECK(e.hidden == want.hidden);
    CHECK(e.heads == want.heads);
    CHECK(e.kv_heads == want.kv_heads);
    CHECK(e.ffn_hidden == want.ffn_hidden);
    CHECK(e.mlp == models::Mlp::gelu);
    CHECK(e.seq_len == 1024);
    CHECK(e.microbatch == 6);
    CHECK(e.tp == 1);
    CHECK(e.times.forward == want.times.forward);
    CHECK(e.times.backward_input == want.times.backward_input);
    CHECK(e.times.backward_weight == want.times.backward_weight);
    CHECK(e.attention == models::AttentionKernel::unfused);
}

TEST_CASE("the file records which attention ran — files without it match either kernel",
          "[calibration]") {
    CalibrationRecord r = sample_record();
    CHECK(calibration_json(r).at("layers").at(0).at("attention") == "unfused");
    r.layers[0].entry.attention = models::AttentionKernel::fused;
    CHECK(calibration_json(r).at("layers").at(0).at("attention") == "fused");
    // The measured times stand only for the attention kernel they were measured with: a file
    // with both kernels at the same shape gives each workload its own.
    CalibrationRecord both = sample_record();  // unfused, F = 6.1 ms
    both.layers.push_back(both.layers[0]);
    both.layers[0].entry.attention = models::AttentionKernel::fused;
    both.layers[0].entry.times.forward = 0.0042;
    models::Workload fused, unfused;
    fused.microbatch = unfused.microbatch = 6;
    unfused.attention = models::AttentionKernel::unfused;
    const models::TransformerConfig& c = models::find_model("zb-1.5b");
    const models::CalibratedCostModel measured(
        models::find_gpu("h200"),
        models::parse_calibration(calibration_json(both).dump(), "b.json"));
    CHECK(measured.layer(c, fused).forward == 0.0042);
    CHECK(measured.layer(c, unfused).forward == 0.0061);
    // Without "attention" the two entries have one shape, of which only the first would ever
    // be used: refused, naming both.
    nlohmann::ordered_json old = calibration_json(both);
    old["layers"][0].erase("attention");
    old["layers"][1].erase("attention");
    CHECK_THROWS_WITH(models::parse_calibration(old.dump(), "old.json"),
                      Catch::StartsWith("old.json:1:") &&
                          Catch::Contains("layers[1] has the shape of layers[0] (hidden 2304, "
                                          "heads 24, kv_heads 24, ffn_hidden 9216, gelu, "
                                          "seq_len 1024, microbatch 6, tp 1); give each shape "
                                          "once"));
    // An older file (no "attention") matches both kernels.
    old["layers"].erase(1);
    const models::Calibration cal = models::parse_calibration(old.dump(), "old.json");
    CHECK_FALSE(cal.layers[0].attention.has_value());
    const models::CalibratedCostModel any(models::find_gpu("h200"), cal);
    CHECK(any.layer(c, fused).forward == 0.0042);
    CHECK(any.layer(c, unfused).forward == 0.0042);
    // Anything else is refused with the file position.
    old["layers"][0]["attention"] = "flash";
    CHECK_THROWS_WITH(models::parse_calibration(old.dump(2), "bad.json"),
                      Catch::Contains("bad.json:") &&
                          Catch::Contains("'attention' must be fused or unfused, got '\"flash\"'"));
}

TEST_CASE("an entry naming the run's attention wins over one naming none in either order",
          "[calibration]") {
    // The first matching entry won: swapping two entries changed the run's times.
    const CalibrationRecord r = sample_record();  // unfused, F = 6.1 ms
    nlohmann::ordered_json untagged = calibration_json(r).at("layers").at(0);
    untagged.erase("attention");
    untagged["forward"] = 0.0083;
    const models::TransformerConfig& c = models::find_model("zb-1.5b");
    models::Workload unfused, fused;
    unfused.microbatch = fused.microbatch = 6;
    unfused.attention = models::AttentionKernel::unfused;
    for (const bool untagged_first : {true, false}) {
        nlohmann::ordered_json file = calibration_json(r);
        auto& layers = file["layers"];
        layers.insert(untagged_first ? layers.begin() : layers.end(), untagged);
        const models::CalibratedCostModel measured(
            models::find_gpu("h200"), models::parse_calibration(file.dump(), "two.json"));
        CHECK(measured.layer(c, unfused).forward == 0.0061);
        // The fused workload has only the untagged entry.
        CHECK(measured.layer(c, fused).forward == 0.0083);
    }
}

TEST_CASE("the written file carries the kernel breakdown and the device details", "[calibration]") {
    const auto j = calibration_json(sample_record());
    CHECK(j.at("measured").at("partition_sms") == 132);
    CHECK(j.at("measured").at("copy").at("bandwidth").get<double>() ==
          Approx(2.0 * 1024 * 6 * 2304 / 1.2e-5));
    const auto& layer = j.at("layers").at(0);
    models::Workload w;
    w.microbatch = 6;
    w.attention = models::AttentionKernel::unfused;
    CHECK(layer.at("kernels").size() ==
          layer_steps(layer_shape(models::find_model("zb-1.5b"), w)).size());
    CHECK(layer.at("kernels").at(1).at("name") == "qkv");
    CHECK(layer.at("kernels").at(1).at("pass") == "F");
    CHECK(layer.at("kernels").at(1).contains("tflops"));
    CHECK(layer.at("kernels").at(0).contains("gb_per_s"));  // ln1, memory-bound
    const double f_flops = sample_record().layers[0].flops.forward;
    CHECK(layer.at("tflops").at("forward").get<double>() == Approx(f_flops / 0.0061 / 1e12));
}

TEST_CASE("a written calibration file gives the measured times to the cost model",
          "[calibration]") {
    const auto path = std::filesystem::temp_directory_path() / "pipesim_test_calibration.json";
    write_calibration_file(sample_record(), path.string());
    const models::CalibratedCostModel model(models::find_gpu("h200"),
                                            models::load_calibration(path.string()));
    std::filesystem::remove(path);
    models::Workload w;
    w.microbatch = 6;
    w.attention = models::AttentionKernel::unfused;
    const models::PassTimes t = model.layer(models::find_model("zb-1.5b"), w);
    CHECK(t.forward == 0.0061);
    CHECK(t.backward_input == 0.0072);
    CHECK(t.backward_weight == 0.0049);
}

TEST_CASE("records models/ could not read back are refused before writing", "[calibration]") {
    CalibrationRecord r = sample_record();
    r.layers[0].entry.times.backward_weight = 0;
    CHECK_THROWS_WITH(calibration_json(r), Catch::Contains("pass times must be > 0"));
    r = sample_record();
    r.gpu = "tpu-v5";
    CHECK_THROWS_WITH(calibration_json(r), Catch::StartsWith("unknown GPU 'tpu-v5'"));
    r = sample_record();
    r.layers.clear();
    CHECK_THROWS_WITH(calibration_json(r), "a calibration needs at least one layer");
}

TEST_CASE("driver device names map to models/ GPU names", "[calibration]") {
    const auto [device, gpu] = GENERATE(table<std::string, std::string>({
        {"NVIDIA H200", "h200"},
        {"NVIDIA H100 80GB HBM3", "h100-sxm"},
        {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
        {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
    }));
    CHECK(gpu_name_for_device(device) == gpu);
    CHECK_THROWS_WITH(gpu_name_for_device("NVIDIA H100 PCIe"),
                      "no known GPU matches the device 'NVIDIA H100 PCIe': give one with --gpu "
                      "(see 'pipesim list')");
    CHECK_THROWS(gpu_name_for_device("Tesla T4"));
}

TEST_CASE("the documented calibration example with a kernel breakdown reads", "[calibration]") {
    const models::Calibration cal = models::load_calibration(
        std::string(PIPESIM_SOURCE_DIR) + "/docs/examples/calibration-h200.json");
    CHECK(cal.gpu == "h200");
    REQUIRE_FALSE(cal.layers.empty());
    CHECK(cal.layers[0].microbatch == 6);
}
