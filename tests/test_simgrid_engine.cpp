// The SimGrid engine against the analytic replay and closed-form network timings. Each
// simulation runs in a child process (SimGrid allows one engine per process).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "analysis/cluster_workload.hpp"
#include "child_process.hpp"
#include "models/gpu.hpp"
#include "random_costs.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"
#include "sim/simgrid/simulate.hpp"
#include "simgrid_fixtures.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;
using namespace pipesim::sim;
using pipesim::test::run_in_child;

namespace {

// `nodes` nodes of `per_node` GPUs; every link has the given bandwidth (bytes/s) and the
// routes have the given latencies.
ClusterSpec test_cluster(int nodes, int per_node, double bandwidth, double intra_latency,
                         double inter_latency, bool nic_per_gpu = true) {
    return test::small_cluster(nodes, per_node, "h100-sxm", LinkSpec{bandwidth, intra_latency},
                               LinkSpec{bandwidth, inter_latency}, nic_per_gpu);
}

StageCosts random_costs(int stages, unsigned seed) {
    std::mt19937 rng(seed);
    return test::random_costs(stages, rng, 0.5, 2.0);
}

// Largest |simulated − replayed| over every op's start and end, relative to the makespan.
double max_relative_difference(const Timeline& a, const Timeline& b) {
    double makespan = 0, worst = 0;
    for (const auto& ops : b.device_ops)
        for (const TimedOp& t : ops)
            makespan = std::max(makespan, t.end);
    if (a.device_ops.size() != b.device_ops.size()) return INFINITY;
    for (std::size_t d = 0; d < a.device_ops.size(); ++d) {
        if (a.device_ops[d].size() != b.device_ops[d].size()) return INFINITY;
        for (std::size_t i = 0; i < a.device_ops[d].size(); ++i) {
            if (!(a.device_ops[d][i].op == b.device_ops[d][i].op)) return INFINITY;
            worst = std::max({worst, std::abs(a.device_ops[d][i].start - b.device_ops[d][i].start),
                              std::abs(a.device_ops[d][i].end - b.device_ops[d][i].end)});
        }
    }
    return worst / makespan;
}

double number(const std::string& text) {
    INFO(text);
    std::istringstream in(text);
    double value = NAN;
    in >> value;
    REQUIRE(!in.fail());
    return value;
}

// F, B and W durations of one ZB-H1 microbatch on one device: compute `compute` each, the
// workload's other fields set by `setup`, on `cluster` with `layout`.
template <class Setup>
std::array<double, 3> pass_lengths(double compute, Setup setup, const ClusterSpec& cluster,
                                   const Layout& layout) {
    const std::string result = run_in_child([&] {
        const Schedule s = generate_schedule("zb-h1", GeneratorOptions{1, 1, 1, 0});
        SimWorkload w =
            simple_workload(uniform_stage_costs(1, 1, compute, compute, compute), 1, 0, 0);
        setup(w);
        const SimResult sim = simulate(s, w, cluster, layout);
        std::string out;
        for (const TimedOp& t : sim.timeline.device_ops[0])
            out += fmt::format("{:.17g} ", t.end - t.start);
        return out;
    });
    INFO(result);
    std::istringstream in(result);
    std::array<double, 3> fbw{};
    in >> fbw[0] >> fbw[1] >> fbw[2];
    REQUIRE(!in.fail());
    return fbw;
}

}  // namespace

TEST_CASE("with unlimited bandwidth and latency c, SimGrid equals the analytic replay",
          "[simgrid]") {
    struct Shape {
        int p, m;
    };
    std::map<std::string, int> checked;
    for (const ScheduleGenerator& g : schedule_generators()) {
        checked[std::string(g.name)];  // present with 0 until a shape runs
        for (const Shape shape : {Shape{2, 4}, Shape{4, 8}, Shape{3, 7}}) {
            for (double latency : {0.0, 0.05}) {
                Schedule schedule;
                try {
                    schedule = generate_schedule(g.name, GeneratorOptions{shape.p, shape.m, 0, 0});
                } catch (const std::invalid_argument&) {
                    continue;  // a shape this schedule does not take
                }
                CAPTURE(g.name, shape.p, shape.m, latency);
                const std::string result = run_in_child([&] {
                    const StageCosts costs = random_costs(schedule.stages(), 7);
                    ReplayOptions replay_options;
                    replay_options.comm_latency = latency;
                    const Timeline expected = replay(schedule, costs, replay_options);
                    // 1 MB messages over 10^18 B/s links add 10^-12 s per hop.
                    const SimResult sim =
                        simulate(schedule, simple_workload(costs, schedule.devices, 1e6, 0),
                                 test_cluster(schedule.devices, 1, 1e18, latency, latency),
                                 Layout{1, schedule.devices, 1});
                    return fmt::format("{:.17g}", max_relative_difference(sim.timeline, expected));
                });
                CHECK(number(result) < 1e-9);
                ++checked[std::string(g.name)];
            }
        }
    }
    // Every registered generator ran for at least one shape (a generator that throws for all
    // of them would otherwise drop out unseen); the classic ones for at least two.
    REQUIRE(checked.size() == schedule_generators().size());
    for (const auto& [name, count] : checked) {
        INFO("generator " << name << " ran for none of the shapes tried");
        REQUIRE(count >= 1);
    }
    for (const char* name : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2"}) {
        CAPTURE(name);
        CHECK(checked.at(name) >= 4);
    }
}

TEST_CASE(
    "SimGrid equals the analytic replay for interleaved 1F1B with v = 3 and 4, steps paired or not",
    "[simgrid]") {
    for (int v : {3, 4})
        for (bool step_exchange : {false, true}) {
            CAPTURE(v, step_exchange);
            Schedule schedule = generate_schedule("interleaved-1f1b", GeneratorOptions{4, 8, v, 0});
            if (step_exchange) pair_steps(schedule);  // Megatron-LM without p2p overlap
            const std::string result = run_in_child([&] {
                const StageCosts costs = random_costs(schedule.stages(), 11);
                ReplayOptions replay_options;
                replay_options.comm_latency = 0.02;
                const Timeline expected = replay(schedule, costs, replay_options);
                const SimResult sim =
                    simulate(schedule, simple_workload(costs, 4, 1e6, 0),
                             test_cluster(2, 2, 1e18, 0.02, 0.02), Layout{1, 4, 1});
                return fmt::format("{:.17g}", max_relative_difference(sim.timeline, expected));
            });
            CHECK(number(result) < 1e-9);
        }
}

TEST_CASE("a transfer takes latency + bytes / bandwidth", "[simgrid]") {
    const std::string result = run_in_child([] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 1, 1, 0});
        const SimResult sim =
            simulate(s, simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 2e6, 0),
                     test_cluster(2, 1, 1e9, 1e-6, 1e-5), Layout{1, 2, 1});
        const Transfer& forward = sim.timeline.transfers.at(0);
        const double f_start_device1 = sim.timeline.device_ops[1].front().start;
        return fmt::format("{:.17g} {:.17g}", forward.end - forward.start, f_start_device1);
    });
    std::istringstream in(result);
    double duration = 0, start = 0;
    in >> duration >> start;
    INFO(result);
    CHECK(duration == Approx(1e-5 + 2e6 / 1e9).epsilon(1e-12));
    CHECK(start == Approx(1.0 + 1e-5 + 2e6 / 1e9).epsilon(1e-12));  // after F on device 0
}

TEST_CASE("a message of no bytes between nodes is recorded from its send to its arrival",
          "[simgrid]") {
    // Without a model or --message-bytes the messages carry no bytes; SimGrid gives some such
    // communications no finish time, and the timeline (traces, Python) must still hold an end
    // between the send and the receiving op's start.
    const std::string result = run_in_child([] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{16, 32, 1, 0});
        const SimResult sim =
            simulate(s, simple_workload(uniform_stage_costs(16, 1, 1, 1, 1), 16, 0, 0),
                     load_cluster("dgx-h100"), Layout{1, 16, 1});
        std::string out = fmt::format("{}", sim.timeline.transfers.size());
        for (const Transfer& t : sim.timeline.transfers) {
            double consumer_start = -1;
            for (const TimedOp& op : sim.timeline.device_ops[t.dst_device])
                if (op.op == t.consumer) consumer_start = op.start;
            out += fmt::format(" {:.17g} {:.17g} {:.17g}", t.start, t.end, consumer_start);
        }
        return out;
    });
    INFO(result);
    std::istringstream in(result);
    std::size_t transfers = 0;
    in >> transfers;
    CHECK(transfers == 2 * 32 * 15);  // each microbatch's F and B cross every boundary
    for (std::size_t i = 0; i < transfers; ++i) {
        double start = 0, end = 0, consumer = 0;
        in >> start >> end >> consumer;
        CHECK(end >= start);
        CHECK(end <= consumer);
    }
}

TEST_CASE("a message inside a node moves at NCCL's point-to-point rate, one between nodes not",
          "[simgrid]") {
    // Two stages on one node, then on two nodes (one GPU per node): the node's port is
    // 1 GB/s, NCCL's send/receive inside it reaches 0.25 GB/s; the NIC is not bounded.
    for (int per_node : {2, 1}) {
        CAPTURE(per_node);
        const std::string result = run_in_child([per_node] {
            const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 1, 1, 0});
            ClusterSpec c = test_cluster(2 / per_node, per_node, 1e9, 1e-6, 1e-5);
            c.intra_node_p2p_bandwidth = 0.25e9;
            const SimResult sim =
                simulate(s, simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 2e6, 0), c,
                         Layout{1, 2, 1});
            const Transfer& forward = sim.timeline.transfers.at(0);
            return fmt::format("{:.17g}", forward.end - forward.start);
        });
        const double expected = per_node == 2 ? 1e-6 + 2e6 / 0.25e9 : 1e-5 + 2e6 / 1e9;
        CHECK(number(result) == Approx(expected).epsilon(1e-9));
    }
    // --bw-scale 2 doubles that rate with the links (the cap once stayed where it was).
    const std::string scaled = run_in_child([] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 1, 1, 0});
        ClusterSpec c = test_cluster(1, 2, 1e9, 1e-6, 1e-5);
        c.intra_node_p2p_bandwidth = 0.25e9;
        SimOptions options;
        options.bandwidth_scale = 2;
        const SimResult sim =
            simulate(s, simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 2e6, 0), c,
                     Layout{1, 2, 1}, options);
        const Transfer& forward = sim.timeline.transfers.at(0);
        return fmt::format("{:.17g}", forward.end - forward.start);
    });
    CHECK(number(scaled) == Approx(1e-6 + 2e6 / 0.5e9).epsilon(1e-9));
}

TEST_CASE("with tensor parallelism the receiving GPUs all-gather a scattered message first",
          "[simgrid]") {
    // Two stages of t = 2 on two nodes of two GPUs: each GPU of stage 0 sends its 2 MB piece
    // through its own NIC, then the two GPUs of stage 1 all-gather the 4 MB message (a ring
    // of two: one step moving 2 MB over the node's link) before F starts there.
    const std::string result = run_in_child([] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 1, 1, 0});
        SimOptions options;
        options.record_transfers = true;
        const SimResult sim =
            simulate(s, simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 2e6, 0),
                     test_cluster(2, 2, 1e9, 1e-6, 1e-5), Layout{1, 2, 2}, options);
        double gathered = 0;
        for (const Transfer& x : sim.timeline.transfers)
            if (x.kind == TransferKind::tensor_parallel && x.producer.pass == Pass::F &&
                x.src_device == 1)
                gathered = x.bytes;
        return fmt::format("{:.17g} {:.17g}", sim.timeline.device_ops[1].front().start, gathered);
    });
    std::istringstream in(result);
    double start = 0, gathered = 0;
    in >> start >> gathered;
    INFO(result);
    CHECK(start == Approx(1.0 + (1e-5 + 2e6 / 1e9) + (1e-6 + 2e6 / 1e9)).epsilon(1e-9));
    // The record is what each GPU sends: its 2 MB piece to the other.
    CHECK(gathered == Approx(2e6));
}

TEST_CASE("two transfers through one NIC direction take twice as long — separate NICs do not",
          "[simgrid]") {
    // dp = 2 replicas of a 2-stage pipeline; order tp,dp,pp puts both replicas' stage 0 on
    // node 0 and stage 1 on node 1, so both first activations leave node 0 together.
    for (bool nic_per_gpu : {false, true}) {
        CAPTURE(nic_per_gpu);
        const std::string result = run_in_child([nic_per_gpu] {
            const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 1, 1, 0});
            const SimResult sim =
                simulate(s, simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 4e6, 0),
                         test_cluster(2, 2, 1e9, 1e-6, 1e-5, nic_per_gpu), Layout{2, 2, 1});
            const Transfer& forward = sim.timeline.transfers.at(0);
            return fmt::format("{:.17g}", forward.end - forward.start);
        });
        const double expected = 1e-5 + (nic_per_gpu ? 1 : 2) * 4e6 / 1e9;
        CHECK(number(result) == Approx(expected).epsilon(1e-9));
    }
}

TEST_CASE("transfers in opposite directions of a link do not interfere", "[simgrid]") {
    // Two model copies on p = 2 (V-shape): microbatch 0 flows device 0 → 1 while microbatch 1
    // flows device 1 → 0, so the first two activations cross the same NICs at the same time
    // in opposite directions. One NIC per node, one GPU per node.
    Schedule s = make_empty_schedule("two-way", 2, 2, 2, vshape_placement(2, 2));
    s.microbatch_stages = {{0, 1}, {2, 3}};
    s.device_ops[0] = {{Pass::F, 0, 0}, {Pass::F, 1, 3}, {Pass::BW, 1, 3}, {Pass::BW, 0, 0}};
    s.device_ops[1] = {{Pass::F, 1, 2}, {Pass::F, 0, 1}, {Pass::BW, 0, 1}, {Pass::BW, 1, 2}};
    const std::string result = run_in_child([&] {
        const SimResult sim =
            simulate(s, simple_workload(uniform_stage_costs(2, 2, 2, 2, 2), 2, 4e6, 0),
                     test_cluster(2, 1, 1e9, 1e-6, 1e-5, false), Layout{1, 2, 1});
        std::string out;
        for (const Transfer& t : sim.timeline.transfers)
            if (t.producer.pass == Pass::F) out += fmt::format("{:.17g} ", t.end - t.start);
        return out;
    });
    std::istringstream in(result);
    double first = 0, second = 0;
    in >> first >> second;
    INFO(result);
    CHECK(first == Approx(1e-5 + 4e6 / 1e9).epsilon(1e-9));
    CHECK(second == Approx(1e-5 + 4e6 / 1e9).epsilon(1e-9));
}

TEST_CASE("ring all-reduce of S bytes over n GPUs takes 2(n−1)(L + S/(n·B))", "[simgrid]") {
    for (int n : {2, 4, 5}) {
        CAPTURE(n);
        const double bytes = 1e8, bandwidth = 1e10, latency = 2e-5;
        const std::string result = run_in_child([&] {
            const Schedule s = generate_schedule("1f1b", GeneratorOptions{1, 1, 1, 0});
            SimOptions after_pipeline;
            after_pipeline.overlap_grad_reduce = false;
            const SimResult sim = simulate(
                s, simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, bytes),
                test_cluster(n, 1, bandwidth, 1e-6, latency), Layout{n, 1, 1}, after_pipeline);
            return fmt::format("{:.17g} {:.17g}", sim.grad_reduce_time, sim.iteration_time);
        });
        std::istringstream in(result);
        double reduce = 0, iteration = 0;
        in >> reduce >> iteration;
        INFO(result);
        const double expected = 2.0 * (n - 1) * (latency + bytes / n / bandwidth);
        CHECK(reduce == Approx(expected).epsilon(1e-9));
        CHECK(iteration == Approx(3.0 + expected).epsilon(1e-9));  // F+B+W = 3, then reduce
    }
}

TEST_CASE("context-parallel ranks all-reduce their gradients with the replicas: D·C members",
          "[simgrid]") {
    // (D, C) = (1, 2), (2, 2), (1, 4): one ring of n = D·C GPUs, each on its own node.
    for (const auto& [d, c] : {std::pair{1, 2}, std::pair{2, 2}, std::pair{1, 4}}) {
        CAPTURE(d, c);
        const int n = d * c;
        const double bytes = 1e8, bandwidth = 1e10, latency = 2e-5;
        const std::string result = run_in_child([&, d = d, c = c] {
            const Schedule s = generate_schedule("1f1b", GeneratorOptions{1, 1, 1, 0});
            SimOptions after_pipeline;
            after_pipeline.overlap_grad_reduce = false;
            Layout layout{d, 1, 1};
            layout.cp = c;
            const SimResult sim =
                simulate(s, simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, bytes),
                         test_cluster(n, 1, bandwidth, 1e-6, latency), layout, after_pipeline);
            return fmt::format("{:.17g} {:.17g} {}", sim.grad_reduce_time, sim.iteration_time,
                               sim.gpus_used);
        });
        std::istringstream in(result);
        double reduce = 0, iteration = 0;
        int gpus = 0;
        in >> reduce >> iteration >> gpus;
        INFO(result);
        const double expected = 2.0 * (n - 1) * (latency + bytes / n / bandwidth);
        CHECK(gpus == n);
        CHECK(reduce == Approx(expected).epsilon(1e-9));
        CHECK(iteration == Approx(3.0 + expected).epsilon(1e-9));
    }
}

TEST_CASE("a straggler at factor k on one stage acts as that stage's costs × k", "[simgrid]") {
    const double k = 1.7;
    const Schedule s = generate_schedule("1f1b", GeneratorOptions{4, 8, 1, 0});
    StageCosts slow = uniform_stage_costs(4, 1, 1, 2, 1);
    slow.forward[2] *= k;
    slow.backward_input[2] *= k;
    slow.backward_weight[2] *= k;
    const double expected = replay(s, slow).device_ops[0].back().end;
    const std::string result = run_in_child([&] {
        SimOptions options;
        options.stragglers = {{2, k}};
        const SimResult sim =
            simulate(s, simple_workload(uniform_stage_costs(4, 1, 1, 2, 1), 4, 1e3, 0),
                     test_cluster(4, 1, 1e18, 0, 0), Layout{1, 4, 1}, options);
        return fmt::format("{:.17g}", sim.iteration_time);
    });
    CHECK(number(result) == Approx(expected).epsilon(1e-9));
    CHECK(expected > replay(s, uniform_stage_costs(4, 1, 1, 2, 1)).device_ops[0].back().end);
}

TEST_CASE("GPUs of another type run at their peak relative to the reference GPU", "[simgrid]") {
    const std::string result = run_in_child([] {
        ClusterSpec c = test_cluster(1, 1, 1e18, 0, 0);
        c.nodes = {NodeGroup{1, "a100-80gb", 0}, NodeGroup{1, "h100-sxm", 0}};
        const Schedule s = generate_schedule("gpipe", GeneratorOptions{2, 1, 1, 0});
        SimWorkload w = simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 0, 0);
        w.group_speeds = analysis::node_group_speeds(c, "a100-80gb");
        const SimResult sim = simulate(s, w, c, Layout{1, 2, 1});
        const TimedOp& f = sim.timeline.device_ops[1].front();
        return fmt::format("{:.17g}", f.end - f.start);
    });
    // Dense bf16 peaks: A100 312 TFLOP/s, H100 SXM 989.4 TFLOP/s (NVIDIA datasheets).
    CHECK(number(result) == Approx(312.0 / 989.4).epsilon(1e-9));
}

TEST_CASE("a layout on none of the costs' GPUs is warned of, a mixed one or given speeds not",
          "[simgrid]") {
    ClusterSpec c = test_cluster(1, 1, 1e18, 0, 0);
    const models::GpuSpec& h100 = models::find_gpu("h100-sxm");
    const Layout two{1, 2, 1};  // GPUs 0 and 1: nodes 0 and 1 (one GPU a node)
    c.nodes = {NodeGroup{2, "a100-80gb", 0}};
    const auto warning = analysis::foreign_gpu_warning(c, two, h100, true);
    REQUIRE(warning);
    // 312 / 989.4 TFLOP/s dense bf16 (NVIDIA datasheets) = 0.315.
    CHECK_THAT(*warning, Catch::Contains("a100-80gb 0.315×"));
    CHECK_THAT(*warning, Catch::Contains("--gpu a100-80gb"));
    // The single-efficiency model's FLOPs over a peak scale exactly by the peaks' ratio.
    CHECK_FALSE(analysis::foreign_gpu_warning(c, two, h100, false));

    c.nodes = {NodeGroup{1, "a100-80gb", 0}, NodeGroup{1, "h100-sxm", 0}};
    CHECK_FALSE(analysis::foreign_gpu_warning(c, two, h100, true));
    CHECK(analysis::layout_gpus(c, two, h100) == std::vector<std::string>{"a100-80gb", "h100-sxm"});
    // A layout on the first node alone ran on none of the H100s the cluster has.
    const Layout one{1, 1, 1};
    CHECK(analysis::foreign_gpu_warning(c, one, h100, true));
    CHECK(analysis::layout_gpus(c, one, h100) == std::vector<std::string>{"a100-80gb"});
    c.nodes = {NodeGroup{2, "a100-80gb", 0.5}};
    CHECK_FALSE(analysis::foreign_gpu_warning(c, two, h100, true));

    // A GPU file measuring the cluster's preset (its "base") is that GPU: no warning, its
    // own speed, and its memory for the devices (the preset's held them, and the advice
    // was to drop the file for the preset).
    models::GpuSpec measured = models::find_gpu("a100-80gb");
    measured.name = "a100-measured";
    measured.base = "a100-80gb";
    measured.memory_bytes = 1e6;
    c.nodes = {NodeGroup{2, "a100-80gb", 0}};
    CHECK_FALSE(analysis::foreign_gpu_warning(c, two, measured, true));
    CHECK(analysis::layout_gpus(c, two, measured) == std::vector<std::string>{"a100-measured"});
    CHECK(analysis::node_group_speeds(c, measured) == std::vector<double>{1.0});
    const auto gpus = analysis::device_gpus(c, two, measured);
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0].name == "a100-measured");
    CHECK(gpus[1].memory_bytes == 1e6);
}

TEST_CASE("tensor-parallel all-reduces lengthen F and B but not W", "[simgrid]") {
    const double bytes = 4e6, bandwidth = 1e11, latency = 1e-6;
    const auto tp = [&](double overlap) {
        return [=](SimWorkload& w) {
            w.tp_allreduces_forward = {2};
            w.tp_allreduces_backward = {3};
            w.tp_allreduce_bytes = {bytes};
            w.tp_overlap = overlap;
        };
    };
    const ClusterSpec node = test_cluster(1, 4, bandwidth, latency, 1e-5);
    const auto [f, b, w] = pass_lengths(1, tp(0), node, Layout{1, 1, 4});
    const double one = 2.0 * 3 * (latency + bytes / 4 / bandwidth);  // ring of T = 4
    CHECK(f == Approx(1 + 2 * one).epsilon(1e-9));
    CHECK(b == Approx(1 + 3 * one).epsilon(1e-9));
    CHECK(w == Approx(1).epsilon(1e-12));

    // Overlapped: compute + comm − 0.96 · min(compute, comm), between the longer of the two
    // and their sum, whichever is longer.
    for (const double compute : {1.0, 1e-4}) {
        INFO("compute " << compute);
        const auto [fo, bo, wo] = pass_lengths(compute, tp(0.96), node, Layout{1, 1, 4});
        CHECK(fo == Approx(compute + 2 * one - 0.96 * std::min(compute, 2 * one)).epsilon(1e-9));
        CHECK(bo == Approx(compute + 3 * one - 0.96 * std::min(compute, 3 * one)).epsilon(1e-9));
        CHECK(fo >= compute);
        CHECK(fo <= compute + 2 * one * (1 + 1e-9));
        CHECK(wo == Approx(compute).epsilon(1e-12));
    }
}

TEST_CASE("a simulation's timeline records each op's tensor-parallel all-reduces", "[simgrid]") {
    // The setup above without overlap: one record per F and B, of the bytes each GPU sends
    // in its all-reduces (count × 2(T − 1)/T × size: a ring's 2(T − 1) steps of size/T) and
    // spanning them, right after the op's compute.
    const double bytes = 4e6, bandwidth = 1e11, latency = 1e-6;
    const std::string result = run_in_child([&] {
        const Schedule s = generate_schedule("zb-h1", GeneratorOptions{1, 1, 1, 0});
        SimWorkload w = simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, 0);
        w.tp_allreduces_forward = {2};
        w.tp_allreduces_backward = {3};
        w.tp_allreduce_bytes = {bytes};
        SimOptions options;
        options.record_transfers = true;
        const SimResult sim =
            simulate(s, w, test_cluster(1, 4, bandwidth, latency, 1e-5), Layout{1, 1, 4}, options);
        std::string out;
        for (const Transfer& x : sim.timeline.transfers)
            out += fmt::format("{} {} {:.17g} {:.17g} ", transfer_kind_name(x.kind),
                               pass_name(x.producer.pass), x.bytes, x.end - x.start);
        return out;
    });
    INFO(result);
    const double one = 2.0 * 3 * (latency + bytes / 4 / bandwidth);  // ring of T = 4
    std::istringstream in(result);
    std::string kind_f, pass_f, kind_b, pass_b, rest;
    double bytes_f = 0, span_f = 0, bytes_b = 0, span_b = 0;
    in >> kind_f >> pass_f >> bytes_f >> span_f >> kind_b >> pass_b >> bytes_b >> span_b;
    REQUIRE(!in.fail());
    CHECK_FALSE(in >> rest);  // nothing for W
    CHECK(kind_f == "tensor-parallel");
    CHECK(pass_f == "F");
    CHECK(bytes_f == Approx(2 * 1.5 * bytes));
    CHECK(span_f == Approx(2 * one).epsilon(1e-9));
    CHECK(kind_b == "tensor-parallel");
    CHECK(pass_b == "B");
    CHECK(bytes_b == Approx(3 * 1.5 * bytes));
    CHECK(span_b == Approx(3 * one).epsilon(1e-9));
}

TEST_CASE("ZeRO-3 all-gathers the parameters before F and B, hidden behind longer compute",
          "[simgrid]") {
    // Two replicas, one GPU per node: the all-gather of P bytes over two GPUs is one ring
    // step of P/2 per member, L + P/(2·bandwidth).
    const double bytes = 2e8, bandwidth = 1e11, latency = 1e-5;
    const double gather = latency + bytes / 2 / bandwidth;
    const auto zero3 = [&](SimWorkload& w) {
        w.param_fetch_bytes = {bytes};
        w.param_gather_bytes = {0.0};
    };
    for (const double compute : {0.01, 1e-4}) {
        INFO("compute " << compute);
        const auto [f, b, w] = pass_lengths(
            compute, zero3, test_cluster(2, 1, bandwidth, 1e-6, latency), Layout{2, 1, 1});
        CHECK(f == Approx(std::max(compute, gather)).epsilon(1e-6));
        CHECK(b == Approx(std::max(compute, gather)).epsilon(1e-6));
        CHECK(w == Approx(compute).epsilon(1e-12));  // W needs no weights
    }
}

TEST_CASE("simulate refuses a second engine in one process and layouts that do not fit",
          "[simgrid]") {
    const std::string twice = run_in_child([] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 2, 1, 0});
        const SimWorkload w = simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 0, 0);
        simulate(s, w, test_cluster(2, 1, 1e9, 0, 0), Layout{1, 2, 1});
        simulate(s, w, test_cluster(2, 1, 1e9, 0, 0), Layout{1, 2, 1});
        return std::string("ran twice");
    });
    CHECK(twice == "exception: SimGrid allows one simulation per process; this one has run");

    const Schedule s = generate_schedule("1f1b", GeneratorOptions{4, 2, 1, 0});
    const SimWorkload w = simple_workload(uniform_stage_costs(4, 1, 1, 1, 1), 4, 0, 0);
    CHECK_THROWS_WITH(simulate(s, w, test_cluster(1, 8, 1e9, 0, 0), Layout{4, 4, 1}),
                      "layout dp=4 × pp=4 × tp=1 needs 16 GPUs; cluster 'test' has 8 (1 node × 8)");
    CHECK_THROWS_WITH(simulate(s, w, test_cluster(8, 2, 1e9, 0, 0), Layout{1, 4, 4}),
                      Catch::Contains("tensor parallelism must stay inside a node of 2 GPUs"));
    CHECK_THROWS_WITH(simulate(s, w, test_cluster(4, 1, 1e9, 0, 0), Layout{1, 2, 1}),
                      "layout has pp = 2 but the schedule has 4 devices");
    SimOptions bad;
    bad.stragglers = {{9, 2.0}};
    CHECK_THROWS_WITH(simulate(s, w, test_cluster(4, 1, 1e9, 0, 0), Layout{1, 4, 1}, bad),
                      "straggler GPU 9 is not one of the 4 GPUs in use (0..3)");
}
