// Ring attention's K/V transfers as messages in the SimGrid engine (context parallelism):
// pass times against the ring-attention pipeline's closed form, hidden on fast links and
// lengthened by exactly the exposed steps on slow ones, and against the analytic model on
// links as fast as the GPU's. Each simulation runs in a child process.
#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "analysis/run.hpp"
#include "child_process.hpp"
#include "models/gpu.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/simulate.hpp"
#include "simgrid_fixtures.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;
using pipesim::test::run_in_child;

namespace {

// One stage, one microbatch: F = 10 ms, B = 20 ms, W = 10 ms of compute on each of the C
// GPUs, 3 layers whose attention cores take 2 ms in F and 5 ms in B (part of the compute),
// and a 1 MB K/V block per layer and step.
constexpr double f_time = 0.01, b_time = 0.02, w_time = 0.01;
constexpr int layers = 3;
constexpr double block = 1e6, attention_f = 2e-3, attention_b = 5e-3;

SimWorkload ring_workload() {
    SimWorkload w = simple_workload(uniform_stage_costs(1, 1, f_time, b_time, w_time), 1, 0, 0);
    w.cp_ring.layers = {layers};
    w.cp_ring.block_bytes = block;
    w.cp_ring.attention_forward = attention_f;
    w.cp_ring.attention_backward = attention_b;
    return w;
}

// The ring-attention pipeline of one layer over c ranks: c attention blocks, block i
// computing while block i + 1 moves; each of the c − 1 steps takes the longer of its
// transfer (`step` seconds) and a block's compute, so the layer exceeds its attention by
// (c − 1)·max(0, step − attention/c).
double exposed(int c, double step, double attention) {
    return (c - 1) * std::max(0.0, step - attention / c);
}

struct Passes {
    double forward = 0, backward = 0, weight = 0;  // durations of the F, B and W ops
};

// Simulates `workload` with one stage and one microbatch on the cluster's GPUs as `cp`
// context-parallel ranks (call it in a child process: one simulation per process).
SimResult simulate_ring(const SimWorkload& workload, const ClusterSpec& cluster, int cp,
                        const SimOptions& options) {
    const Schedule s = generate_schedule("zb-h1", GeneratorOptions{1, 1, 1, 0});
    Layout layout{1, 1, 1};
    layout.cp = cp;
    return simulate(s, workload, cluster, layout, options);
}

// The op durations of simulate_ring().
Passes simulate_passes(const SimWorkload& workload, const ClusterSpec& cluster, int cp,
                       bool exact = false) {
    const std::string out = run_in_child([&] {
        SimOptions options;
        options.exact_collectives = exact;
        const SimResult sim = simulate_ring(workload, cluster, cp, options);
        double f = 0, b = 0, w = 0;
        for (const TimedOp& t : sim.timeline.device_ops[0])
            (t.op.pass == Pass::F ? f : t.op.pass == Pass::W ? w : b) = t.end - t.start;
        return fmt::format("{:.17g} {:.17g} {:.17g}", f, b, w);
    });
    INFO(out);
    Passes p;
    REQUIRE(std::sscanf(out.c_str(), "%lf %lf %lf", &p.forward, &p.backward, &p.weight) == 3);
    return p;
}

// `c` nodes of one GPU each, every link `bandwidth` bytes/s; routes between nodes take
// `latency` seconds.
ClusterSpec one_gpu_nodes(int c, double bandwidth, double latency) {
    return test::small_cluster(c, 1, "h100-sxm", LinkSpec{bandwidth, 1e-6},
                               LinkSpec{bandwidth, latency});
}

// The simulation mode and the first F's duration of one stage laid out as `layout`.
struct ModeAndForward {
    std::string mode;
    double forward = 0;
};
ModeAndForward first_forward(const ClusterSpec& cluster, const Layout& layout) {
    const std::string out = run_in_child([&] {
        const Schedule s = generate_schedule("zb-h1", GeneratorOptions{1, 1, 1, 0});
        const SimResult sim = simulate(s, ring_workload(), cluster, layout);
        const TimedOp& f = sim.timeline.device_ops[0].front();
        return fmt::format("{} {:.17g}", to_string(sim.mode), f.end - f.start);
    });
    INFO(out);
    char mode[16] = {};
    ModeAndForward r;
    REQUIRE(std::sscanf(out.c_str(), "%15s %lf", mode, &r.forward) == 2);
    r.mode = mode;
    return r;
}

}  // namespace

TEST_CASE("ring attention on fast links: every transfer hidden, the pass is its compute",
          "[simgrid][cp]") {
    // 10 GB/s: a step moves 1 MB in 0.1 ms (0.2 ms in B) plus 1 µs, under a block's
    // attention (0.5 ms in F, 1.25 ms in B with c = 4).
    const Passes p = simulate_passes(ring_workload(), one_gpu_nodes(4, 1e10, 1e-6), 4);
    CHECK(p.forward == Approx(f_time).epsilon(1e-9));
    CHECK(p.backward == Approx(b_time).epsilon(1e-9));
    CHECK(p.weight == Approx(w_time).epsilon(1e-9));
}

TEST_CASE("ring attention on a slow link: the pass grows by the exposed steps' closed form",
          "[simgrid][cp]") {
    // 0.5 GB/s and 10 µs between nodes: a step takes 2.01 ms in F (two blocks, 4.01 ms, in
    // B), longer than a block's attention.
    const double bandwidth = 5e8, latency = 1e-5;
    const double step_f = latency + block / bandwidth, step_b = latency + 2 * block / bandwidth;
    for (const int c : {2, 4}) {
        CAPTURE(c);
        const double extra_f = layers * exposed(c, step_f, attention_f);
        const double extra_b = layers * exposed(c, step_b, attention_b);
        REQUIRE(extra_f > 0);
        REQUIRE(extra_b > 0);
        const Passes p = simulate_passes(ring_workload(), one_gpu_nodes(c, bandwidth, latency), c);
        CHECK(p.forward == Approx(f_time + extra_f).epsilon(1e-9));
        CHECK(p.backward == Approx(b_time + extra_b).epsilon(1e-9));
        CHECK(p.weight == Approx(w_time).epsilon(1e-9));  // W needs no K/V
        // The flow set carries every step at once; step by step gives the same time.
        const Passes steps =
            simulate_passes(ring_workload(), one_gpu_nodes(c, bandwidth, latency), c, true);
        CHECK(steps.forward == Approx(p.forward).epsilon(1e-9));
        CHECK(steps.backward == Approx(p.backward).epsilon(1e-9));
    }
}

TEST_CASE("a ring across nodes moves at its slowest hop", "[simgrid][cp]") {
    // c = 4 on two nodes of two GPUs: two hops on 100 GB/s ports, two through 1 GB/s NICs.
    const double nic = 1e9, latency = 1e-5;
    const ClusterSpec cluster =
        test::small_cluster(2, 2, "h100-sxm", LinkSpec{1e11, 1e-6}, LinkSpec{nic, latency});
    const Passes p = simulate_passes(ring_workload(), cluster, 4);
    CHECK(p.forward ==
          Approx(f_time + layers * exposed(4, latency + block / nic, attention_f)).epsilon(1e-9));
    CHECK(
        p.backward ==
        Approx(b_time + layers * exposed(4, latency + 2 * block / nic, attention_b)).epsilon(1e-9));
}

TEST_CASE("replicas whose rings share a NIC each get half of it", "[simgrid][cp]") {
    // Two replicas, c = 2, the CP rank slowest (order tp,dp,cp,pp): replica r's ring is GPUs r
    // and r + 2, on two nodes of two GPUs with one NIC each, so both rings cross both NICs.
    // Symmetric mode cannot stand one replica for both: every replica's ring is simulated
    // and each step moves at half the NIC's rate.
    const double nic = 1e9, latency = 1e-5;
    const ClusterSpec cluster =
        test::small_cluster(2, 2, "h100-sxm", LinkSpec{1e11, 1e-6}, LinkSpec{nic, latency}, false);
    Layout layout{2, 1, 1};
    layout.cp = 2;
    layout.order = parse_layout_order("tp,dp,cp,pp");
    const auto [mode, forward] = first_forward(cluster, layout);
    CHECK(mode == "full");
    CHECK(
        forward ==
        Approx(f_time + layers * exposed(2, latency + 2 * block / nic, attention_f)).epsilon(1e-9));
}

TEST_CASE("replicas with rings of their own: one replica stands for all", "[simgrid][cp]") {
    // Two replicas, c = 2, default order tp,cp,dp,pp on four one-GPU nodes: rings {0, 1} and
    // {2, 3} share no link, so symmetric mode runs replica 0 and its steps see a whole NIC.
    const double nic = 1e9, latency = 1e-5;
    Layout layout{2, 1, 1};
    layout.cp = 2;
    const auto [mode, forward] = first_forward(one_gpu_nodes(4, nic, latency), layout);
    CHECK(mode == "symmetric");
    CHECK(forward ==
          Approx(f_time + layers * exposed(2, latency + block / nic, attention_f)).epsilon(1e-9));
}

TEST_CASE("a simulation's timeline records each pass's ring with the bytes each GPU sends",
          "[simgrid][cp]") {
    // c = 4 on the slow link of the test above: F sends layers·(c − 1) blocks, B twice as
    // many (a block and its gradient), W none; each record spans the ring's part of its op,
    // the exposed steps plus the compute they hide, from the op's start.
    const int c = 4;
    const double bandwidth = 5e8, latency = 1e-5;
    const std::string out = run_in_child([&] {
        SimOptions options;
        options.record_transfers = true;
        const SimResult sim =
            simulate_ring(ring_workload(), one_gpu_nodes(c, bandwidth, latency), c, options);
        std::string lines;
        for (const Transfer& x : sim.timeline.transfers) {
            const auto op =
                std::find_if(sim.timeline.device_ops[0].begin(), sim.timeline.device_ops[0].end(),
                             [&](const TimedOp& t) { return t.op == x.producer; });
            lines += fmt::format("{} {} {:.17g} {:.17g} {:.17g}\n", transfer_kind_name(x.kind),
                                 pass_name(x.producer.pass), x.bytes, x.start - op->start,
                                 x.end - x.start);
        }
        return lines;
    });
    INFO(out);
    const double step_f = latency + block / bandwidth, step_b = latency + 2 * block / bandwidth;
    const double ring_f = layers * ((c - 1) * attention_f / c + exposed(c, step_f, attention_f));
    const double ring_b = layers * ((c - 1) * attention_b / c + exposed(c, step_b, attention_b));
    int records = 0;
    for (std::size_t at = 0; at < out.size();) {
        const std::size_t end = out.find('\n', at);
        char kind[32] = {}, pass[4] = {};
        double bytes = 0, offset = 0, span = 0;
        REQUIRE(std::sscanf(out.substr(at, end - at).c_str(), "%31s %3s %lf %lf %lf", kind, pass,
                            &bytes, &offset, &span) == 5);
        at = end + 1;
        CHECK(std::string(kind) == "context-parallel");
        CHECK(offset == Approx(0).margin(1e-12));
        if (std::string(pass) == "F") {
            CHECK(bytes == Approx(layers * (c - 1) * block));
            CHECK(span == Approx(ring_f).epsilon(1e-9));
        } else {
            CHECK(std::string(pass) == "B");
            CHECK(bytes == Approx(layers * (c - 1) * 2 * block));
            CHECK(span == Approx(ring_b).epsilon(1e-9));
        }
        ++records;
    }
    CHECK(records == 2);  // one F and one B; W moves nothing
}

TEST_CASE("without context parallelism the ring is not simulated", "[simgrid][cp]") {
    // C = 1 with ring figures given, and C = 2 on slow links without them: the compute only.
    const Passes one = simulate_passes(ring_workload(), one_gpu_nodes(1, 1e9, 1e-5), 1);
    CHECK(one.forward == Approx(f_time).epsilon(1e-12));
    CHECK(one.backward == Approx(b_time).epsilon(1e-12));
    SimWorkload no_ring = ring_workload();
    no_ring.cp_ring = {};
    const Passes two = simulate_passes(no_ring, one_gpu_nodes(2, 1e9, 1e-5), 2);
    CHECK(two.forward == Approx(f_time).epsilon(1e-12));
    CHECK(two.backward == Approx(b_time).epsilon(1e-12));
}

TEST_CASE("a model's simulated ring takes what analyze adds on links at the GPU's rate",
          "[simgrid][cp][analysis]") {
    // Llama 3 8B, s = 512, c = 2 on one H100 node: the ring runs over NVLink at the TP bus
    // bandwidth in the analytic model; a cluster whose ports move at that rate with no
    // latency gives SimGrid the same steps, so F and B agree with analyze's (which add the
    // exposed transfers to the compute) instead of counting them twice.
    analysis::PipelineSpec spec;
    spec.schedule = "zb-h1";
    spec.generator = {1, 1, 0, 0};
    analysis::ModelSpec model;
    model.model = "llama3-8b";
    model.gpu = "h100-sxm";
    model.workload.microbatch = 1;
    model.workload.seq_len = 512;
    model.workload.cp = 2;
    spec.costs.model = model;
    const analysis::Analysis replayed = analysis::run(spec);
    REQUIRE(replayed.model->plan.stages[0].cp_ring_times.forward > 0);
    REQUIRE(replayed.model->plan.stages[0].cp_ring_times.backward_input > 0);
    const double bus = models::find_gpu("h100-sxm").tp_bus_bandwidth;
    const std::string out = run_in_child([&] {
        analysis::SimGridEngine engine;
        engine.cluster = test::small_cluster(1, 2, "h100-sxm", LinkSpec{bus, 0}, LinkSpec{bus, 0});
        const analysis::Analysis simulated = analysis::run(spec, engine);
        std::string line;
        for (const TimedOp& t : simulated.timeline.device_ops[0])
            line += fmt::format("{:.17g} ", t.end - t.start);
        return line;
    });
    INFO(out);
    const auto& ops = replayed.timeline.device_ops[0];
    std::size_t at = 0;
    for (const TimedOp& t : ops) {
        double simulated = 0;
        int used = 0;
        REQUIRE(std::sscanf(out.c_str() + at, "%lf %n", &simulated, &used) == 1);
        at += static_cast<std::size_t>(used);
        CAPTURE(to_string(t.op));
        CHECK(simulated == Approx(t.end - t.start).epsilon(1e-9));
    }
}

TEST_CASE("ring figures that do not fit the schedule are refused", "[simgrid][cp][errors]") {
    SimWorkload bad = ring_workload();
    bad.cp_ring.layers = {3, 3};
    const std::string out = run_in_child([&] {
        const Schedule s = generate_schedule("zb-h1", GeneratorOptions{1, 1, 1, 0});
        Layout layout{1, 1, 1};
        layout.cp = 2;
        try {
            simulate(s, bad, one_gpu_nodes(2, 1e9, 1e-5), layout);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    });
    CHECK(out == "workload has 2 cp_ring.layers entries, expected 1");
}
