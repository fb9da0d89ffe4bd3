// ZeRO stages, tensor-parallel communication overlap and end stages of only the embedding or
// the head, against closed forms; Llama 3 405B's memory against Korthikanti et al.'s
// per-layer formula and the interleaved schedule's microbatches in flight.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "analysis/run.hpp"
#include "model_workload.hpp"
#include "models/cost_model.hpp"
#include "models/gpu.hpp"
#include "models/operators.hpp"
#include "models/pipeline.hpp"
#include "models/presets.hpp"
#include "models/roofline.hpp"

using namespace pipesim;
using namespace pipesim::models;
using pipesim::test::work;

namespace {

constexpr double gib = 1024.0 * 1024 * 1024;

OptimizerConfig zero(int stage, int d) {
    OptimizerConfig o;
    o.zero_stage = stage;
    o.data_parallel = d;
    return o;
}

}  // namespace

TEST_CASE("ZeRO stages shard optimizer state, then gradients, then weights", "[models]") {
    const double d = 64;
    // bf16 weights 2, fp32 gradients 4, fp32 master and Adam moments 12 (ZeRO, §5.3).
    CHECK(bytes_per_param(zero(0, 64)) == 18);
    CHECK(bytes_per_param(zero(1, 64)) == Approx(2 + 4 + 12 / d).epsilon(1e-15));
    CHECK(bytes_per_param(zero(2, 64)) == Approx(2 + (4 + 12) / d).epsilon(1e-15));
    CHECK(bytes_per_param(zero(3, 64)) == Approx((2 + 4 + 12) / d).epsilon(1e-15));
    // The distributed optimizer is ZeRO-1.
    OptimizerConfig dist;
    dist.distributed = true;
    dist.data_parallel = 64;
    CHECK(dist.sharding() == 1);
    CHECK(bytes_per_param(dist) == bytes_per_param(zero(1, 64)));
    CHECK_THROWS_WITH(bytes_per_param(zero(4, 64)), "ZeRO stage must be 0, 1, 2 or 3, got 4");
}

TEST_CASE("overlap never lengthens a pass and never hides its compute", "[models]") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> time(0, 2), share(0, 1);
    for (int i = 0; i < 1000; ++i) {
        const double compute = time(rng), comm = time(rng), e = share(rng);
        const double t = overlapped_seconds(compute, comm, e);
        CHECK(t <= compute + comm);
        CHECK(t >= std::max(compute, comm) * (1 - 1e-15));
    }
    CHECK(overlapped_seconds(3, 1, 1) == 3);
    CHECK(overlapped_seconds(3, 1, 0) == 4);

    // A plan with --tp-comm-overlap: each pass's exposed TP time is what overlapped_seconds()
    // leaves, between 0 and the whole collective time.
    const OperatorCostModel model(find_gpu("a100-80gb"));
    const TransformerConfig& c = find_model("llama2-13b");
    Workload w = work(1, 4096, 8);
    const PipelinePlan plain = plan_pipeline(c, w, OptimizerConfig{}, model, 4);
    w.tp_comm_overlap = true;
    const PipelinePlan overlapped = plan_pipeline(c, w, OptimizerConfig{}, model, 4);
    CHECK(overlapped.tp_overlap == tp_overlap_efficiency);
    for (std::size_t s = 0; s < plain.stages.size(); ++s) {
        const StagePlan &a = plain.stages[s], &b = overlapped.stages[s];
        CHECK(b.times.forward == a.times.forward);
        CHECK(b.tp_comm_times.forward >= 0);
        CHECK(b.tp_comm_times.forward < a.tp_comm_times.forward);
        const double f = a.times.forward, comm = a.tp_comm_times.forward;
        CHECK(f + b.tp_comm_times.forward ==
              Approx(f + comm - tp_overlap_efficiency * std::min(f, comm)).epsilon(1e-12));
        CHECK(b.tp_comm_times.backward_input < a.tp_comm_times.backward_input);
    }
}

TEST_CASE("a stage of 0 layers holds only the embedding or only the head", "[models]") {
    const OperatorCostModel model(find_gpu("a100-80gb"));
    const TransformerConfig& c = find_model("zb-1.5b");  // 22 layers
    PartitionOptions ends;
    ends.first_stage_layers = 0;
    ends.last_stage_layers = 0;
    const Workload w = work(6, 1024);
    const PipelinePlan plan = plan_pipeline(c, w, OptimizerConfig{}, model, 24, ends);
    const StagePlan &first = plan.stages.front(), &last = plan.stages.back();
    CHECK(first.layers == 0);
    CHECK(last.layers == 0);
    const double h = c.hidden, V = c.vocab;
    // Embedding Vh and learned positions sh; the untied head Vh and the final LayerNorm 2h.
    CHECK(first.params == Approx(V * h + c.seq_len * h).epsilon(1e-12));
    CHECK(last.params == Approx(V * h + 2 * h).epsilon(1e-12));
    CHECK(first.times.forward == Approx(model.embedding(c, w).forward).epsilon(1e-12));
    CHECK(last.times.forward == Approx(model.head(c, w).forward).epsilon(1e-12));
    CHECK(first.memory.activation == Approx(embedding_activation_bytes(c, w).activation));
    CHECK(last.memory.activation == Approx(head_activation_bytes(c, w).activation));
}

TEST_CASE("context parallelism splits a GPU's FLOPs, activations and messages by c", "[models]") {
    const TransformerConfig& c = find_model("llama3-8b");
    const auto flops = [&](const Workload& w) {
        double sum = 0;
        for (const Operator& op : layer_operators(c, w))
            sum += op.flops;
        return sum;
    };
    for (const auto kernel : {AttentionKernel::fused, AttentionKernel::unfused}) {
        Workload one = work(1, 16384, 2, true, Recompute::none, kernel);
        Workload four = one;
        four.cp = 4;
        // Every token-wise kernel runs on s/4 tokens; the attention core on s/4 queries
        // against all s keys: a quarter of the scores.
        CHECK(flops(four) == Approx(flops(one) / 4).epsilon(1e-12));
        const ActivationBytes a1 = layer_activation_bytes(c, one),
                              a4 = layer_activation_bytes(c, four);
        CHECK(a4.activation == Approx(a1.activation / 4).epsilon(1e-12));
        CHECK(a4.held_for_w == Approx(a1.held_for_w / 4).epsilon(1e-12));
        CHECK(head_activation_bytes(c, four).activation ==
              Approx(head_activation_bytes(c, one).activation / 4).epsilon(1e-12));
        CHECK(pipeline_message_bytes(c, four) == pipeline_message_bytes(c, one) / 4);
        CHECK(layer_tp_comm(c, four).bytes == layer_tp_comm(c, one).bytes / 4);
        // Model FLOPs (the numerator of MFU) are the whole sequence's, whatever c is.
        CHECK(layer_flops(c, four).total() == layer_flops(c, one).total());
    }
}

TEST_CASE("ring attention's transfers cost only what the attention core does not hide",
          "[models]") {
    const GpuSpec& gpu = find_gpu("h100-sxm");
    const TransformerConfig& c = find_model("llama3-8b");              // kv = 1024, h = 4096
    CHECK(cp_exposed_seconds(gpu, c, work(1, 8192, 8)).forward == 0);  // c = 1: no ring
    // t = 8, c = 4: across nodes, over the 400 Gb/s NIC. A block is K and V of s/c tokens:
    // 4 · 2048 · 1024/8 bytes; c − 1 of them in F, twice that in B.
    Workload w = work(1, 8192, 8);
    w.cp = 4;
    const double block = 4.0 * 2048 * 1024 / 8, nic = 400e9 / 8;
    const double attention = 4.0 * 2048 * 8192 * 4096 / 8 / 2 / gpu.peak_bf16_flops;
    // The attention core runs as c = 4 blocks, block i while block i + 1 moves: each of the
    // 3 steps takes the longer of a transfer and a quarter of the attention.
    const PassTimes ring = cp_exposed_seconds(gpu, c, w);
    CHECK(ring.forward ==
          Approx(3 * std::max(0.0, block / nic - attention / gpu.attention_forward_efficiency / 4))
              .margin(1e-15));
    CHECK(ring.backward_input ==
          Approx(3 * std::max(0.0, 2 * block / nic -
                                       2.5 * attention / gpu.attention_backward_efficiency / 4))
              .margin(1e-15));
    REQUIRE(ring.forward > 0);  // this case is exposed in both passes
    REQUIRE(ring.backward_input > 0);
    // A long sequence: the attention (∝ s²/c) outgrows the transfers (∝ s): all hidden.
    w.seq_len = 131072;
    CHECK(cp_exposed_seconds(gpu, c, w).forward == 0);
    CHECK(cp_exposed_seconds(gpu, c, w).backward_input == 0);
    // A short one: exposed, and the plan carries it beside the pass times (the analytic
    // engine adds it, SimGrid moves the blocks instead).
    w.seq_len = 1024;
    const PassTimes short_ring = cp_exposed_seconds(gpu, c, w);
    REQUIRE(short_ring.forward > 0);
    const OperatorCostModel model(gpu);
    const PipelinePlan plan = plan_pipeline(c, w, OptimizerConfig{}, model, 3);  // [1]: layers only
    const PassTimes layer = model.layer(c, w);
    const StagePlan& middle = plan.stages[1];
    CHECK(middle.times.forward == Approx(middle.layers * layer.forward).epsilon(1e-12));
    CHECK(middle.cp_ring_times.forward ==
          Approx(middle.layers * short_ring.forward).epsilon(1e-12));
    CHECK(middle.cp_ring_times.backward_input ==
          Approx(middle.layers * short_ring.backward_input).epsilon(1e-12));
    CHECK(plan.cp == 4);
    CHECK(plan.cp_block_bytes == 4.0 * 256 * 1024 / 8);  // s/c = 256 tokens
}

TEST_CASE("Llama 3 405B on 80 GB H100s: activations as Korthikanti et al. count them", "[models]") {
    // Llama 3 paper, Table 4 and §3.3.2: TP 8, PP 16, DP 128, 16 sequences of 8192 tokens per
    // pipeline, interleaved with one layer per chunk (126 + 2 = 16 · 8), the first chunk only
    // the embedding and the last only the head, no activation checkpointing.
    const int p = 16, v = 8, m = 16, t = 8;
    analysis::PipelineSpec spec;
    spec.schedule = "interleaved-1f1b";
    spec.generator = {p, m, v, 0};
    spec.tp = t;
    spec.dp = 128;
    analysis::ModelSpec model;
    model.model = "llama3-405b";
    model.gpu = "h100-sxm";
    model.workload.microbatch = 1;
    model.partition = {0, 0};
    model.optimizer.distributed = true;
    spec.costs.model = model;
    const analysis::Analysis a = analysis::run(spec);

    // Korthikanti et al. (2022), Table 2, with sequence parallelism and FlashAttention:
    // 34sbh/t per GPT layer. Component by component for Llama's shape (no dropout, GQA,
    // SwiGLU): norm inputs 4sbh, QKV input 2sbh, Q 2sbh and K, V 4sb·kv, projection input
    // 2sbh, MLP input 2sbh, gate/up outputs and their product 6sbf, the rows' fp32
    // log-sum-exp 4asb; all over t.
    const TransformerConfig& c = find_model("llama3-405b");
    const double s = 8192, h = c.hidden, kv = c.kv_dim(), f = c.ffn_or_default(), heads = c.heads;
    const double layer = s * (12 * h + 4 * kv + 6 * f + 4 * heads) / t;
    // Device k of interleaved 1F1B starts 2(p − k − 1) + (v − 1)·p chunk forwards before its
    // first backward (Narayanan et al., SC'21, §2.2's schedule as Megatron-LM runs it), so it
    // holds one more, at most all m·v: p·(1 + (p − 1)/(p·v)) stage-microbatches on the first
    // device when m is large enough (Korthikanti et al., §4.2.3); here m = p caps it.
    for (int k = 1; k < p - 1; ++k) {
        INFO("device " << k);
        const double chunks = std::min(m * v, 2 * (p - k - 1) + (v - 1) * p + 1);
        CHECK(a.model->activation_bytes[k] == Approx(chunks * layer).epsilon(1e-9));
    }
    // With the distributed optimizer (ZeRO-1) the fp32 gradient buffer stays whole: 6 bytes
    // per parameter and over the 79.6 GiB of an H100 on the fullest device; Llama 3's FSDP
    // shards the gradients too (ZeRO-2): 2 + 16/128, which fits.
    const double params = a.model->plan.stages[1].params * v;  // device 1: v one-layer stages
    const double zero1 = params * (6 + 12.0 / 128), zero2 = params * (2 + 16.0 / 128);
    const double capacity = find_gpu("h100-sxm").memory_bytes;
    CHECK(a.model->static_bytes[1] == Approx(zero1).epsilon(1e-12));
    CHECK(zero1 + a.model->activation_bytes[1] > capacity);
    CHECK(zero2 + a.model->activation_bytes[1] < capacity - 8 * gib);
}

TEST_CASE("with context parallelism the optimizer state is sharded over dp·C GPUs", "[models]") {
    // Megatron-LM's distributed optimizer shards over the data-parallel and context-parallel
    // ranks, which hold the same weights: per parameter 2 + 4 + 12/(d·c) bytes, and ZeRO-3
    // 18/(d·c).
    const auto static_bytes = [](int dp, int cp, bool distributed, int zero_stage) {
        analysis::PipelineSpec spec;
        spec.schedule = "1f1b";
        spec.generator = {2, 4, 0, 0};
        spec.dp = dp;
        analysis::ModelSpec model;
        model.model = "llama3-8b";
        model.gpu = "h100-sxm";
        model.workload.microbatch = 1;
        model.workload.seq_len = 4096;
        model.workload.cp = cp;
        model.optimizer.distributed = distributed;
        model.optimizer.zero_stage = zero_stage;
        spec.costs.model = model;
        const analysis::Analysis a = analysis::run(spec);
        double params = 0;  // device 0's stage
        for (std::size_t s = 0; s < a.model->plan.stages.size(); ++s)
            if (a.schedule.stage_device[s] == 0) params += a.model->plan.stages[s].params;
        return std::pair{a.model->static_bytes[0], params};
    };
    for (const auto& [dp, cp] : {std::pair{2, 2}, std::pair{1, 4}, std::pair{4, 2}}) {
        CAPTURE(dp, cp);
        const double n = dp * cp;
        const auto [dist, params] = static_bytes(dp, cp, true, 0);
        CHECK(dist == Approx(params * (2 + 4 + 12 / n)).epsilon(1e-12));
        CHECK(static_bytes(dp, cp, false, 2).first == Approx(params * (2 + 16 / n)).epsilon(1e-12));
        CHECK(static_bytes(dp, cp, false, 3).first == Approx(params * 18 / n).epsilon(1e-12));
        // Context parallelism splits the tokens, not the weights: without sharding each GPU
        // holds all 18 bytes of its stage's parameters, as with c = 1.
        CHECK(static_bytes(dp, cp, false, 0).first == Approx(params * 18).epsilon(1e-12));
        CHECK(static_bytes(dp, 1, false, 0).second == params);
    }
}
