// NCCL's tree all-reduce in the SimGrid engine against closed forms, and the choice between
// ring and tree (--nccl-algo, the cluster's nccl_algo, auto by NCCL's tuning model) against
// the model's formulas computed here. Each simulation runs in a child process (one SimGrid
// engine per process).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "cli_runner.hpp"
#include "schedules/costs.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/simulate.hpp"
#include "simgrid_fixtures.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;
using pipesim::test::run_in_child;
using pipesim::test::run_pipesim;

namespace {

// `nodes` nodes of `per_node` GPUs, a NIC per GPU at `nic` bytes/s, GPU ports at `port`,
// every route of latency `latency`.
ClusterSpec cluster(int nodes, int per_node, double nic, double port, double latency) {
    return test::small_cluster(nodes, per_node, "a100-80gb", LinkSpec{port, latency},
                               LinkSpec{nic, latency});
}

struct Reduction {
    double time = 0;
    std::string algorithm;
};

// One device, one microbatch, all GPUs of the cluster replicas; the gradient reduction after
// the pipeline: its length and the algorithm it used.
Reduction reduce(const ClusterSpec& c, double bytes, std::optional<NcclAlgo> algo) {
    const std::string text = run_in_child([&] {
        const Schedule s = generate_schedule("1f1b", GeneratorOptions{1, 1, 1, 0});
        SimOptions options;
        options.overlap_grad_reduce = false;
        options.nccl_algo = algo;
        const SimResult r =
            simulate(s, simple_workload(uniform_stage_costs(1, 1, 1, 1, 1), 1, 0, bytes), c,
                     Layout{c.gpu_count(), 1, 1}, options);
        return fmt::format("{:.17g} {}", r.grad_reduce_time,
                           r.grad_reduce_algorithms.empty()
                               ? "none"
                               : to_string(r.grad_reduce_algorithms.front()));
    });
    INFO(text);
    std::istringstream in(text);
    Reduction r;
    in >> r.time >> r.algorithm;
    REQUIRE(!in.fail());
    return r;
}

// NCCL 2.30's tuning model (src/graph/tuning.cc, Simple protocol), written out for n GPUs on
// N nodes (k = n/N each, one NIC per GPU at `nic`, NVLink far faster): predicted seconds.
struct Predicted {
    double ring = 0, tree = 0;
};
Predicted nccl_model(int n, int nodes, double bytes, double nic) {
    const int k = n / nodes;
    const double ring_steps = 2.0 * (n - 1), net_steps = nodes > 1 ? 2.0 * (nodes - 1) : 0;
    double ring_us = 8.4 + (ring_steps - net_steps) * 3.4 + net_steps * 14.0;
    if (nodes > 1 && bytes / (k * n) >= 64) ring_us *= 1.4;
    const double tree_us = 8.4 + 2 * ((k - 1) * 4.0 + std::floor(std::log2(nodes)) * 14.0);
    static constexpr std::array<double, 23> correction = {
        .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};
    const auto log_size = static_cast<std::size_t>(std::floor(std::log2(bytes / 64)));
    const double corr = log_size < correction.size() ? correction[log_size] : 1.0;
    // The bus bandwidth: k rings (channels), each through its own NICs, each NIC moving
    // 2(n−1)/n of its ring's bytes/k.
    const double bus = k * nic;
    return {ring_us * 1e-6 + ring_steps / n * bytes / bus,
            tree_us * 1e-6 + 2 * bytes / (0.92 * corr * bus)};
}

}  // namespace

TEST_CASE("a tree all-reduce alone on the network takes 2·h·L plus its busiest NIC's bytes",
          "[simgrid]") {
    // One GPU per node. NCCL's double binary tree over N nodes (tree 0: odd nodes are leaves,
    // node 0 the root with one child; tree 1 mirrored for even N, shifted for odd N):
    // N = 2: 1→0 and 0→1, height 1, each node on 2 tree edges.
    // N = 3: 2→0, 1→2 and 0→1, 2→0: height 2; nodes 0 and 2 on 3 edges.
    // N = 4: 2→0, {1,3}→2 and 1→3, {0,2}→1: height 2; nodes 1 and 2 on 4 edges.
    // N = 8: 4→0, {2,6}→4, {1,3}→2, {5,7}→6 and its mirror: height 3; six nodes on 4 edges.
    // Every edge carries S/2 each way (each tree half the bytes), so the busiest NIC moves
    // degree·S/2 each way; the pipeline's latency is h hops up and h down.
    const double bytes = 1e8, nic = 1e10, latency = 1e-5;
    for (const auto [nodes, height, degree] :
         {std::array{2, 1, 2}, std::array{3, 2, 3}, std::array{4, 2, 4}, std::array{8, 3, 4}}) {
        CAPTURE(nodes);
        const Reduction tree = reduce(cluster(nodes, 1, nic, 1e15, latency), bytes, NcclAlgo::tree);
        CHECK(tree.algorithm == "tree");
        CHECK(tree.time == Approx(2 * height * latency + degree * bytes / 2 / nic).epsilon(0.005));
    }
}

TEST_CASE("a tree's channels chain a node's GPUs and leave through as many NICs", "[simgrid]") {
    // 2 nodes × 2 GPUs: 2 channels of S/2, channel j's chain starting at each node's GPU j.
    // Each GPU's port carries a broadcast down its own channel's chain and a reduction up the
    // other's, both trees: S each way; each NIC its channel's inter-node halves: S/2. The
    // depth: 1 chain hop and 1 tree hop, up and down.
    const double bytes = 1e8, latency = 1e-5;
    for (const auto& [nic, port] : {std::pair{1e10, 1e12}, std::pair{1e10, 1.5e10}}) {
        CAPTURE(nic, port);
        const Reduction tree = reduce(cluster(2, 2, nic, port, latency), bytes, NcclAlgo::tree);
        const double expected = 4 * latency + std::max(bytes / 2 / nic, bytes / port);
        CHECK(tree.time == Approx(expected).epsilon(0.005));
    }
}

TEST_CASE("one node's tree is a chain whose links move at NCCL's bus bandwidth", "[simgrid]") {
    // 1 node × 4 GPUs: one chain, no tree edges. Per tree a middle GPU sends a reduction up
    // and a broadcast down (S/2 each), both trees: 2S through its port each way, at the bus
    // bandwidth; 3 hops up and 3 down.
    const double bytes = 1e8, port = 3e11, bus = 2e11, latency = 1e-6;
    ClusterSpec c = cluster(1, 4, 1e10, port, latency);
    c.intra_node_collective_bandwidth = bus;
    const Reduction tree = reduce(c, bytes, NcclAlgo::tree);
    CHECK(tree.time == Approx(6 * latency + 2 * bytes / bus).epsilon(0.005));
}

TEST_CASE("a ring forced by nccl_algo keeps the ring's 2(n−1)(L + S/(n·B))", "[simgrid]") {
    const double bytes = 1e8, nic = 1e10, latency = 1e-5;
    const int n = 4;
    const Reduction ring = reduce(cluster(n, 1, nic, 1e15, latency), bytes, NcclAlgo::ring);
    CHECK(ring.algorithm == "ring");
    CHECK(ring.time == Approx(2.0 * (n - 1) * (latency + bytes / n / nic)).epsilon(1e-9));
    // The same with the cluster asking for it and no option.
    ClusterSpec c = cluster(n, 1, nic, 1e15, latency);
    c.nccl_algo = NcclAlgo::ring;
    CHECK(reduce(c, bytes, std::nullopt).time == Approx(ring.time).epsilon(1e-12));
}

TEST_CASE("auto picks what NCCL's tuning model predicts faster", "[simgrid]") {
    const double nic = 2.5e10, latency = 5e-6;
    // (nodes, GPUs per node, bytes per GPU).
    struct Case {
        int nodes, per_node;
        double bytes;
    };
    const Case cases[] = {
        {8, 1, 1e3},  // tiny over many nodes: tree
        {2, 1, 1e9},  // huge over two nodes: ring
        {8, 1, 1e5}, {8, 1, 1e6}, {8, 1, 1e7}, {8, 1, 1e8},  {4, 2, 1e6},
        {4, 2, 3e7}, {2, 4, 1e4}, {2, 4, 1e8}, {16, 1, 3e6}, {16, 1, 3e7},
    };
    int trees = 0, rings = 0;
    for (const Case& c : cases) {
        CAPTURE(c.nodes, c.per_node, c.bytes);
        const Predicted p = nccl_model(c.nodes * c.per_node, c.nodes, c.bytes, nic);
        CAPTURE(p.ring, p.tree);
        const Reduction r =
            reduce(cluster(c.nodes, c.per_node, nic, 3e11, latency), c.bytes, std::nullopt);
        CHECK(r.algorithm == (p.tree < p.ring ? "tree" : "ring"));
        trees += r.algorithm == "tree";
        rings += r.algorithm == "ring";
    }
    CHECK(nccl_model(8, 8, 1e3, nic).tree < nccl_model(8, 8, 1e3, nic).ring);
    CHECK(nccl_model(2, 2, 1e9, nic).ring < nccl_model(2, 2, 1e9, nic).tree);
    CHECK(trees >= 2);
    CHECK(rings >= 2);
}

TEST_CASE("simulate --nccl-algo sets the gradient all-reduce and the report names it",
          "[simgrid][cli]") {
    const std::string run =
        "simulate -s 1f1b -p 2 -m 4 --costs 1e-3,1e-3,1e-3 --cluster dgx-h100:8 --dp 16 -t 2 "
        "--no-overlap-grad-reduce --grad-bytes ";
    for (const char* algo : {"ring", "tree"}) {
        const auto r = run_pipesim(run + "1e8 --json --nccl-algo " + algo);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["grad_reduce_algorithm"] == algo);
        CHECK(j["grad_reduce_algorithms"] == nlohmann::json::array({algo, algo}));
    }
    // auto: 10 kB over 4 nodes is latency-bound (tree), 1 GB bandwidth-bound (ring).
    const auto tiny = run_pipesim(run + "1e4");
    REQUIRE(tiny.exit_code == 0);
    CHECK_THAT(tiny.out, Catch::Contains("gradient all-reduce") && Catch::Contains(", tree)"));
    const auto huge = nlohmann::json::parse(run_pipesim(run + "1e9 --json").out);
    CHECK(huge["grad_reduce_algorithm"] == "ring");
    // Where auto picks the ring, the figures are the ring's.
    const auto ring = nlohmann::json::parse(run_pipesim(run + "1e9 --json --nccl-algo ring").out);
    CHECK(huge["iteration_time"] == ring["iteration_time"]);
    CHECK(huge["grad_reduce_time"] == ring["grad_reduce_time"]);
    // Without replicas there is nothing to reduce.
    const auto alone = nlohmann::json::parse(
        run_pipesim("simulate -s 1f1b -p 2 -m 4 --costs 1e-3,1e-3,1e-3 --cluster dgx-h100 --json")
            .out);
    CHECK(alone["grad_reduce_algorithm"].is_null());
}

TEST_CASE("a bad --nccl-algo or cluster nccl_algo is one line and exit code 2", "[simgrid][cli]") {
    const auto r = run_pipesim(
        "simulate -s 1f1b -p 2 -m 4 --costs 1,1,1 --cluster dgx-h100 --dp 2 --nccl-algo bogus");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "pipesim simulate: --nccl-algo: expected ring, tree or auto, got 'bogus'\n");
    // Without a gradient reduction there is nothing for it to set: it was ignored silently.
    const auto alone =
        run_pipesim("simulate -s 1f1b -p 2 -m 4 --costs 1,1,1 --cluster dgx-h100 --nccl-algo tree");
    CHECK(alone.exit_code == 2);
    CHECK(alone.out.empty());
    CHECK(alone.err ==
          "pipesim simulate: --nccl-algo sets the gradient all-reduce's algorithm, which needs "
          "data or context parallelism (--dp D or --cp C above 1): there is no gradient "
          "reduction\n");
    const auto file =
        std::filesystem::temp_directory_path() / fmt::format("pipesim-tree-{}.json", ::getpid());
    std::ofstream(file) << R"({"gpus_per_node": 1, "nodes": [{"count": 2, "gpu": "a100-80gb"}],
"intra_node": {"bandwidth_gb_s": 300, "latency_us": 2},
"nic": {"bandwidth_gb_s": 25, "latency_us": 5}, "nccl_algo": "trees"})";
    const auto bad =
        run_pipesim("simulate -s 1f1b -p 1 -m 2 --costs 1,1,1 --dp 2 --cluster " + file.string());
    std::filesystem::remove(file);
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err,
               Catch::StartsWith("pipesim simulate: cluster file " + file.string() + ":3:") &&
                   Catch::EndsWith(": nccl_algo: expected ring, tree or auto, got "
                                   "'trees'\n"));
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}
