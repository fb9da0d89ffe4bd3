// Cluster descriptions: presets, JSON files, layouts.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/simgrid/cluster.hpp"
#include "sim/simgrid/layout.hpp"

using namespace pipesim;
using namespace pipesim::simgrid;

TEST_CASE("cluster presets resolve, with an optional node count", "[simgrid][cluster]") {
    const ClusterSpec h100 = load_cluster("dgx-h100");
    CHECK(h100.gpu_count() == 32);
    CHECK(h100.nic_per_gpu);
    CHECK(h100.nic.bandwidth == Approx(50e9));  // 400 Gb/s
    CHECK(load_cluster("dgx-h100:16").gpu_count() == 128);
    CHECK(load_cluster("h200x8").gpu_count() == 8);
    CHECK(load_cluster("zb-a100-roce").gpu_count() == 32);
    // NCCL's send/receive inside a node, as measured (cluster_presets.cpp): A100 44.6 GB/s
    // (Zero Bubble paper, Table 9), H100 80 GB/s (nccl-tests issue 268).
    CHECK(load_cluster("zb-a100-roce").intra_node_p2p_bandwidth == Approx(44.6e9));
    CHECK(load_cluster("dgx-a100").intra_node_p2p_bandwidth == Approx(44.6e9));
    CHECK(h100.intra_node_p2p_bandwidth == Approx(80e9));
    CHECK_THROWS_WITH(load_cluster("dgx-z100"),
                      Catch::StartsWith("unknown cluster 'dgx-z100' (presets: zb-a100-roce, "));
    CHECK_THROWS_WITH(load_cluster("dgx-h100:0"),
                      Catch::Contains("expected NAME:NODES with NODES in 1..65536"));
}

TEST_CASE("a cluster JSON file gives every field in the documented units", "[simgrid][cluster]") {
    const ClusterSpec c = parse_cluster_json("mixed.json", R"({
      "format": "pipesim-cluster", "version": 1,
      "name": "mixed",
      "gpus_per_node": 4,
      "nodes": [{"count": 2, "gpu": "a100-80gb"}, {"count": 1, "gpu": "h100-sxm", "speed": 3}],
      "intra_node": {"bandwidth_gb_s": 300, "latency_us": 2, "p2p_gb_s": 44.6},
      "nic": {"bandwidth_gb_s": 25, "latency_us": 5},
      "nic_per_gpu": false,
      "topology": "fat-tree", "nodes_per_leaf": 2, "leaf_uplink_gb_s": 50
    })");
    CHECK(c.gpu_count() == 12);
    CHECK(c.intra_node.bandwidth == Approx(300e9));
    CHECK(c.intra_node.latency == Approx(2e-6));
    CHECK(c.intra_node_p2p_bandwidth == Approx(44.6e9));
    CHECK(c.intra_node_collective_bandwidth == 0);  // not given: the port's
    CHECK(c.nic.bandwidth == Approx(25e9));
    CHECK(c.group_of_node(2).gpu == "h100-sxm");
    CHECK(c.group_of_node(2).speed == 3);
    CHECK(c.topology == InterNodeTopology::fat_tree);
    CHECK(c.leaf_uplink_bandwidth == Approx(50e9));
}

TEST_CASE("a cluster file is named by a path with a '/' as well as by a .json name",
          "[simgrid][cluster]") {
    // As --model and --gpu take theirs: ./mycluster was "unknown cluster (presets ...)".
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_cluster_name_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "mycluster").string();
    std::ofstream(path) << R"({"gpus_per_node": 8, "nodes": [{"count": 2, "gpu": "a100-80gb"}],
        "intra_node": {"bandwidth_gb_s": 300, "latency_us": 2},
        "nic": {"bandwidth_gb_s": 25, "latency_us": 5}})";
    CHECK(load_cluster(path).gpu_count() == 16);
    CHECK_THROWS_WITH(load_cluster("mycluster"),
                      Catch::StartsWith("unknown cluster 'mycluster' (presets: ") &&
                          Catch::EndsWith("or a cluster file: a .json name or a path with a '/')"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("malformed cluster files are rejected with file, line and column", "[simgrid][cluster]") {
    using row = std::tuple<std::string, std::string>;
    auto [text, expected] = GENERATE(table<std::string, std::string>({
        row{"{",
            "c.json:1:2: invalid JSON: syntax error while parsing object key - unexpected end "
            "of input; expected string literal"},
        row{R"({"gpus_per_node": 8})", "c.json:1:1: missing nodes: expected an array"},
        row{R"({"gpus_per_node": 0, "nodes": [], "intra_node": {}, "nic": {}})",
            "c.json:1:19: gpus_per_node: expected an integer in 1..64, got '0'"},
        row{R"({"gpus_per_node": 8, "nodes": [],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:1:31: nodes: expected at least one node group"},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": -1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:2:35: intra_node.bandwidth_gb_s: expected a number in 1e-06..1e+09, got '-1'"},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1},
 "topology": "ring"})",
            "c.json:3:14: topology: expected \"star\" or \"fat-tree\", got \"ring\""},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1},
 "nic_per_gpu": 1})",
            "c.json:3:17: nic_per_gpu: expected true or false"},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x", "colour": 1}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:1:57: unknown key 'colour' in nodes[0] (known: count, gpu, speed)"},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1, "p2p_gb_s": 0}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:2:67: intra_node.p2p_gb_s: expected a number in 1e-06..1, got '0'"},
        // NCCL's rates inside a node are bounded by the port: 10000 GB/s of bus bandwidth on a
        // 450 GB/s port reduced gradients 16 times faster than the link.
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 450, "latency_us": 1, "collective_bus_gb_s": 10000}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:2:80: intra_node.collective_bus_gb_s: expected a number in 1e-06..900, got "
            "'10000'"},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 450, "latency_us": 1, "p2p_gb_s": 451}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:2:69: intra_node.p2p_gb_s: expected a number in 1e-06..450, got '451'"},
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1, "p2p_gb_s": 5}})",
            "c.json:2:114: p2p_gb_s belongs to intra_node only"},
        // A fat tree's leaves without the fat tree were ignored.
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1},
 "nodes_per_leaf": 2})",
            "c.json:3:20: nodes_per_leaf belongs to \"topology\": \"fat-tree\""},
        // The header is optional; present, it must be the cluster format's (a schedule file
        // was read as a cluster and reported by its keys).
        row{R"({"format": "pipesim-schedule", "version": 1, "devices": 4})",
            "c.json:1:12: format: expected \"pipesim-cluster\", got '\"pipesim-schedule\"'"},
        row{R"({"format": "pipesim-cluster", "version": 2, "gpus_per_node": 8})",
            "c.json:1:42: version 2 is not supported: this pipesim reads version 1"},
        // An empty name printed "GPUs of ''".
        row{R"({"name": "", "gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:1:10: name: expected a name, got \"\""},
        // Each group within the limit, all together not: named without the file before.
        row{R"({"gpus_per_node": 8, "nodes": [{"count": 40000, "gpu": "x"}, {"count": 40000, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:1:31: nodes: 80000 nodes in all, more than the limit of 65536"},
        // The description is printed with the cluster: a terminal escape in it was sent raw.
        row{R"({"description": "a\u001b[2Jb", "gpus_per_node": 8, "nodes": [{"count": 1, "gpu": "x"}],
 "intra_node": {"bandwidth_gb_s": 1, "latency_us": 1}, "nic": {"bandwidth_gb_s": 1, "latency_us": 1}})",
            "c.json:1:17: description: expected text without control characters, got "
            "'a\\x1b[2Jb'"},
    }));
    CAPTURE(text);
    CHECK_THROWS_WITH(parse_cluster_json("c.json", text), expected);
}

TEST_CASE("layouts map (replica, device, tensor rank) to GPUs in the given order",
          "[simgrid][cluster]") {
    Layout l{2, 4, 2};
    // Default tp,dp,pp: tp fastest, then replicas, then stages.
    CHECK(gpu_index(l, 0, 0, 1) == 1);
    CHECK(gpu_index(l, 1, 0, 0) == 2);
    CHECK(gpu_index(l, 0, 1, 0) == 4);
    CHECK(gpu_index(l, 1, 3, 1) == 15);
    l.order = parse_layout_order("tp,pp,dp");
    CHECK(gpu_index(l, 0, 1, 0) == 2);
    CHECK(gpu_index(l, 1, 0, 0) == 8);
    CHECK(layout_order_string(l.order) == "tp,cp,pp,dp");  // without cp: right after tp
    CHECK(layout_order_string(parse_layout_order("pp,dp,tp")) == "pp,dp,tp,cp");
    CHECK_THROWS_WITH(parse_layout_order("tp,pp"),
                      "layout order 'tp,pp': name each of tp, dp, pp exactly once (and cp at "
                      "most once)");
    CHECK_THROWS_WITH(parse_layout_order("tp,cp,pp,cp"),
                      "layout order 'tp,cp,pp,cp': name each of tp, dp, pp exactly once (and cp "
                      "at most once)");
    CHECK_THROWS_WITH(
        parse_layout_order("tp,pp,xx"),
        "layout order 'tp,pp,xx': expected tp, dp, pp (and cp) separated by commas, got 'xx'");
}

TEST_CASE("a context-parallel dimension multiplies the GPUs and sits in the given order",
          "[simgrid][cluster]") {
    Layout l{2, 3, 2};
    l.cp = 4;
    CHECK(l.gpus() == 48);
    // Default tp,cp,dp,pp: strides 1, 2 (T), 8 (T·C), 16 (T·C·D).
    CHECK(layout_order_string(l.order) == "tp,cp,dp,pp");
    CHECK(gpu_index(l, 0, 0, 1, 0) == 1);
    CHECK(gpu_index(l, 0, 0, 0, 1) == 2);
    CHECK(gpu_index(l, 1, 0, 0, 0) == 8);
    CHECK(gpu_index(l, 1, 2, 1, 3) == 1 + 3 * 2 + 8 + 2 * 16);
    // cp slowest: strides tp 1, dp 2, pp 4, cp 12.
    l.order = parse_layout_order("tp,dp,pp,cp");
    CHECK(gpu_index(l, 1, 2, 1, 3) == 1 + 2 + 2 * 4 + 3 * 12);
    // A CP ring may span nodes (on 8-GPU nodes, tp,cp,… with T·C = 8 fills one node; the
    // TP groups stay inside nodes either way); a TP group may not.
    const ClusterSpec c = load_cluster("h200x8:6");
    CHECK_NOTHROW(check_layout(l, c));
    l.order = parse_layout_order("cp,dp,pp,tp");  // TP stride C·D·P = 24: across nodes
    CHECK_THROWS_WITH(check_layout(l, c), Catch::Contains("tensor parallelism must stay inside"));
    // T·C = 16 > 8 GPUs per node: the CP ring spans two nodes, each TP group stays in one.
    Layout wide{1, 1, 4};
    wide.cp = 4;
    CHECK_NOTHROW(check_layout(wide, load_cluster("h200x8:2")));
    CHECK(gpu_index(wide, 0, 0, 0, 2) / 8 == 1);
    l.order = parse_layout_order("tp,cp,dp,pp");
    l.dp = 4;  // 96 GPUs
    CHECK_THROWS_WITH(check_layout(l, c),
                      "layout dp=4 × pp=3 × tp=2 × cp=4 needs 96 GPUs; cluster 'h200x8' has 48 "
                      "(6 nodes × 8)");
}
