// The SimGrid engine at scale: collectives as flow sets against their exact ring steps,
// symmetric mode against the full simulation, the data-parallel all-reduce's bytes with
// tensor parallelism. Each simulation runs in a child process.
#include <sstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "child_process.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/simulate.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;
using pipesim::test::run_in_child;

namespace {

ClusterSpec cluster(int nodes, int per_node, bool nic_per_gpu, bool fat_tree) {
    ClusterSpec c;
    c.name = "test";
    c.gpus_per_node = per_node;
    c.nodes = {NodeGroup{nodes, "h100-sxm", 1.0}};
    c.intra_node = LinkSpec{2e11, 2e-6};
    c.nic = LinkSpec{2.5e10, 5e-6};
    c.nic_per_gpu = nic_per_gpu;
    if (fat_tree) {
        c.topology = InterNodeTopology::fat_tree;
        c.nodes_per_leaf = 2;
        c.leaf_uplink_bandwidth = 3e10;
    }
    return c;
}

// p = 4 devices, tensor parallelism 2, 8 microbatches; messages, TP all-reduces and
// gradients large enough that links are busy and shared. With `zero3`, each device's
// parameters are all-gathered over its replicas before every F and backward too.
SimWorkload busy_workload(int stages, bool zero3) {
    SimWorkload w =
        simple_workload(uniform_stage_costs(stages, 1, 0.004, 0.004, 0.004), 4, 3e7, 4e8);
    w.tp_allreduces_forward.assign(static_cast<std::size_t>(stages), 2);
    w.tp_allreduces_backward.assign(static_cast<std::size_t>(stages), 2);
    w.tp_allreduce_bytes.assign(static_cast<std::size_t>(stages), 5e7);
    if (zero3) {
        w.param_fetch_bytes.assign(static_cast<std::size_t>(stages), 2e8);
        w.param_gather_bytes.assign(static_cast<std::size_t>(stages), 0.0);
    }
    return w;
}

struct Case {
    const char* name;
    const char* schedule;
    int v;
    int dp;
    int nodes;
    bool nic_per_gpu;
    bool fat_tree;
    const char* order;
    bool zero3 = false;
};

const Case cases[] = {
    {"1F1B, NIC per GPU", "1f1b", 1, 4, 4, true, false, "tp,dp,pp"},
    {"interleaved, NIC per node", "interleaved-1f1b", 2, 4, 4, false, false, "tp,dp,pp"},
    {"ZB-H1, fat tree", "zb-h1", 1, 4, 4, true, true, "tp,dp,pp"},
    {"1F1B, stages of a replica share nodes", "1f1b", 1, 2, 2, false, false, "tp,pp,dp"},
    // A replica per node: the gathers' rings leave the node on the NICs that the overlapped
    // gradient reduction takes too (full mode was 6 % faster when each replica ran a ring of
    // its own for 1/D of the bytes).
    {"1F1B, ZeRO-3 gathers beside an overlapped reduction", "1f1b", 1, 4, 4, true, false,
     "tp,pp,dp", true},
};

// "iteration_time grad_reduce_time mode" of one case.
std::string run_case(const Case& c, bool symmetric, bool exact) {
    return run_in_child([&] {
        const Schedule s = generate_schedule(c.schedule, GeneratorOptions{4, 8, c.v, 0});
        Layout layout{c.dp, 4, 2};
        layout.order = parse_layout_order(c.order);
        SimOptions options;
        options.symmetric = symmetric;
        options.exact_collectives = exact;
        const SimResult r =
            simulate(s, busy_workload(s.stages(), c.zero3),
                     cluster(c.nodes, 8, c.nic_per_gpu, c.fat_tree), layout, options);
        return fmt::format("{:.17g} {:.17g} {}", r.iteration_time, r.grad_reduce_time,
                           to_string(r.mode));
    });
}

struct Figures {
    double iteration = 0, reduce = 0;
    std::string mode;
};

Figures parse(const std::string& text) {
    INFO(text);
    std::istringstream in(text);
    Figures f;
    in >> f.iteration >> f.reduce >> f.mode;
    REQUIRE(!in.fail());
    return f;
}

}  // namespace

TEST_CASE("collectives as one set of flows take the time of their exact ring steps within 0.5%",
          "[simgrid]") {
    for (const Case& c : cases) {
        CAPTURE(c.name);
        const Figures exact = parse(run_case(c, false, true));
        const Figures flows = parse(run_case(c, false, false));
        CHECK(flows.iteration == Approx(exact.iteration).epsilon(0.005));
        CHECK(flows.reduce == Approx(exact.reduce).epsilon(0.005));
        CHECK(exact.reduce > 0);
    }
}

TEST_CASE("symmetric mode agrees with the full simulation within 0.5%", "[simgrid]") {
    int symmetric_runs = 0;
    for (const Case& c : cases) {
        CAPTURE(c.name);
        const Figures full = parse(run_case(c, false, false));
        const Figures symmetric = parse(run_case(c, true, false));
        CHECK(full.mode == "full");
        CHECK(symmetric.iteration == Approx(full.iteration).epsilon(0.005));
        CHECK(symmetric.reduce == Approx(full.reduce).epsilon(0.005));
        symmetric_runs += symmetric.mode == "symmetric";
    }
    CHECK(symmetric_runs >= 3);
}

TEST_CASE("a reduction over a NIC that replicas' messages share takes its closed-form time",
          "[simgrid]") {
    // 8 nodes of 2 GPUs behind one 10 GB/s NIC each, no latency; p = 2, D = 4: each device's
    // 4 replicas sit on 2 nodes, 2 per node, and their gradient ring crosses each node's NIC,
    // which both replicas' pipeline messages cross too. Symmetric mode gave the reduction
    // the 1/2 share meant for replica 0's messages: 0.30 s instead of 0.15 s.
    const std::string text = run_in_child([] {
        ClusterSpec c = cluster(8, 2, /*nic_per_gpu=*/false, false);
        c.intra_node = LinkSpec{1e12, 0};
        c.nic = LinkSpec{1e10, 0};
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 4, 1, 0});
        const SimWorkload w = simple_workload(uniform_stage_costs(2, 1, 0.01, 0.02, 0.01), 2, 0,
                                              /*gradient_bytes=*/1e9);
        SimOptions options;
        options.nccl_algo = NcclAlgo::ring;
        const SimResult r = simulate(s, w, c, Layout{4, 2, 1}, options);
        return fmt::format("{:.17g} {}", r.grad_reduce_time, to_string(r.mode));
    });
    INFO(text);
    std::istringstream in(text);
    double reduce = 0;
    std::string mode;
    in >> reduce >> mode;
    // Two rings (one per GPU of a node: NCCL's channels), each sending 2(n − 1)/n · S / 2 =
    // 0.75 GB through each NIC per direction: 1.5 GB at 10 GB/s.
    CHECK(reduce == Approx(2.0 * 3 / 4 * 1e9 / 1e10).epsilon(1e-6));
    CHECK(mode == "full");
}

TEST_CASE("a straggler, GPUs of different speeds or unevenly loaded links make it full",
          "[simgrid]") {
    const std::string result = run_in_child([] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 4, 1, 0});
        const SimWorkload w = simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 1e6, 1e6);
        SimOptions slow;
        slow.stragglers = {{3, 1.5}};
        const SimResult a = simulate(s, w, cluster(2, 2, true, false), Layout{2, 2, 1}, slow);
        return fmt::format("{} {}", to_string(a.mode), a.full_reason);
    });
    CHECK(result == "full a straggler");
    const std::string mixed = run_in_child([] {
        ClusterSpec c = cluster(2, 2, true, false);
        c.nodes = {NodeGroup{1, "a100-80gb", 1.0}, NodeGroup{1, "h100-sxm", 3.0}};
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{2, 4, 1, 0});
        Layout layout{2, 2, 1};
        layout.order = parse_layout_order("pp,dp,tp");  // replica 1 on the faster node
        const SimResult r = simulate(
            s, simple_workload(uniform_stage_costs(2, 1, 1, 1, 1), 2, 1e6, 1e6), c, layout);
        return std::string(to_string(r.mode));
    });
    CHECK(mixed == "full");
    const std::string uneven = run_in_child([] {
        // Two GPUs per node, one NIC each; pp,dp order puts replica 0's devices 0, 1 on node 0
        // and replica 1's device 0 beside replica 0's device 2 on node 1: that NIC carries
        // different messages for the two replicas.
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{3, 4, 1, 0});
        Layout layout{2, 3, 1};
        layout.order = parse_layout_order("pp,dp,tp");
        const SimResult r =
            simulate(s, simple_workload(uniform_stage_costs(3, 1, 1, 1, 1), 3, 1e6, 1e6),
                     cluster(3, 2, false, false), layout);
        return fmt::format("{} {}", to_string(r.mode), r.full_reason);
    });
    CHECK(uneven == "full replicas' messages load links unevenly");
}

TEST_CASE("with tensor parallelism each GPU all-reduces its own gradient bytes", "[simgrid]") {
    // gradient_bytes is per GPU (a model's stage parameters / T, 4 bytes each): T rings of D
    // GPUs each reduce S bytes in 2(D−1)(L + S/(D·B)), not S/T.
    const double bytes = 1e9, bandwidth = 2.5e10, latency = 5e-6;
    const std::string result = run_in_child([&] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{1, 1, 1, 0});
        SimOptions options;
        options.record_transfers = false;  // the reduction's time is reported all the same
        const SimResult r =
            simulate(s, simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, bytes),
                     cluster(4, 2, true, false), Layout{4, 1, 2}, options);
        return fmt::format("{:.17g}", r.grad_reduce_time);
    });
    const double expected = 2.0 * 3 * (latency + bytes / 4 / bandwidth);
    CHECK(std::stod(result) == Approx(expected).epsilon(1e-9));
}
