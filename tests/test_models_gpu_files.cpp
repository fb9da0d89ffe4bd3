// GPU files (docs/gpu-format.md): a preset with measured rates, a GPU of its own, refusals
// with the file's line and column, and the rates reaching the model's times.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "analysis/run.hpp"
#include "fileio/files.hpp"
#include "models/gpu_json.hpp"
#include "models/presets.hpp"

using namespace pipesim;
using namespace pipesim::models;
using Catch::Contains;

namespace {

std::string parse_error(const std::string& text) {
    try {
        parse_gpu_json(text, "g.json");
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}

// Every rate a file without a base must give, as an H100 SXM's.
const char* whole_gpu = R"({"name": "h100-copy", "sm_count": 132, "peak_bf16_flops": 989.4e12,
  "memory_bytes": 85520809984, "hbm_bandwidth": 3.35e12, "gemm_efficiency": 0.71,
  "memory_efficiency": 0.9, "attention_forward_efficiency": 0.75,
  "attention_backward_efficiency": 0.55, "tp_bus_bandwidth": 370e9, "nic_bandwidth": 50e9})";

}  // namespace

TEST_CASE("a GPU file changes a preset's rates and keeps the others", "[models][gpu]") {
    const GpuSpec a100 = find_gpu("a100-80gb");
    const GpuSpec g = parse_gpu_json(
        R"({"format": "pipesim-gpu", "version": 1, "base": "a100-80gb", "gemm_efficiency": 0.74,
            "source": "a soaked matmul"})",
        "g.json");
    CHECK(g.name == "a100-80gb-custom");
    CHECK(g.source == "a soaked matmul");
    CHECK(g.gemm_efficiency == 0.74);
    CHECK(g.peak_bf16_flops == a100.peak_bf16_flops);
    CHECK(g.memory_bytes == a100.memory_bytes);
    CHECK(g.sm_count == a100.sm_count);
    CHECK(g.gemm_k_fill == a100.gemm_k_fill);
    CHECK(g.tp_bus_bandwidth == a100.tp_bus_bandwidth);
    CHECK(g.launch_overhead == a100.launch_overhead);
}

TEST_CASE("a GPU file without a base gives every rate", "[models][gpu]") {
    const GpuSpec g = parse_gpu_json(whole_gpu, "g.json");
    CHECK(g.name == "h100-copy");
    CHECK(g.source == "g.json");
    CHECK(g.sm_count == 132);
    CHECK(g.hbm_bandwidth == 3.35e12);
    CHECK(g.launch_overhead == 0);  // optional rates default to none
    CHECK(g.gemm_k_fill == 0);
    CHECK(g.scores_memory_efficiency == 0);  // the unfused attention at memory_efficiency
    const GpuSpec scores =
        parse_gpu_json(R"({"base": "a100-80gb", "scores_memory_efficiency": 0.5})", "s.json");
    CHECK(scores.scores_memory_efficiency == 0.5);
    CHECK(find_gpu("a100-80gb").scores_memory_efficiency > 0);
    CHECK(g.norm_backward_memory_efficiency == 0);  // the norms likewise
    const GpuSpec norms = parse_gpu_json(R"({"base": "a100-80gb",
        "norm_forward_memory_efficiency": 0.7, "norm_backward_memory_efficiency": 0.6,
        "nonpersistent_norm_forward_memory_efficiency": 0.5,
        "nonpersistent_norm_backward_memory_efficiency": 0.4})",
                                         "n.json");
    CHECK(norms.norm_forward_memory_efficiency == 0.7);
    CHECK(norms.norm_backward_memory_efficiency == 0.6);
    CHECK(norms.nonpersistent_norm_forward_memory_efficiency == 0.5);
    CHECK(norms.nonpersistent_norm_backward_memory_efficiency == 0.4);
    // Each required rate, left out, is named.
    for (const char* field :
         {"sm_count", "peak_bf16_flops", "memory_bytes", "hbm_bandwidth", "gemm_efficiency",
          "memory_efficiency", "attention_forward_efficiency", "attention_backward_efficiency",
          "tp_bus_bandwidth", "nic_bandwidth"}) {
        CAPTURE(field);
        std::string text = whole_gpu;
        const std::size_t at = text.find(std::string("\"") + field + "\"");
        REQUIRE(at != std::string::npos);
        const std::size_t end = text.find_first_of(",}", at);
        text.erase(at, end - at + (text[end] == ',' ? 1 : 0));
        if (text.find(", }") != std::string::npos) text.replace(text.find(", }"), 3, "}");
        CHECK_THAT(parse_error(text),
                   Contains(std::string("missing required field '") + field + "'"));
    }
}

TEST_CASE("bad GPU files are refused with the file, line and column", "[models][gpu]") {
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "gemm_eff": 0.5})"),
               Contains("g.json:1:23: unknown key 'gemm_eff'"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "gemm_efficiency": 1.5})"),
               Contains("gemm_efficiency: must be in 1e-06..1, got '1.5'"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "norm_backward_memory_efficiency": 2})"),
               Contains("norm_backward_memory_efficiency: must be in 1e-06..1 (or 0 for none), "
                        "got '2'"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "hbm_bandwidth": 0})"),
               Contains("g.json:1:40: hbm_bandwidth: must be in 1e+06..1e+15, got '0'"));
    // Not a number: the field's range, not the reader's -1e+308..1e+308.
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "memory_efficiency": "high"})"),
               Contains("g.json:1:44: memory_efficiency: must be in 1e-06..1, got '\"high\"'"));
    CHECK_THAT(parse_error(R"({"base": "b300"})"), Contains("g.json:1:10: unknown GPU 'b300'"));
    CHECK_THAT(parse_error(R"({"format": "pipesim-model", "base": "a100-80gb"})"),
               Contains("format: expected \"pipesim-gpu\""));
    // Another pipesim file is named by its format, not by the first key a GPU has not.
    CHECK_THAT(
        parse_error(R"({"format": "pipesim-schedule", "version": 1, "devices": 4})"),
        Contains("g.json:1:12: format: expected \"pipesim-gpu\", got '\"pipesim-schedule\"'"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb",)"), Contains("g.json:1:"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "sm_count": 0})"), Contains("sm_count"));
    // Too small to keep the times finite: refused here, not as "layer costs must be finite"
    // far from this file.
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "peak_bf16_flops": 1e-300})"),
               Contains("g.json:1:42: peak_bf16_flops: must be in 1e+09..1e+18, got '1e-300'"));
    // Above the range: the whole range is named, not a first check's 0..1e+18.
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "peak_bf16_flops": 1e30})"),
               Contains("g.json:1:42: peak_bf16_flops: must be in 1e+09..1e+18, got '1e30'"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "scores_memory_efficiency": 1e-9})"),
               Contains("scores_memory_efficiency: must be in 1e-06..1 (or 0 for none), got "
                        "'1e-9'"));
    // One of the short-K pair alone was read and never used.
    CHECK_THAT(parse_error(R"({"base": "h100-sxm", "gemm_k_fill": 128})"),
               Contains("g.json:1:37: gemm_k_fill 128 and gemm_reference_k 0 (the base's): the "
                        "short-K GEMM falloff needs both above 0, or both 0 for none"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "gemm_k_fill": 0})"),
               Contains("gemm_k_fill 0 and gemm_reference_k 2048 (the base's)"));
    CHECK(parse_gpu_json(R"({"base": "a100-80gb", "gemm_k_fill": 0, "gemm_reference_k": 0})",
                         "g.json")
              .gemm_k_fill == 0);
    // A preset's name on other rates would pass for that GPU (a calibration file's `gpu`) and
    // print as it; an empty one prints as nothing.
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "name": "h100-sxm"})"),
               Contains("g.json:1:31: name: 'h100-sxm' is a preset's name (pipesim list); a GPU "
                        "file names its own GPU, e.g. 'h100-sxm-measured'"));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "name": ""})"),
               Contains("g.json:1:31: name: expected a name, got \"\""));
    CHECK_THAT(parse_error(R"({"base": "a100-80gb", "name": "   "})"),
               Contains("g.json:1:31: name: expected a name, got '   '"));
}

TEST_CASE("a GPU twice as fast in every rate halves the iteration", "[models][gpu][analysis]") {
    // Launch overheads off on both: every kernel's roofline, the TP and gradient collectives
    // and the optimizer step are rates, so doubling every rate halves every time, while the
    // GEMM shapes' tile and wave quantization stays (same SM count).
    const auto dir = std::filesystem::temp_directory_path();
    const std::string pid = std::to_string(::getpid());
    const auto base = dir / ("pipesim_gpu_base_" + pid + ".json");
    const auto fast = dir / ("pipesim_gpu_fast_" + pid + ".json");
    const GpuSpec h = find_gpu("h100-sxm");
    std::ofstream(base) << R"({"base": "h100-sxm", "launch_overhead": 0})";
    std::ofstream(fast) << "{\"base\": \"h100-sxm\", \"launch_overhead\": 0, "
                        << "\"peak_bf16_flops\": " << 2 * h.peak_bf16_flops
                        << ", \"hbm_bandwidth\": " << 2 * h.hbm_bandwidth
                        << ", \"tp_bus_bandwidth\": " << 2 * h.tp_bus_bandwidth
                        << ", \"nic_bandwidth\": " << 2 * h.nic_bandwidth << "}";
    const auto iteration = [&](const std::string& gpu) {
        analysis::PipelineSpec spec;
        spec.schedule = "1f1b";
        spec.generator = GeneratorOptions{2, 4, 0, 0};
        spec.tp = 2;
        spec.dp = 2;
        analysis::ModelSpec m;
        m.model = "llama3-8b";
        m.gpu = gpu;
        spec.costs.model = m;
        const analysis::Analysis a = analysis::run(spec);
        return std::pair{a.iteration_time, a.model->step_time};
    };
    const auto [slow_iteration, slow_step] = iteration(base.string());
    const auto [fast_iteration, fast_step] = iteration(fast.string());
    std::filesystem::remove(base);
    std::filesystem::remove(fast);
    CHECK(fast_iteration == Approx(slow_iteration / 2).epsilon(1e-12));
    CHECK(fast_step == Approx(slow_step / 2).epsilon(1e-12));
    // The preset itself only adds its launch overheads.
    CHECK(iteration("h100-sxm").first > slow_iteration);
}

TEST_CASE("resolve_gpu takes a preset name or a file", "[models][gpu]") {
    CHECK(resolve_gpu("h200").name == "h200");
    CHECK_THROWS_WITH(resolve_gpu("h300"), Contains("unknown GPU 'h300'"));
    CHECK_THROWS_WITH(resolve_gpu("/nonexistent/g.json"), Contains("cannot read"));
    // The extension in any case, as the cluster, calibration and schedule readers take theirs
    // (G.JSON was once "unknown GPU 'G.JSON'").
    CHECK_THROWS_WITH(resolve_gpu("G.JSON"), Contains("G.JSON") && Contains("cannot read"));
    CHECK(pipesim::fileio::names_a_file("model.Json"));
    CHECK(pipesim::fileio::names_a_file("./mycluster"));
    CHECK_FALSE(pipesim::fileio::names_a_file("json"));
    CHECK_FALSE(pipesim::fileio::names_a_file("h100-sxm"));
}
