// Calibration kernels' shape bookkeeping: per-layer GEMM shapes for each TP degree and FLOP
// counts that agree with models/.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "calibration/layer_shape.hpp"
#include "models/presets.hpp"

using namespace pipesim;
using namespace pipesim::calibration;

namespace {

models::Workload work(int b, int t) {
    models::Workload w;
    w.microbatch = b;
    w.tp = t;
    return w;
}

const KernelStep& find_step(const std::vector<KernelStep>& steps, Pass pass,
                            std::string_view name) {
    for (const KernelStep& k : steps)
        if (k.pass == pass && k.name == name) return k;
    FAIL("no step " << name);
    return steps.front();
}

}  // namespace

TEST_CASE("the kernels' GEMM FLOPs equal models/ layer FLOPs divided by the TP degree",
          "[calibration]") {
    const auto [model, b, t] = GENERATE(table<std::string, int, int>({
        {"zb-1.5b", 6, 1},
        {"zb-1.5b", 6, 2},
        {"zb-1.5b", 1, 8},
        {"zb-6.2b", 3, 1},
        {"zb-6.2b", 3, 4},
        {"gpt3-175b", 1, 8},
        {"llama2-70b", 1, 8},  // SwiGLU and grouped-query attention: bookkeeping only
        {"llama3-8b", 2, 4},
    }));
    const models::TransformerConfig& c = models::find_model(model);
    const models::PassFlops expected = models::layer_flops(c, work(b, t));
    const models::PassFlops got = steps_flops(layer_steps(layer_shape(c, work(b, t))));
    INFO(model << " b=" << b << " t=" << t);
    CHECK(got.forward == Approx(expected.forward / t).epsilon(1e-12));
    CHECK(got.backward_input == Approx(expected.backward_input / t).epsilon(1e-12));
    CHECK(got.backward_weight == Approx(expected.backward_weight / t).epsilon(1e-12));
}

TEST_CASE("a layer's shape on one GPU follows the Megatron tensor-parallel split",
          "[calibration]") {
    const auto [model, b, t, heads, qkv, attn, ffn] =
        GENERATE(table<std::string, int, int, int, int, int, int>({
            {"zb-1.5b", 6, 1, 24, 3 * 2304, 2304, 9216},
            {"zb-6.2b", 3, 4, 8, 3 * 1024, 1024, 4096},
            {"llama2-70b", 1, 8, 8, 1024 + 2 * 128, 1024, 3584},
        }));
    const LayerShape s = layer_shape(models::find_model(model), work(b, t));
    INFO(model << " t=" << t);
    CHECK(s.tokens == b * s.seq);
    CHECK(s.heads == heads);
    CHECK(s.qkv_width == qkv);
    CHECK(s.attn_width == attn);
    CHECK(s.ffn == ffn);
}

TEST_CASE("linear layers are split the Zero Bubble way: F = X·Wᵀ, B = dY·W, W = dYᵀ·X",
          "[calibration]") {
    const LayerShape s = layer_shape(models::find_model("zb-1.5b"), work(2, 2));
    const std::vector<KernelStep> steps = layer_steps(s);
    const long long n = s.tokens, h = s.hidden, q = s.qkv_width, f = s.ffn;
    // {m, n, k} of C[m×n] = op(A)[m×k]·op(B)[k×n]
    CHECK(find_step(steps, Pass::F, "qkv").gemm.m == n);
    CHECK(find_step(steps, Pass::F, "qkv").gemm.n == q);
    CHECK(find_step(steps, Pass::F, "qkv").gemm.k == h);
    CHECK(find_step(steps, Pass::B, "fc1").gemm.n == h);
    CHECK(find_step(steps, Pass::B, "fc1").gemm.k == f);
    CHECK(find_step(steps, Pass::W, "fc2").gemm.m == h);
    CHECK(find_step(steps, Pass::W, "fc2").gemm.n == f);
    CHECK(find_step(steps, Pass::W, "fc2").gemm.k == n);
    const KernelStep& scores = find_step(steps, Pass::F, "scores");
    CHECK(scores.gemm.batch == 2LL * s.heads);
    CHECK(scores.gemm.m == s.seq);
    CHECK(scores.gemm.k == s.head_dim);
    CHECK(find_step(steps, Pass::F, "softmax").flops == 0);
    CHECK(find_step(steps, Pass::F, "softmax").bytes ==
          2.0 * 2 * 2 * s.heads * double(s.seq) * s.seq);
}

TEST_CASE("each pass lists its kernels once, and BW is B then W", "[calibration]") {
    const LayerShape s = layer_shape(models::find_model("zb-1.5b"), work(1, 1));
    for (Pass pass : {Pass::F, Pass::B, Pass::W}) {
        std::set<std::string_view> names;
        for (const KernelStep& k : pass_steps(s, pass))
            CHECK(names.insert(k.name).second);
    }
    const std::vector<KernelStep> bw = pass_steps(s, Pass::BW);
    const std::size_t b = pass_steps(s, Pass::B).size();
    REQUIRE(bw.size() == b + pass_steps(s, Pass::W).size());
    CHECK(bw.front().pass == Pass::B);
    CHECK(bw[b].pass == Pass::W);
    CHECK(static_cast<int>(layer_steps(s).size()) == step_count);
}

TEST_CASE("the GPU kernels accept GPT-style models and name what they lack", "[calibration]") {
    CHECK_NOTHROW(check_kernel_support(models::find_model("zb-6.2b")));
    CHECK_THROWS_WITH(check_kernel_support(models::find_model("llama2-7b")),
                      "the calibration kernels implement GeLU MLPs (GPT-style models); "
                      "llama2-7b uses SwiGLU");
    CHECK_THROWS_WITH(layer_shape(models::find_model("zb-1.5b"), work(1, 5)),
                      Catch::Contains("does not divide zb-1.5b's attention heads (24)"));
}
