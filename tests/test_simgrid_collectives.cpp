// The SimGrid engine's data- and tensor-parallel collectives against closed forms: NCCL-style
// channel rings across nodes, NCCL's bus bandwidth inside a node, the gradient reduction
// overlapped with the last backward, and the distributed optimizer's reduce-scatter and
// all-gather. Each simulation runs in a child process (one SimGrid engine per process).
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "schedules/costs.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/simulate.hpp"
#include "simgrid_fixtures.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;
using pipesim::test::run_in_child;

namespace {

// `nodes` nodes of `per_node` GPUs, one NIC per GPU at `nic` bytes/s; every route has
// latency `latency`; GPU ports inside a node at `port` bytes/s.
ClusterSpec cluster(int nodes, int per_node, double nic, double port, double latency) {
    return test::small_cluster(nodes, per_node, "a100-80gb", LinkSpec{port, latency},
                               LinkSpec{nic, latency});
}

// One device, one microbatch: F = 1, B = 1, W = 1 (1F1B runs F then BW = 2).
SimResult one_device(const ClusterSpec& c, const Layout& layout, double gradient_bytes,
                     const SimOptions& options = {}, double gather_bytes = 0) {
    const Schedule s = generate_schedule("1f1b", GeneratorOptions{1, 1, 1, 0});
    SimWorkload w = simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, gradient_bytes);
    if (gather_bytes > 0) w.param_gather_bytes = {gather_bytes};
    return simulate(s, w, c, layout, options);
}

std::pair<double, double> two_numbers(const std::string& text) {
    INFO(text);
    std::istringstream in(text);
    double a = 0, b = 0;
    in >> a >> b;
    REQUIRE(!in.fail());
    return {a, b};
}

}  // namespace

TEST_CASE("a gradient all-reduce over nodes of k replicas each runs k rings through k NICs",
          "[simgrid]") {
    // 2 nodes × 4 GPUs, all 8 GPUs replicas: NCCL's 4 channels each cross between the nodes
    // through other GPUs' NICs and carry S/4, so each NIC moves 2(n−1)/n · S/4.
    const double bytes = 1e9, nic = 1e10, latency = 1e-5;
    const int n = 8;
    const auto [reduce, iteration] = two_numbers(run_in_child([&] {
        SimOptions options;
        options.overlap_grad_reduce = false;
        const SimResult r =
            one_device(cluster(2, 4, nic, 1e15, latency), Layout{n, 1, 1}, bytes, options);
        return fmt::format("{:.17g} {:.17g}", r.grad_reduce_time, r.iteration_time);
    }));
    const double expected = 2.0 * (n - 1) * (latency + bytes / 4 / n / nic);
    CHECK(reduce == Approx(expected).epsilon(1e-6));
    CHECK(iteration == Approx(3 + expected).epsilon(1e-6));
    // One ring through one NIC per node would take 2(n−1)(L + S/(n·B)): four times the bytes.
    CHECK(reduce < 2.0 * (n - 1) * (latency + bytes / n / nic) / 3);
}

TEST_CASE("collectives inside a node move at NCCL's bus bandwidth, not the port's", "[simgrid]") {
    const double bytes = 4e6, port = 3e11, bus = 2e11, latency = 1e-6;
    const int t = 4;
    const std::string result = run_in_child([&] {
        ClusterSpec c = cluster(1, t, 1e10, port, latency);
        c.intra_node_collective_bandwidth = bus;
        const Schedule s = generate_schedule("zb-h1", GeneratorOptions{1, 1, 1, 0});
        SimWorkload w = simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, 0);
        w.tp_allreduces_forward = {2};
        w.tp_allreduces_backward = {0};
        w.tp_allreduce_bytes = {bytes};
        const SimResult r = simulate(s, w, c, Layout{1, 1, t});
        const TimedOp& f = r.timeline.device_ops[0].front();
        return fmt::format("{:.17g}", f.end - f.start);
    });
    INFO(result);
    // Each all-reduce: 2(t−1) steps of S/t at the bus bandwidth (nccl-tests' busbw definition).
    const double one = 2.0 * (t - 1) * (latency + bytes / t / bus);
    CHECK(std::stod(result) == Approx(1 + 2 * one).epsilon(1e-9));
}

TEST_CASE(
    "an overlapped gradient reduction starts with the last backward and never ends "
    "before the compute",
    "[simgrid]") {
    const double nic = 1e10, latency = 0;
    // R = 2(n−1)/n · S / B with n = 2: S / B.
    for (const double reduce : {0.5, 3.0}) {
        CAPTURE(reduce);
        const double bytes = reduce * nic;
        auto iteration = [&](bool overlap) {
            return std::stod(run_in_child([&] {
                SimOptions options;
                options.overlap_grad_reduce = overlap;
                const SimResult r =
                    one_device(cluster(2, 1, nic, 1e15, latency), Layout{2, 1, 1}, bytes, options);
                return fmt::format("{:.17g}", r.iteration_time);
            }));
        };
        const double overlapped = iteration(true), plain = iteration(false);
        // F ends at 1, BW (the last weight-gradient op) runs from 1 to 3.
        CHECK(overlapped == Approx(std::max(3.0, 1 + reduce)).epsilon(1e-9));
        CHECK(plain == Approx(3 + reduce).epsilon(1e-9));
        CHECK(overlapped <= plain);
        CHECK(overlapped >= 3.0);
    }
}

TEST_CASE("the distributed optimizer reduce-scatters gradients and all-gathers parameters",
          "[simgrid]") {
    const double grads = 4e9, params = 2e9, nic = 1e10, latency = 1e-5;
    const int n = 4;
    const auto [reduce, iteration] = two_numbers(run_in_child([&] {
        SimOptions options;
        options.overlap_grad_reduce = false;
        const SimResult r =
            one_device(cluster(n, 1, nic, 1e15, latency), Layout{n, 1, 1}, grads, options, params);
        return fmt::format("{:.17g} {:.17g}", r.grad_reduce_time, r.iteration_time);
    }));
    // (n−1) steps of each: S/n of fp32 gradients, then P/n of 16-bit parameters.
    const double expected =
        (n - 1) * (latency + grads / n / nic) + (n - 1) * (latency + params / n / nic);
    CHECK(reduce == Approx(expected).epsilon(1e-6));
    CHECK(iteration == Approx(3 + expected).epsilon(1e-6));
    // An all-reduce of the gradients moves 2(n−1)/n · S: more than S(n−1)/n + P(n−1)/n.
    CHECK(expected < 2.0 * (n - 1) * (latency + grads / n / nic));
}

TEST_CASE("helper actors carry a collective's transfers in the same simulated time", "[simgrid]") {
    // Large collectives hand their transfers to helper actors (FlowSet); forced here from two
    // transfers on, against the same runs with every transfer sent by the reducing actor.
    struct Case {
        const char* name;
        int nodes, per_node;
        std::optional<NcclAlgo> algo;
        double gather_bytes, fetch_bytes;
        bool straggler;
    };
    const Case cases[] = {
        {"tree over 6 nodes of 2", 6, 2, NcclAlgo::tree, 0, 0, false},
        {"rings over 5 nodes of 4, reduce-scatter and all-gather", 5, 4, NcclAlgo::ring, 2e9, 0,
         false},
        {"ZeRO-3's fetches before each pass", 3, 2, NcclAlgo::ring, 0, 1e9, false},
        {"every replica simulated (a straggler)", 4, 2, NcclAlgo::tree, 0, 0, true},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const auto run = [&](bool helpers) {
            return run_in_child([&] {
                const Schedule s = generate_schedule("1f1b", GeneratorOptions{1, 2, 1, 0});
                SimWorkload w = simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, 3e9);
                if (c.gather_bytes > 0) w.param_gather_bytes = {c.gather_bytes};
                if (c.fetch_bytes > 0) w.param_fetch_bytes = {c.fetch_bytes};
                SimOptions options;
                options.overlap_grad_reduce = false;
                options.nccl_algo = c.algo;
                options.collective_helpers = helpers;
                if (c.straggler) options.stragglers = {{1, 1.5}};
                const int gpus = c.nodes * c.per_node;
                const SimResult r = simulate(s, w, cluster(c.nodes, c.per_node, 1e10, 5e10, 1e-5),
                                             Layout{gpus, 1, 1}, options);
                std::string out =
                    fmt::format("{:.17g} {:.17g} {:.17g} {}", r.iteration_time, r.grad_reduce_time,
                                r.param_gather_time, r.timeline.transfers.size());
                for (const Transfer& t : r.timeline.transfers)
                    out += fmt::format(" {:.17g} {:.17g}", t.start, t.end);
                return out;
            });
        };
        const std::string direct = run(false), helped = run(true);
        CHECK(helped == direct);
        // Something moved: the reduction took time.
        CHECK(two_numbers(direct).second > 0);
    }
}

TEST_CASE(
    "couriers carry the devices' tensor- and context-parallel rings in the same simulated time",
    "[simgrid]") {
    // Every replica simulated (a straggler): each pipeline device's TP all-reduces, the TP
    // all-gather of each message it receives, and its ring attention's blocks go through a
    // courier of its own (forced here from two transfers on; automatic from 4,096 at once),
    // against the same run with every transfer sent by the device's actor. With ZeRO-3, its
    // parameters' all-gather before each pass too (it sent its transfers itself, and such a
    // run took 184 s at 1,024 GPUs where the courier takes 4).
    const double fetch = GENERATE(0.0, 5e8);
    const auto run = [&](bool couriers) {
        return run_in_child([&] {
            const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 3, 1, 0});
            SimWorkload w =
                simple_workload(uniform_stage_costs(2, 1, 0.01, 0.02, 0.01), 2, 5e7, 1e9);
            w.tp_allreduces_forward = {2, 2};
            w.tp_allreduces_backward = {2, 2};
            w.tp_allreduce_bytes = {1e8, 1e8};
            w.cp_ring.layers = {2, 2};
            w.cp_ring.block_bytes = 2e7;
            w.cp_ring.attention_forward = 1e-3;
            w.cp_ring.attention_backward = 2e-3;
            if (fetch > 0) w.param_fetch_bytes = {fetch, fetch};
            SimOptions options;
            options.collective_helpers = couriers;
            options.stragglers = {{3, 1.5}};
            Layout layout{2, 2, 2};
            layout.cp = 2;
            const SimResult r = simulate(s, w, cluster(4, 4, 1e10, 5e10, 1e-5), layout, options);
            const auto count = [&](TransferKind kind) {
                return std::count_if(r.timeline.transfers.begin(), r.timeline.transfers.end(),
                                     [&](const Transfer& t) { return t.kind == kind; });
            };
            std::string out = fmt::format(
                "{} {} {} {:.17g} {:.17g}", r.mode == SimMode::full ? 1 : 0,
                count(TransferKind::tensor_parallel), count(TransferKind::context_parallel),
                r.iteration_time, r.grad_reduce_time);
            for (const auto& ops : r.timeline.device_ops)
                for (const TimedOp& t : ops)
                    out += fmt::format(" {:.17g} {:.17g}", t.start, t.end);
            for (const Transfer& t : r.timeline.transfers)
                out += fmt::format(" {} {:.17g} {:.17g}", static_cast<int>(t.kind), t.start, t.end);
            return out;
        });
    };
    const std::string direct = run(false), carried = run(true);
    CAPTURE(fetch, direct, carried);
    // The same numbers, to the solver's rounding: where a courier's hand-over changes the
    // order in which transfers join one simulated instant (ZeRO-3's gather, one collective
    // of both replicas), sums of shares round differently in the last bits.
    std::istringstream direct_in(direct), carried_in(carried);
    std::size_t numbers = 0;
    for (double a = 0, b = 0; direct_in >> a;) {
        REQUIRE(carried_in >> b);
        CHECK(b == Approx(a).epsilon(1e-12).margin(1e-15));
        ++numbers;
    }
    double extra = 0;
    CHECK_FALSE(carried_in >> extra);
    CHECK(numbers > 100);
    // Full mode, and the rings moved: tensor- and context-parallel transfers were recorded.
    std::istringstream in(direct);
    int full = 0, tensor = 0, context = 0;
    in >> full >> tensor >> context;
    CHECK(full == 1);
    CHECK(tensor > 0);
    CHECK(context > 0);
}

TEST_CASE("a run that fits without couriers but not with them runs without them", "[simgrid]") {
    // Couriers add two actors per simulated device, and each actor takes two of the kernel's
    // memory mappings (vm.max_map_count). dp replicas of 8 devices with TP 2, kept apart by a
    // straggler: the devices' own actors take half the limit, three times that would not fit.
    std::ifstream in("/proc/sys/vm/max_map_count");
    long limit = 0;
    if (!(in >> limit) || limit > 70000) {
        WARN("vm.max_map_count is not the default 65530 here (" << limit << "): not checked");
        return;
    }
    const int p = 8, tp = 2, dp = static_cast<int>(limit / (2 * p * 2));
    const auto check = [&](std::optional<bool> helpers) {
        return run_in_child([&] {
            const Schedule s = generate_schedule("1f1b", GeneratorOptions{p, 8, 1, 0});
            SimWorkload w = simple_workload(uniform_stage_costs(p, 1, 0.01, 0.02, 0.01), p, 1e6, 0);
            w.tp_allreduces_forward.assign(p, 2);
            w.tp_allreduces_backward.assign(p, 2);
            w.tp_allreduce_bytes.assign(p, 1e6);
            SimOptions options;
            options.collective_helpers = helpers;
            options.stragglers = {{3, 1.5}};
            options.check_only = true;
            simulate(s, w, cluster(dp * p * tp / 8, 8, 1e10, 5e10, 1e-5), Layout{dp, p, tp},
                     options);
            return std::string("fits");
        });
    };
    CHECK(check(std::nullopt) == "fits");
    // Forced, the couriers are refused with the limit named.
    const std::string forced = check(true);
    CHECK_THAT(forced, Catch::Contains("vm.max_map_count"));
}
