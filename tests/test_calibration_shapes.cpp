// Calibration kernels' shape bookkeeping: per-layer GEMM shapes for each TP degree and FLOP
// counts that agree with models/.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "calibration/layer_shape.hpp"
#include "models/operators.hpp"
#include "models/presets.hpp"

using namespace pipesim;
using namespace pipesim::calibration;

namespace {

models::Workload work(int b, int t,
                      models::AttentionKernel attention = models::AttentionKernel::unfused) {
    models::Workload w;
    w.microbatch = b;
    w.tp = t;
    w.attention = attention;
    return w;
}

// F, B, W FLOPs of models/' GEMM and fused-attention operators (memory-bound ones excluded).
models::PassFlops operator_flops(const models::TransformerConfig& c, const models::Workload& w) {
    models::PassFlops f;
    for (const models::Operator& op : models::layer_operators(c, w)) {
        if (op.kind == models::OpKind::memory) continue;
        if (op.pass == models::Pass::forward) f.forward += op.flops;
        if (op.pass == models::Pass::backward_input) f.backward_input += op.flops;
        if (op.pass == models::Pass::backward_weight) f.backward_weight += op.flops;
    }
    return f;
}

bool has_step(const std::vector<KernelStep>& steps, Step step) {
    for (const KernelStep& k : steps)
        if (k.step == step) return true;
    return false;
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
        {"llama2-7b", 1, 1},
        {"llama2-70b", 1, 8},
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

TEST_CASE("the kernels' FLOPs equal models/ operator counts for both attention kernels",
          "[calibration]") {
    const auto [model, b, t] = GENERATE(table<std::string, int, int>({
        {"zb-1.5b", 6, 1},
        {"zb-6.2b", 3, 4},
        {"llama2-7b", 1, 1},
        {"llama2-13b", 2, 2},
        {"llama2-70b", 1, 8},
        {"llama3-8b", 1, 1},
        {"llama3-70b", 1, 8},
        {"llama3-405b", 1, 8},
    }));
    const models::TransformerConfig& c = models::find_model(model);
    for (auto kind : {models::AttentionKernel::unfused, models::AttentionKernel::fused}) {
        const models::Workload w = work(b, t, kind);
        const models::PassFlops want = operator_flops(c, w);
        const models::PassFlops got = steps_flops(layer_steps(layer_shape(c, w)));
        INFO(model << " b=" << b << " t=" << t
                   << " fused=" << (kind == models::AttentionKernel::fused));
        CHECK(got.forward == Approx(want.forward).epsilon(1e-12));
        CHECK(got.backward_input == Approx(want.backward_input).epsilon(1e-12));
        CHECK(got.backward_weight == Approx(want.backward_weight).epsilon(1e-12));
    }
    // The fused kernel does the causal half of the attention core: F saves 2bs²h/t, B 3bs²h/t.
    const double s = c.seq_len, h = c.hidden;
    const models::PassFlops unfused = steps_flops(layer_steps(layer_shape(c, work(b, t))));
    const models::PassFlops fused =
        steps_flops(layer_steps(layer_shape(c, work(b, t, models::AttentionKernel::fused))));
    CHECK(unfused.forward - fused.forward == Approx(2 * b * s * s * h / t).epsilon(1e-12));
    CHECK(unfused.backward_input - fused.backward_input ==
          Approx(3 * b * s * s * h / t).epsilon(1e-12));
}

TEST_CASE("Llama presets run RMSNorm, rotary, SwiGLU and grouped-query attention without biases",
          "[calibration]") {
    const auto [model, t, heads, kv_heads, ffn] = GENERATE(table<std::string, int, int, int, int>({
        {"llama2-7b", 1, 32, 32, 11008},
        {"llama2-13b", 2, 20, 20, 6912},
        {"llama2-70b", 8, 8, 1, 3584},
        {"llama3-8b", 1, 32, 8, 14336},
        {"llama3-70b", 4, 16, 2, 7168},
        {"llama3-405b", 8, 16, 1, 6656},
    }));
    const models::TransformerConfig& c = models::find_model(model);
    const LayerShape s = layer_shape(c, work(1, t, models::AttentionKernel::fused));
    INFO(model << " t=" << t);
    CHECK(s.head_dim == 128);
    CHECK(s.heads == heads);
    CHECK(s.kv_heads == kv_heads);
    CHECK(s.group() == heads / kv_heads);
    CHECK(s.kv_width == kv_heads * 128);
    CHECK(s.qkv_width == (heads + 2 * kv_heads) * 128);
    CHECK(s.ffn == ffn);
    CHECK(s.fc1_width() == 2 * ffn);  // gate and up
    CHECK(s.norm == models::Norm::rmsnorm);
    CHECK(s.rotary);
    CHECK_FALSE(s.bias);
    const std::vector<KernelStep> steps = layer_steps(s);
    CHECK(find_step(steps, Pass::F, "fc1").gemm.n == 2LL * ffn);
    CHECK(find_step(steps, Pass::W, "fc1").gemm.m == 2LL * ffn);
    CHECK(find_step(steps, Pass::B, "fc2").gemm.n == ffn);
    CHECK(find_step(steps, Pass::F, "rotary").bytes ==
          2.0 * 2 * s.tokens * (heads + kv_heads) * 128);
    CHECK(find_step(steps, Pass::F, "swiglu").pass == Pass::F);
    CHECK(find_step(steps, Pass::B, "swiglu").pass == Pass::B);
    CHECK(find_step(steps, Pass::F, "rmsnorm1").bytes ==
          2.0 * 2 * s.tokens * c.hidden + 4.0 * s.tokens);
    CHECK(find_step(steps, Pass::F, "flash").flops == 2.0 * heads * s.seq * double(s.seq) * 128);
    CHECK(find_step(steps, Pass::B, "flash").flops == 5.0 * heads * s.seq * double(s.seq) * 128);
    for (Step absent :
         {Step::qkv_bias_f, Step::fc1_bias_w, Step::qkv_bias_w, Step::scores_f, Step::softmax_b})
        CHECK_FALSE(has_step(steps, absent));
}

TEST_CASE("the unfused attention's batched GEMMs cover every query head, grouped or not",
          "[calibration]") {
    const LayerShape s = layer_shape(models::find_model("llama3-8b"), work(2, 1));
    const std::vector<KernelStep> steps = layer_steps(s);
    for (std::string_view name : {"attn_dv", "attn_dp", "attn_dq", "attn_dk"})
        CHECK(find_step(steps, Pass::B, name).gemm.batch == 2LL * 32);
    CHECK(find_step(steps, Pass::F, "scores").gemm.batch == 2LL * 32);
    CHECK(find_step(steps, Pass::F, "softmax").bytes == 2.0 * 2 * 2 * 32 * 8192.0 * 8192);
    CHECK(has_step(steps, Step::rotary_b));
    CHECK_FALSE(has_step(steps, Step::flash_f));
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
    // GPT with the unfused attention: 13 kernels in F, 12 in B, 10 in W.
    CHECK(pass_steps(s, Pass::F).size() == 13);
    CHECK(b == 12);
    CHECK(pass_steps(s, Pass::W).size() == 10);
}

TEST_CASE("the GPU kernels accept GPT and Llama models and name what they lack", "[calibration]") {
    const auto fused = models::AttentionKernel::fused;
    for (const char* name : {"zb-1.5b", "zb-6.2b", "llama2-7b", "llama2-70b", "llama3-8b"}) {
        CHECK_NOTHROW(check_kernel_support(models::find_model(name), work(1, 1)));
        CHECK_NOTHROW(check_kernel_support(models::find_model(name), work(1, 1, fused)));
    }
    models::TransformerConfig odd = models::find_model("zb-1.5b");
    odd.name = "odd";
    odd.heads = 18;  // head dimension 128
    CHECK_NOTHROW(check_kernel_support(odd, work(1, 1, fused)));
    odd.heads = 36;  // head dimension 64
    CHECK_NOTHROW(check_kernel_support(odd, work(1, 1, fused)));
    odd.heads = 48;  // head dimension 48
    CHECK_NOTHROW(check_kernel_support(odd, work(1, 1)));
    CHECK_THROWS_WITH(check_kernel_support(odd, work(1, 1, fused)),
                      "the fused attention kernel is built for head dimensions 32, 64, 96, 128; "
                      "odd has 48 (use --attention unfused)");
    CHECK_THROWS_WITH(check_kernel_support(models::find_model("zb-1.5b"), work(1, 5)),
                      Catch::Contains("does not divide zb-1.5b's attention heads (24)"));
}
