// Per-layer FLOPs, times, activation memory and communication against closed forms.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "model_workload.hpp"
#include "models/cost_model.hpp"
#include "models/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/pipeline.hpp"
#include "models/presets.hpp"

using namespace pipesim::models;

using pipesim::test::work;

TEST_CASE("GPT layer FLOPs are the Zero Bubble paper's Table 1", "[models]") {
    const TransformerConfig& c = find_model(GENERATE(as<std::string>{}, "zb-1.5b", "gpt3-175b"));
    const int b = GENERATE(1, 4);
    const double s = c.seq_len, h = c.hidden;
    const PassFlops f = layer_flops(c, work(b, c.seq_len));
    CHECK(f.forward == Approx(s * b * h * (24 * h + 4 * s)).epsilon(1e-12));
    CHECK(f.backward_input == Approx(s * b * h * (24 * h + 8 * s)).epsilon(1e-12));
    CHECK(f.backward_weight == Approx(s * b * h * (24 * h)).epsilon(1e-12));
}

TEST_CASE("T_B + T_W = 2 T_F per layer for every preset", "[models]") {
    // In FLOPs B + W = sbh(48h + 8s) = 2F exactly for the GPT shape, and for any shape since
    // the linear part is the same in every pass and attention costs twice as much in B.
    const AnalyticCostModel model(find_gpu("h100-sxm"), 0.45);
    for (const TransformerConfig& c : model_presets()) {
        INFO(c.name);
        const PassTimes t = model.layer(c, work(1, c.seq_len));
        CHECK((t.backward_input + t.backward_weight) / (2 * t.forward) == Approx(1).epsilon(1e-12));
    }
}

TEST_CASE("analytic time is FLOPs over peak times efficiency, divided by t", "[models]") {
    const TransformerConfig& c = find_model("llama2-13b");
    const GpuSpec& gpu = find_gpu("a100-80gb");
    const AnalyticCostModel model(gpu, 0.5);
    const PassFlops f = layer_flops(c, work(2, 4096));
    const PassTimes t1 = model.layer(c, work(2, 4096, 1));
    const PassTimes t4 = model.layer(c, work(2, 4096, 4));
    CHECK(t1.forward == Approx(f.forward / (312e12 * 0.5)).epsilon(1e-12));
    CHECK(t4.backward_weight == Approx(t1.backward_weight / 4).epsilon(1e-12));
}

TEST_CASE("recomputation adds forward work to B only", "[models]") {
    const TransformerConfig& c = find_model("gpt3-175b");
    const AnalyticCostModel model(find_gpu("h200"), 0.4);
    const PassTimes none = model.layer(c, work(1, 2048, 8, true, Recompute::none));
    const PassTimes full = model.layer(c, work(1, 2048, 8, true, Recompute::full));
    const PassTimes selective = model.layer(c, work(1, 2048, 8, true, Recompute::selective));
    CHECK(full.forward == none.forward);
    CHECK(full.backward_weight == none.backward_weight);
    CHECK(full.backward_input == Approx(none.backward_input + none.forward).epsilon(1e-12));
    const double s = 2048, h = c.hidden;
    const double core_seconds = 4 * s * s * h / 8 / (989.4e12 * 0.4);  // 4bs²h per TP rank
    CHECK(selective.backward_input == Approx(none.backward_input + core_seconds).epsilon(1e-12));
}

TEST_CASE("GPT activations are sb(34h + 5as) bytes and 32sbh of them wait for W", "[models]") {
    // Korthikanti et al., 2022, eq. 1–4 and Table 2 (unfused attention); Zero Bubble paper,
    // Table 1.
    const TransformerConfig& c = find_model("gpt3-175b");
    const double s = 2048, h = c.hidden, a = c.heads, b = 2, t = 8;
    const Recompute none = Recompute::none;
    const AttentionKernel unfused = AttentionKernel::unfused;
    SECTION("no parallelism") {
        const ActivationBytes m = layer_activation_bytes(c, work(2, 2048, 1, true, none, unfused));
        CHECK(m.activation == Approx(s * b * (34 * h + 5 * a * s)).epsilon(1e-12));
        CHECK(m.held_for_w == Approx(32 * s * b * h).epsilon(1e-12));
    }
    SECTION("tensor parallelism without SP: sbh(10 + 24/t + 5as/(ht))") {
        const ActivationBytes m = layer_activation_bytes(c, work(2, 2048, 8, false, none, unfused));
        CHECK(m.activation ==
              Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))).epsilon(1e-12));
        CHECK(m.held_for_w == Approx(s * b * h * (8 + 24 / t)).epsilon(1e-12));
    }
    SECTION("tensor and sequence parallelism: sbh/t (34 + 5as/h)") {
        const ActivationBytes m = layer_activation_bytes(c, work(2, 2048, 8, true, none, unfused));
        CHECK(m.activation == Approx(s * b * h / t * (34 + 5 * a * s / h)).epsilon(1e-12));
        CHECK(m.held_for_w == Approx(32 * s * b * h / t).epsilon(1e-12));
    }
    SECTION("selective recomputation with SP: 34sbh/t") {
        const ActivationBytes m =
            layer_activation_bytes(c, work(2, 2048, 8, true, Recompute::selective));
        CHECK(m.activation == Approx(34 * s * b * h / t).epsilon(1e-12));
    }
    SECTION("full recomputation: the layer input, 2sbh") {
        const ActivationBytes m =
            layer_activation_bytes(c, work(2, 2048, 1, true, Recompute::full));
        CHECK(m.activation == Approx(2 * s * b * h).epsilon(1e-12));
        CHECK(m.held_for_w == m.activation);
    }
}

TEST_CASE("a fused attention kernel stores no s×s matrix, only the rows' log-sum-exp", "[models]") {
    // Llama 3 405B trained at 8K tokens without activation checkpointing (FlashAttention):
    // with the s×s terms (5as/h = 320 times sbh/t here) a layer would hold 11 times more.
    const TransformerConfig& c = find_model("llama3-405b");  // h 16384, 128 heads, 8 KV, f 53248
    const double s = 8192, b = 1, h = 16384, a = 128, kv = 1024, f = 53248, t = 8;
    const ActivationBytes fused = layer_activation_bytes(c, work(1, 8192, 8, true));
    // No dropout: norm inputs and the QKV and MLP inputs (8sbh/t); Q, K, V and the
    // projection input; SwiGLU's gate, up and product; the log-sum-exp (fp32, 4asb/t).
    const double expected =
        s * b / t * (8 * h + 2 * h + 4 * kv + 2 * h + 6 * f) + 4 * a * s * b / t;
    CHECK(fused.activation == Approx(expected).epsilon(1e-12));
    const ActivationBytes unfused = layer_activation_bytes(
        c, work(1, 8192, 8, true, Recompute::none, AttentionKernel::unfused));
    CHECK(unfused.activation == Approx(expected - 4 * a * s * b / t + 2 * a * s * s * b / t));
    CHECK(fused.activation < unfused.activation / 5);
}

TEST_CASE("M_W never exceeds M_B", "[models]") {
    const auto r = GENERATE(Recompute::none, Recompute::selective, Recompute::full);
    const bool sp = GENERATE(false, true);
    for (const TransformerConfig& c : model_presets()) {
        INFO(c.name);
        const Workload w = work(1, c.seq_len, 8, sp, r);
        for (const ActivationBytes& m :
             {layer_activation_bytes(c, w), embedding_activation_bytes(c, w),
              head_activation_bytes(c, w)})
            CHECK(m.held_for_w <= m.activation);
    }
}

TEST_CASE("the output layer holds 4sbh/t (1 + V/h) bytes (Korthikanti et al., §4.3)", "[models]") {
    const TransformerConfig& c = find_model("llama3-8b");
    const double s = 8192, b = 1, h = c.hidden, V = c.vocab, t = 4;
    const ActivationBytes m = head_activation_bytes(c, work(1, 8192, 4));
    CHECK(m.activation == Approx(4 * s * b * h / t * (1 + V / h)).epsilon(1e-12));
    CHECK(head_flops(c, work(1, 8192)).forward == Approx(2 * s * b * h * V).epsilon(1e-12));
}

TEST_CASE("messages, TP collectives and optimizer bytes", "[models]") {
    const TransformerConfig& c = find_model("llama2-7b");
    CHECK(pipeline_message_bytes(c, work(2, 4096)) == 2.0 * 4096 * 2 * 4096);
    const TensorParallelComm none = layer_tp_comm(c, work(2, 4096, 1));
    CHECK(none.collectives_forward + none.collectives_backward == 0);
    const TensorParallelComm tp = layer_tp_comm(c, work(2, 4096, 4));
    CHECK(tp.bytes == 2.0 * 4096 * 2 * 4096);
    CHECK(tp.collectives_forward == 2);
    CHECK(tp.collectives_backward == 2);

    OptimizerConfig adam;  // bf16 weights, fp32 grads, fp32 master + two moments
    CHECK(bytes_per_param(adam) == 18);
    adam.data_parallel = 8;
    adam.distributed = true;
    CHECK(bytes_per_param(adam) == 6 + 12.0 / 8);
    OptimizerConfig zero;  // ZeRO paper's 2 + 2 + 12
    zero.grad_bytes = 2;
    CHECK(bytes_per_param(zero) == 16);
}

TEST_CASE("tensor parallelism must divide heads, KV heads and the FFN", "[models]") {
    const TransformerConfig& c = find_model("llama3-70b");  // 64 heads, 8 KV heads
    CHECK_NOTHROW(check_workload(c, work(1, 8192, 8)));
    CHECK_THROWS_WITH(check_workload(c, work(1, 8192, 16)),
                      "tensor-parallel degree 16 does not divide llama3-70b's key/value heads "
                      "(8)");
    CHECK_THROWS_WITH(check_workload(find_model("zb-1.5b"), work(1, 1024, 5)),
                      Catch::Contains("does not divide zb-1.5b's attention heads (24)"));
}

TEST_CASE("an unknown GPU lists the known ones — every GPU cites its source", "[models]") {
    CHECK_THROWS_WITH(find_gpu("v100"),
                      "unknown GPU 'v100' (known: a100-40gb, a100-80gb, h100-sxm, h200)");
    for (const GpuSpec& g : gpu_specs()) {
        INFO(g.name);
        CHECK(g.peak_bf16_flops > 1e14);
        CHECK(g.memory_bytes > 30e9);
        CHECK(g.default_efficiency > 0);
        CHECK(g.default_efficiency <= 1);
        CHECK_FALSE(g.source.empty());
    }
}

TEST_CASE("a pipeline plan puts the embedding first and the head last", "[models]") {
    const TransformerConfig& c = find_model("llama3-8b");
    const AnalyticCostModel model(find_gpu("a100-80gb"), 0.5);
    const PipelinePlan plan = plan_pipeline(c, work(1, 8192), OptimizerConfig{}, model, 4);
    REQUIRE(plan.stages.size() == 4);
    int layers = 0;
    double params = 0;
    for (const StagePlan& s : plan.stages) {
        CHECK(s.first_layer == layers);
        layers += s.layers;
        params += s.params;
    }
    CHECK(layers == 32);
    CHECK(params == Approx(total_params(c)).epsilon(1e-12));  // untied: nothing held twice
    CHECK(plan.stages[0].has_embedding);
    CHECK(plan.stages[3].has_head);
    // The head (2sbhV per pass with V = 128256: 1.8 layers' worth) pushes layers off the last
    // stage: the best split has a 9-layer bottleneck and 6 or 7 layers on the last stage.
    CHECK(plan.stages[3].layers < 8);
    CHECK(plan.stages[0].static_bytes == Approx(18 * plan.stages[0].params));
    const PassTimes layer = model.layer(c, work(1, 8192));
    CHECK(plan.stages[1].times.forward == Approx(plan.stages[1].layers * layer.forward));
    CHECK(plan.model_flops_per_microbatch == Approx(32 * layer_flops(c, work(1, 8192)).total() +
                                                    head_flops(c, work(1, 8192)).total()));
}

TEST_CASE("a plan with more stages than layers is refused", "[models]") {
    const AnalyticCostModel model(find_gpu("h100-sxm"), 0.5);
    CHECK_THROWS_WITH(
        plan_pipeline(find_model("zb-1.5b"), work(1, 1024), OptimizerConfig{}, model, 23),
        "cannot split zb-1.5b's 22 layers into 23 pipeline stages: every stage "
        "needs at least one layer");
}
