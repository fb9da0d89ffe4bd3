// On a GPU only (tag [.gpu], hidden; calibration/device_check.sh runs them): every kernel
// against the CPU reference, a small calibration and a small gpu-run.
#include <cmath>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "calibration/gpu.hpp"
#include "calibration/layer_shape.hpp"
#include "calibration/stream_plan.hpp"
#include "schedules/registry.hpp"

using namespace pipesim;
using namespace pipesim::calibration;

namespace {

models::TransformerConfig small_model() {
    models::TransformerConfig c;
    c.name = "small";
    c.layers = 4;
    c.hidden = 512;
    c.heads = 8;
    c.vocab = 1;
    c.seq_len = 256;
    return c;
}

}  // namespace

TEST_CASE("every layer kernel matches the CPU reference within 1e-2", "[.gpu]") {
    const std::vector<KernelCheck> checks = check_kernels(0);
    std::set<std::string> names;
    for (const KernelCheck& k : checks) {
        WARN(k.name << ": relative error " << k.relative_error);
        CHECK(std::isfinite(k.relative_error));
        CHECK(k.passed());
        names.insert(k.name);
    }
    // GPT unfused: 35 kernels, fused 29; Llama (no bias kernels, rotary twice): 32 and 26.
    CHECK(checks.size() == 35u + 29 + 32 + 26);
    for (const char* name :
         {"gpt-unfused F bias_gelu", "gpt-fused F flash", "gpt-fused B flash",
          "llama-unfused B attn_dk", "llama-unfused F rotary", "llama-fused B rotary",
          "llama-fused F flash", "llama-fused B flash", "llama-fused F swiglu",
          "llama-fused B swiglu", "llama-fused W rmsnorm1"})
        CHECK(names.count(name) == 1);
}

TEST_CASE("a Llama-style layer calibrates with the fused attention", "[.gpu]") {
    CalibrateOptions o;
    o.config = small_model();
    o.config.kv_heads = 2;
    o.config.ffn_hidden = 1024;
    o.config.mlp = models::Mlp::swiglu;
    o.config.norm = models::Norm::rmsnorm;
    o.config.linear_bias = false;
    o.config.learned_positions = false;
    o.workload.microbatch = 2;
    o.gpu = "h200";
    o.timing = {2, 5, 2};
    const CalibrationRecord r = calibrate(o, [](int, int, std::string_view) {});
    REQUIRE(r.layers.size() == 1);
    CHECK(r.layers[0].entry.attention == models::AttentionKernel::fused);
    CHECK(r.layers[0].entry.times.forward > 0);
    CHECK(r.layers[0].entry.times.backward_input > r.layers[0].entry.times.forward * 0.5);
}

TEST_CASE("a calibration measures positive times that add up", "[.gpu]") {
    CalibrateOptions o;
    o.config = small_model();
    o.workload.microbatch = 2;
    o.gpu = "h200";
    o.timing = {2, 5, 2};
    const CalibrationRecord r = calibrate(o, [](int, int, std::string_view) {});
    REQUIRE(r.layers.size() == 1);
    const LayerMeasurement& m = r.layers[0];
    CHECK(m.entry.times.forward > 0);
    CHECK(m.entry.times.backward_input > 0);
    CHECK(m.entry.times.backward_weight > 0);
    double sum_f = 0;
    for (const KernelTime& k : m.kernels)
        if (k.pass == Pass::F) sum_f += k.seconds;
    // Launch gaps make the whole pass a little longer than its kernels, never much shorter.
    CHECK(m.entry.times.forward > 0.5 * sum_f);
    CHECK(r.copy.bandwidth() > 0);
}

TEST_CASE("a small gpu-run records every op once, in order, without overlap", "[.gpu]") {
    GpuRunOptions o;
    o.config = small_model();
    o.workload.microbatch = 1;
    o.schedule = generate_schedule("zb-h1", {2, 4, 0, 0});
    o.stage_layers = even_stage_layers(4, 2);
    o.mode = RunMode::partitions;
    o.timing = {1, 3, 1};
    const GpuRunResult r = gpu_run(o, [](int, int, std::string_view) {});
    REQUIRE(r.measured.device_ops.size() == 2);
    for (std::size_t d = 0; d < 2; ++d) {
        const auto& ops = r.measured.device_ops[d];
        REQUIRE(ops.size() == o.schedule.device_ops[d].size());
        for (std::size_t i = 0; i < ops.size(); ++i) {
            CHECK(ops[i].op == o.schedule.device_ops[d][i]);
            CHECK(ops[i].end > ops[i].start);
            if (i > 0) CHECK(ops[i].start >= ops[i - 1].end - 1e-6);
        }
    }
    CHECK(r.measured.transfers.size() == 2u * 4);
}
