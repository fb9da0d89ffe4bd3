// Operator-level costs: each kernel's FLOPs and bytes against hand counts, the roofline's
// limits, recomputation, tensor and sequence parallelism, and what a pipeline plan adds.
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "model_workload.hpp"
#include "models/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/operators.hpp"
#include "models/pipeline.hpp"
#include "models/presets.hpp"
#include "models/roofline.hpp"

using namespace pipesim::models;

namespace {

// The unfused attention unless told otherwise: its GEMMs are the closed forms' FLOPs.
Workload work(int b, int s, int t, bool sp, Recompute r = Recompute::none,
              AttentionKernel k = AttentionKernel::unfused) {
    return pipesim::test::work(b, s, t, sp, r, k);
}

const Operator& find_op(const std::vector<Operator>& ops, std::string_view name) {
    for (const Operator& op : ops)
        if (op.name == name) return op;
    FAIL("no operator " << name);
    return ops.front();
}

PassFlops flops_of(const std::vector<Operator>& ops, bool gemm_like_only) {
    PassFlops f;
    for (const Operator& op : ops) {
        if (gemm_like_only && op.kind == OpKind::memory) continue;
        double& slot = op.pass == Pass::forward          ? f.forward
                       : op.pass == Pass::backward_input ? f.backward_input
                                                         : f.backward_weight;
        slot += op.flops;
    }
    return f;
}

}  // namespace

TEST_CASE("unfused GEMM FLOPs of every pass sum to layer_flops / t", "[models]") {
    const TransformerConfig& c =
        find_model(GENERATE(as<std::string>{}, "gpt3-175b", "llama2-70b", "llama3-8b"));
    const int t = GENERATE(1, 8);
    const Workload w = work(2, 2048, t, true);
    const PassFlops ops = flops_of(layer_operators(c, w), true);
    const PassFlops closed = layer_flops(c, w);
    CHECK(ops.forward == Approx(closed.forward / t).epsilon(1e-12));
    CHECK(ops.backward_input == Approx(closed.backward_input / t).epsilon(1e-12));
    CHECK(ops.backward_weight == Approx(closed.backward_weight / t).epsilon(1e-12));
}

TEST_CASE("GEMM shapes and bytes are hand counts, GQA shrinking K and V", "[models]") {
    const TransformerConfig& c = find_model("llama2-70b");  // h 8192, 64 heads, 8 KV, f 28672
    const double s = 4096, b = 1, t = 8, h = 8192, kv = 8 * 128, f = 28672;
    const auto ops = layer_operators(c, work(1, 4096, 8, true));
    const Operator& qkv = find_op(ops, "QKV");
    CHECK(qkv.shape.m == s * b);
    CHECK(qkv.shape.n == (h + 2 * kv) / t);
    CHECK(qkv.shape.k == h);
    CHECK(qkv.flops == 2 * s * b * h * (h + 2 * kv) / t);
    CHECK(qkv.bytes == 2 * s * b * h + 2 * h * (h + 2 * kv) / t + 2 * s * b * (h + 2 * kv) / t);
    const Operator& up = find_op(ops, "MLP up");  // gate and up projections together
    CHECK(up.shape.n == 2 * f / t);
    const Operator& dw = find_op(ops, "MLP down dW");  // fp32 accumulation: read and write
    CHECK(dw.pass == Pass::backward_weight);
    CHECK(dw.shape.k == s * b);
    CHECK(dw.bytes == 2 * (f / t) * s * b + 2 * s * b * h + 8 * (f / t) * h);
    CHECK(find_op(ops, "MLP down dX").pass == Pass::backward_input);
}

TEST_CASE(
    "without accumulation fusion W writes a 16-bit dW that a kernel adds on m - 1 of m "
    "microbatches",
    "[models]") {
    const TransformerConfig& c = find_model("gpt3-175b");  // h 12288, f 4h, biases, V 50257
    REQUIRE(c.linear_bias);
    REQUIRE(c.learned_positions);
    const double s = 2048, b = 1, t = 8, h = 12288, f = 4 * h, v = c.vocab;
    Workload w = work(1, 2048, 8, true);
    w.grad_bytes = 2;  // fp16 gradients
    w.grad_accumulation_fusion = false;
    w.iteration_microbatches = 4;
    const auto ops = layer_operators(c, w);
    // The GEMM writes its 16-bit dW once instead of reading and writing the buffer.
    CHECK(find_op(ops, "MLP down dW").bytes ==
          2 * (f / t) * s * b + 2 * s * b * h + 2 * (f / t) * h);
    // Weights and biases of QKV, projection, MLP up and down on this rank; each element read
    // as dW (2 bytes), read and written in the buffer (2 + 2), on 3 of 4 microbatches.
    const double weights = h * 3 * h / t + h * h / t + h * f / t + f / t * h;
    const double biases = 3 * h / t + h + f / t + h;
    const Operator& acc = find_op(ops, "gradient accumulation");
    CHECK(acc.pass == Pass::backward_weight);
    CHECK(acc.kind == OpKind::memory);
    CHECK(acc.bytes == Approx((weights + biases) * 0.75 * 6).epsilon(1e-12));
    // The head's logits and the embedding's table (vocabulary-parallel, and the positions).
    CHECK(find_op(head_operators(c, w), "logits gradient accumulation").bytes ==
          Approx(h * v / t * 0.75 * 6).epsilon(1e-12));
    const auto embedding = embedding_operators(c, w);
    CHECK(find_op(embedding, "embedding gradient zero").bytes ==
          Approx(2 * (v / t * h + s * h)).epsilon(1e-12));
    CHECK(find_op(embedding, "embedding gradient accumulation").bytes ==
          Approx((v / t * h + s * h) * 0.75 * 6).epsilon(1e-12));
    // One microbatch per iteration: its dW is the gradient, nothing is added.
    w.iteration_microbatches = 1;
    for (const Operator& op : layer_operators(c, w))
        CHECK(op.name != "gradient accumulation");
    // Fused into 16-bit gradients: the GEMM reads and writes 2 bytes per element.
    w.grad_accumulation_fusion = true;
    CHECK(find_op(layer_operators(c, w), "MLP down dW").bytes ==
          2 * (f / t) * s * b + 2 * s * b * h + 4 * (f / t) * h);
}

TEST_CASE("memory-bound kernels move hand-counted bytes — SP shards the replicated ones",
          "[models]") {
    const TransformerConfig& c = find_model("gpt3-175b");  // h 12288, 96 heads, dropout
    const double s = 2048, b = 1, t = 8, h = 12288, a = 96;
    const auto no_sp = layer_operators(c, work(1, 2048, 8, false));
    const auto sp = layer_operators(c, work(1, 2048, 8, true));
    CHECK(find_op(no_sp, "norm 1").bytes == 4 * s * b * h);
    CHECK(find_op(sp, "norm 1").bytes == 4 * s * b * h / t);
    CHECK(find_op(no_sp, "dropout-add 1").bytes == 7 * s * b * h);  // 2+2 in, 2 out, mask
    CHECK(find_op(no_sp, "GeLU").bytes == 4 * s * b * 4 * h / t);
    CHECK(find_op(sp, "GeLU").bytes == find_op(no_sp, "GeLU").bytes);  // already TP-split
    CHECK(find_op(no_sp, "scale-mask-softmax").bytes == 4 * b * a / t * s * s);
    CHECK(find_op(no_sp, "attention dropout").bytes == 5 * b * a / t * s * s);
    CHECK(find_op(no_sp, "softmax backward").bytes == 6 * b * a / t * s * s);
    // Megatron-LM's QKV bias add (read and write the 3h/t outputs) and the unfused attention's
    // copy of its context to [s, b, h] (read and write h/t per token), neither sharded by SP.
    CHECK(find_op(no_sp, "QKV bias add").bytes == 4 * s * b * 3 * h / t);
    CHECK(find_op(sp, "QKV bias add").bytes == find_op(no_sp, "QKV bias add").bytes);
    CHECK(find_op(no_sp, "context copy").bytes == 4 * s * b * h / t);
    CHECK(find_op(no_sp, "context copy").pass == Pass::forward);
    CHECK(find_op(no_sp, "context copy").attention_core);  // selective recomputation re-runs it
    CHECK(find_op(no_sp, "context copy").memory_rate == MemoryRate::stream);
    // In B the context's gradient goes back to the heads' layout, and Q, K and V's gradients
    // are gathered into one QKV-shaped tensor: each read and written once.
    CHECK(find_op(no_sp, "context gradient copy").bytes == 4 * s * b * h / t);
    CHECK(find_op(no_sp, "QKV gradient gather").bytes == 4 * s * b * 3 * h / t);
    CHECK(find_op(no_sp, "QKV gradient gather").pass == Pass::backward_input);
    CHECK_FALSE(find_op(no_sp, "context gradient copy").attention_core);
    // No bias, no bias add (Llama); the fused attention writes [s, b, h] itself.
    for (const Operator& op :
         layer_operators(find_model("llama3-8b"),
                         work(1, 2048, 1, false, Recompute::none, AttentionKernel::fused))) {
        CHECK(op.name != "QKV bias add");
        CHECK(op.name.find("context") == std::string::npos);
        CHECK(op.name != "QKV gradient gather");
    }
}

TEST_CASE("without dropout the residual adds are plain adds whose backward runs no kernel",
          "[models]") {
    // Their backward passes the sum's gradient on as it is; what B adds is autograd's sum of
    // the two gradients where the residual branches off (before each norm).
    const TransformerConfig& c = find_model("llama3-8b");  // no dropout
    const double s = 8192, b = 1, h = 4096;
    const auto ops =
        layer_operators(c, work(1, 8192, 1, false, Recompute::none, AttentionKernel::fused));
    CHECK(find_op(ops, "residual add 1").bytes == 6 * s * b * h);  // 2+2 in, 2 out, no mask
    CHECK(find_op(ops, "residual add 2").bytes == 6 * s * b * h);
    int adds_in_b = 0, gradient_sums = 0;
    for (const Operator& op : ops) {
        CHECK(std::string_view(op.name).find("dropout") == std::string_view::npos);
        if (op.pass != Pass::backward_input || op.name.find("add") == std::string_view::npos)
            continue;
        if (op.name.starts_with("residual gradient add"))
            ++gradient_sums;
        else
            ++adds_in_b;
    }
    CHECK(adds_in_b == 0);
    CHECK(gradient_sums == 2);
    // With dropout (GPT-3) each add's backward reads the gradient and the mask and writes
    // the branch's gradient.
    const auto gpt = layer_operators(find_model("gpt3-175b"), work(1, 2048, 8, false));
    CHECK(find_op(gpt, "dropout-add 1 backward").bytes == 5.0 * 2048 * 12288);
}

TEST_CASE("fused attention skips the masked half and its backward is 2.5 forwards", "[models]") {
    const TransformerConfig& c = find_model("llama3-8b");  // RoPE, no dropout
    const double s = 8192, b = 1, h = 4096;
    const auto ops = layer_operators(c, work(1, 8192, 1, true, Recompute::none));
    const auto fused =
        layer_operators(c, work(1, 8192, 1, true, Recompute::none, AttentionKernel::fused));
    const Operator& f = find_op(fused, "flash attention");
    CHECK(f.kind == OpKind::attention);
    CHECK(f.flops == 4 * b * s * s * h / 2);
    CHECK(find_op(fused, "flash attention backward").flops == 2.5 * f.flops);
    CHECK(find_op(ops, "QKᵀ").flops + find_op(ops, "AV").flops == 2 * f.flops);
    CHECK(find_op(ops, "rotary").bytes == 4 * s * b * (h + 1024));  // Q and K, read and write
    for (const Operator& op : ops)
        CHECK(op.name != "attention dropout");
}

TEST_CASE("a huge GEMM runs at peak times the measured GEMM efficiency", "[models]") {
    const GpuSpec& gpu = find_gpu(GENERATE(as<std::string>{}, "a100-80gb", "h100-sxm"));
    Operator op;
    op.kind = OpKind::gemm;
    op.shape = {16384 * 8, 16384, 16384, 1};
    op.flops = 2 * op.shape.m * op.shape.n * op.shape.k;
    op.bytes = 2 * (op.shape.m * op.shape.k + op.shape.k * op.shape.n + op.shape.m * op.shape.n);
    CHECK(gemm_efficiency(gpu, op.shape) == Approx(gpu.gemm_efficiency).epsilon(0.01));
    CHECK(operator_seconds(gpu, op) ==
          Approx(op.flops / (gpu.peak_bf16_flops * gpu.gemm_efficiency)).epsilon(0.01));
    CHECK(gpu.gemm_efficiency < 1);
}

TEST_CASE("a tiny GEMM is latency-bound", "[models]") {
    const GpuSpec& gpu = find_gpu("a100-80gb");
    Operator op;
    op.kind = OpKind::gemm;
    op.shape = {16, 16, 16, 1};
    op.flops = 2 * 16 * 16 * 16;
    op.bytes = 3 * 2 * 16 * 16;
    const double seconds = operator_seconds(gpu, op);
    // One padded 128×128 tile on one SM, its K loop lengthened by the pipeline fill (K = 16
    // against 128), plus the launch: microseconds, where the FLOPs at peak would take a few
    // picoseconds.
    const double sm_rate = gpu.peak_bf16_flops * gpu.gemm_efficiency / gpu.sm_count;
    const double fill = (16 + 128) / 16.0 * 2048 / (2048 + 128);
    CHECK(seconds == Approx(gpu.launch_overhead + 2 * 128 * 128 * 16 / sm_rate * fill));
    CHECK(seconds > 1e4 * op.flops / gpu.peak_bf16_flops);
    CHECK(gemm_efficiency(gpu, op.shape) < 0.01 * gpu.gemm_efficiency);
}

TEST_CASE("on A100 a GEMM shorter in K than the measured shape pays each tile's pipeline fill",
          "[models]") {
    const GpuSpec& a100 = find_gpu("a100-80gb");
    // cuBLAS's 64-deep k-tiles in a 3-stage pipeline: 128 of K before a tile's first MMA;
    // the efficiency was measured at K = 2048.
    CHECK(a100.gemm_k_fill == 128);
    CHECK(a100.gemm_reference_k == 2048);
    const auto at = [&](double k) { return gemm_efficiency(a100, {128.0 * 108, 256, k, 1}); };
    CHECK(at(2048) == Approx(a100.gemm_efficiency));
    CHECK(at(8192) == Approx(a100.gemm_efficiency));
    CHECK(at(1024) == Approx(a100.gemm_efficiency * (1024.0 / 1152) / (2048.0 / 2176)));
    CHECK(at(128) == Approx(a100.gemm_efficiency * 0.5 / (2048.0 / 2176)));
    // Hopper's persistent kernels prefetch the next tile during the epilogue: no falloff.
    const GpuSpec& h100 = find_gpu("h100-sxm");
    CHECK(gemm_efficiency(h100, {128.0 * 132, 256, 128, 1}) == Approx(h100.gemm_efficiency));
}

TEST_CASE("one wave too many halves a GEMM's efficiency", "[models]") {
    const GpuSpec& gpu = find_gpu("a100-80gb");  // 108 SMs
    const GemmShape full{128.0 * 108, 128, 4096, 1};
    const GemmShape spill{128.0 * 109, 128, 4096, 1};
    CHECK(gemm_efficiency(gpu, full) == Approx(gpu.gemm_efficiency));
    CHECK(gemm_efficiency(gpu, spill) < 0.55 * gpu.gemm_efficiency);
}

TEST_CASE("a memory-bound kernel takes bytes over the achievable bandwidth", "[models]") {
    const GpuSpec& gpu = find_gpu("h100-sxm");
    Operator op;
    op.kind = OpKind::memory;
    op.flops = 1e9;
    op.bytes = 4e9;
    CHECK(operator_seconds(gpu, op) ==
          Approx(gpu.launch_overhead + 4e9 / (3.35e12 * 0.9)).epsilon(1e-12));
}

TEST_CASE("the unfused attention's score kernels move what FlashAttention's paper measured",
          "[models]") {
    // Dao et al. (2022), Fig. 2 left: standard attention, forward and backward, for GPT-2
    // medium's shape (b 64, 16 heads of 64, s 1024) on an A100 40 GB reads and writes 40.3 GB
    // of HBM in 41.7 ms. The model's kernels over the s×s scores, counted independently, move
    // within 15 % of those bytes, and at the measured rate take as long as the bytes say.
    TransformerConfig c = find_model("zb-1.5b");
    c.hidden = 1024;
    c.heads = 16;
    const GpuSpec& gpu = find_gpu("a100-40gb");
    double bytes = 0, seconds = 0;
    int kernels = 0;
    for (const Operator& op : layer_operators(c, work(64, 1024, 1, false))) {
        if (op.memory_rate != MemoryRate::scores) continue;
        bytes += op.bytes;
        seconds += operator_seconds(gpu, op);
        ++kernels;
    }
    CHECK(kernels == 10);  // QKᵀ, softmax, dropout, AV; dP, dV, dropout, softmax, dQ, dK
    CHECK(bytes == Approx(40.3e9).epsilon(0.15));
    CHECK(seconds == Approx(41.7e-3).epsilon(0.15));
    // Every one of them memory-bound at 40.3 GB / 41.7 ms of the datasheet 1,555 GB/s.
    CHECK(gpu.scores_memory_efficiency == Approx(40.3e9 / 41.7e-3 / 1555e9));
    CHECK(seconds ==
          Approx(kernels * gpu.launch_overhead + bytes / (1555e9 * gpu.scores_memory_efficiency))
              .epsilon(1e-9));
    // The fused attention has no score kernels; Hopper's unfused ones keep the copy rate.
    for (const Operator& op :
         layer_operators(c, work(64, 1024, 1, false, Recompute::none, AttentionKernel::fused)))
        CHECK(op.memory_rate != MemoryRate::scores);
    CHECK(find_gpu("h100-sxm").scores_memory_efficiency == 0);
}

TEST_CASE("the norms move hand-counted bytes at the rates NVIDIA's LayerNorm benchmark measured",
          "[models]") {
    // NVIDIA/apex pull request 1037: BERT's shape (32 × 512 tokens, h 1024, fp16) on GA100,
    // forward 4 bytes per element in 0.0751 ms (apex's FusedLayerNorm) and 0.0535 ms (the
    // persistent FastLayerNorm), backward 6 bytes per element in 0.1762 and 0.0866 ms.
    TransformerConfig c = find_model("zb-1.5b");  // LayerNorm, dropout
    c.hidden = 1024;
    c.heads = 16;
    const double tokens = 32 * 512, h = 1024;
    const GpuSpec& gpu = find_gpu("a100-40gb");
    Workload w = work(32, 512, 1, false);
    struct Measured {
        bool persistent;
        double forward, backward;  // seconds
    };
    for (const Measured m :
         {Measured{false, 0.0751e-3, 0.1762e-3}, Measured{true, 0.0535e-3, 0.0866e-3}}) {
        CAPTURE(m.persistent);
        w.persistent_norm = m.persistent;
        const auto ops = layer_operators(c, w);
        const Operator& forward = find_op(ops, "norm 1");
        const Operator& backward = find_op(ops, "norm 1 backward");
        CHECK(forward.bytes == 4 * tokens * h);
        CHECK(backward.bytes == 6 * tokens * h);
        CHECK(backward.pass == Pass::backward_input);
        // The measured times back, within the rounding of the published GB/s and the launch.
        CHECK(operator_seconds(gpu, forward) == Approx(m.forward).epsilon(0.02));
        CHECK(operator_seconds(gpu, backward) == Approx(m.backward).epsilon(0.02));
        // The head's final norm runs the same kernels.
        CHECK(find_op(head_operators(c, w), "final norm backward").memory_rate ==
              backward.memory_rate);
    }
    // The non-persistent kernels are the slower ones in both passes.
    CHECK(gpu.nonpersistent_norm_forward_memory_efficiency < gpu.norm_forward_memory_efficiency);
    CHECK(gpu.nonpersistent_norm_backward_memory_efficiency < gpu.norm_backward_memory_efficiency);
    // The residual path's gradient and the norm's are added by a kernel of their own after
    // each norm's backward: reads both, writes the sum, at the copy rate.
    const auto ops = layer_operators(c, w);
    for (const char* name : {"residual gradient add 1", "residual gradient add 2"}) {
        CAPTURE(name);
        const Operator& add = find_op(ops, name);
        CHECK(add.bytes == 6 * tokens * h);
        CHECK(add.memory_rate == MemoryRate::stream);
        CHECK(operator_time(gpu, add).memory_efficiency == gpu.memory_efficiency);
    }
    // No measurement on Hopper: its norms keep the copy rate.
    const GpuSpec& h100 = find_gpu("h100-sxm");
    CHECK(operator_time(h100, find_op(ops, "norm 1 backward")).memory_efficiency ==
          h100.memory_efficiency);
}

TEST_CASE("the cross-entropy moves what Megatron-LM's kernels move, or one pass when fused",
          "[models]") {
    const TransformerConfig& c = find_model("gpt3-175b");  // V 50257
    const double s = 2048, b = 1, t = 8, logits = s * b * c.vocab / t;
    Workload w = work(1, 2048, 8, true);
    auto bytes_in = [](const std::vector<Operator>& ops, Pass pass) {
        double sum = 0;
        for (const Operator& op : ops)
            if (op.kind == OpKind::memory && op.pass == pass &&
                op.name.find("norm") == std::string_view::npos)
                sum += op.bytes;
        return sum;
    };
    // Megatron-LM's default: cast to fp32 (2 read, 4 written), row max (4), subtract in place
    // (4 + 4), exp in place (4 + 4), row sum (4), divide in place (4 + 4) in F; in B scale in
    // place by the loss gradient (4 + 4) and cast back (4 + 2).
    const auto unfused = head_operators(c, w);
    CHECK(bytes_in(unfused, Pass::forward) == Approx(38 * logits).epsilon(1e-12));
    CHECK(bytes_in(unfused, Pass::backward_input) == Approx(14 * logits).epsilon(1e-12));
    CHECK(find_op(unfused, "logits exp").bytes == 8 * logits);
    // Fused: read the 16-bit logits, keep fp32 probabilities; B reads them, writes 16 bits.
    w.cross_entropy_fusion = true;
    const auto fused = head_operators(c, w);
    CHECK(bytes_in(fused, Pass::forward) == Approx(6 * logits).epsilon(1e-12));
    CHECK(bytes_in(fused, Pass::backward_input) == Approx(6 * logits).epsilon(1e-12));
    // Only the loss differs: the logits GEMMs are the same.
    CHECK(find_op(fused, "logits").flops == find_op(unfused, "logits").flops);
}

TEST_CASE("recomputation re-runs forward kernels before B", "[models]") {
    const TransformerConfig& c = find_model("gpt3-175b");
    const OperatorCostModel model(find_gpu("a100-80gb"));
    const PassTimes none = model.layer(c, work(1, 2048, 8, false, Recompute::none));
    const PassTimes full = model.layer(c, work(1, 2048, 8, false, Recompute::full));
    const PassTimes sel = model.layer(c, work(1, 2048, 8, false, Recompute::selective));
    CHECK(full.forward == none.forward);
    CHECK(full.backward_weight == none.backward_weight);
    CHECK(full.backward_input == Approx(none.backward_input + none.forward).epsilon(1e-12));
    double core = 0;
    for (const Operator& op : layer_operators(c, work(1, 2048, 8, false)))
        if (op.attention_core) core += operator_seconds(model.gpu(), op);
    CHECK(core > 0);
    CHECK(sel.backward_input == Approx(none.backward_input + core).epsilon(1e-12));
}

TEST_CASE("the optimizer step reads and writes 30 bytes per parameter", "[models]") {
    const GpuSpec& gpu = find_gpu("a100-80gb");
    OptimizerConfig o;
    const double rate = 2039e9 * 0.9;
    CHECK(optimizer_step_seconds(gpu, 1e9, o) == Approx(30e9 / rate).epsilon(1e-12));
    o.distributed = true;
    o.data_parallel = 4;
    CHECK(optimizer_step_seconds(gpu, 1e9, o) == Approx(30e9 / 4 / rate).epsilon(1e-12));
}

TEST_CASE("a stage's TP collectives are two all-reduces per layer and pass", "[models]") {
    const TransformerConfig& c = find_model("gpt3-175b");
    const OperatorCostModel model(find_gpu("a100-80gb"));
    Workload w = work(1, 2048, 8, false, Recompute::full);
    const PipelinePlan plan = plan_pipeline(c, w, OptimizerConfig{}, model, 8);
    const double bytes = 2 * 2048.0 * 12288;
    const double one = 1e-6 + 2.0 * 7 / 8 * bytes / 200e9;  // ring, NCCL's A100 bus bandwidth
    CHECK(tp_allreduce_seconds(model.gpu(), bytes, 8) == Approx(one).epsilon(1e-12));
    const StagePlan& mid = plan.stages[3];
    CHECK(mid.tp_comm_times.forward == Approx(2 * mid.layers * one).epsilon(1e-12));
    CHECK(mid.tp_comm_times.backward_input == Approx(4 * mid.layers * one).epsilon(1e-12));
    CHECK(mid.tp_comm_times.backward_weight == 0);
    CHECK(plan.stages.front().tp_comm_times.forward ==
          Approx((2 * plan.stages.front().layers + 1) * one).epsilon(1e-12));
    CHECK(tp_allreduce_seconds(model.gpu(), bytes, 1) == 0);
}
