#include "sim/simgrid/cluster.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "fileio/parse_error.hpp"

namespace pipesim::simgrid {

namespace {

constexpr int max_nodes = 1 << 16;
constexpr int max_gpus_per_node = 64;
constexpr double gigabyte = 1e9;
constexpr double microsecond = 1e-6;

bool positive_finite(double x) {
    return std::isfinite(x) && x > 0;
}

}  // namespace

const char* to_string(NcclAlgo algo) {
    switch (algo) {
        case NcclAlgo::ring:
            return "ring";
        case NcclAlgo::tree:
            return "tree";
        case NcclAlgo::auto_select:
            break;
    }
    return "auto";
}

NcclAlgo parse_nccl_algo(std::string_view text) {
    for (const NcclAlgo algo : {NcclAlgo::auto_select, NcclAlgo::ring, NcclAlgo::tree})
        if (text == to_string(algo)) return algo;
    throw std::invalid_argument(
        fmt::format("expected ring, tree or auto, got {}", fileio::quote_excerpt(text)));
}

int ClusterSpec::node_count() const {
    int total = 0;
    for (const NodeGroup& g : nodes)
        total += g.count;
    return total;
}

const NodeGroup& ClusterSpec::group_of_node(int node) const {
    for (const NodeGroup& g : nodes) {
        if (node < g.count) return g;
        node -= g.count;
    }
    throw std::out_of_range(fmt::format("cluster '{}' has no node {}", name, node));
}

void check_cluster(const ClusterSpec& c) {
    auto fail = [&](const std::string& what) {
        throw std::invalid_argument(fmt::format("cluster '{}': {}", c.name, what));
    };
    if (c.gpus_per_node < 1 || c.gpus_per_node > max_gpus_per_node)
        fail(fmt::format("gpus_per_node must be in 1..{}, got {}", max_gpus_per_node,
                         c.gpus_per_node));
    if (c.nodes.empty()) fail("has no nodes");
    long long total = 0;
    for (const NodeGroup& g : c.nodes) {
        if (g.count < 1) fail(fmt::format("a node group has count {}; expected ≥ 1", g.count));
        if (!(std::isfinite(g.speed) && g.speed >= 0))
            fail(
                fmt::format("node group '{}' has speed {}; expected a number > 0 (or 0: from "
                            "the GPU type)",
                            g.gpu, g.speed));
        total += g.count;
    }
    if (total > max_nodes)
        fail(fmt::format("{} nodes is more than the limit of {}", total, max_nodes));
    if (!positive_finite(c.intra_node.bandwidth) || !positive_finite(c.nic.bandwidth))
        fail("link bandwidths must be numbers > 0");
    if (!(std::isfinite(c.intra_node_collective_bandwidth) &&
          c.intra_node_collective_bandwidth >= 0))
        fail("the intra-node collective bus bandwidth must be a finite number ≥ 0 (0: the link's)");
    if (!(std::isfinite(c.intra_node_p2p_bandwidth) && c.intra_node_p2p_bandwidth >= 0))
        fail("the intra-node point-to-point bandwidth must be a finite number ≥ 0 (0: the link's)");
    if (!(c.intra_node.latency >= 0 && std::isfinite(c.intra_node.latency)) ||
        !(c.nic.latency >= 0 && std::isfinite(c.nic.latency)))
        fail("link latencies must be finite numbers ≥ 0");
    if (c.topology == InterNodeTopology::fat_tree) {
        if (c.nodes_per_leaf < 1) fail("a fat tree needs nodes_per_leaf ≥ 1");
        if (!positive_finite(c.leaf_uplink_bandwidth))
            fail("a fat tree needs a leaf uplink bandwidth > 0");
    }
}

ClusterSpec parse_cluster_json(const std::string& file, const std::string& text) {
    const fileio::JsonDocument doc(file, text);
    // The header is optional, as in model and GPU files; present, it must be this one.
    doc.optional_format("pipesim-cluster", 1);
    doc.object(
        "", {"format", "version", "name", "description", "gpus_per_node", "nodes", "intra_node",
             "nic", "nic_per_gpu", "topology", "nodes_per_leaf", "leaf_uplink_gb_s", "nccl_algo"});
    ClusterSpec c;
    c.name = doc.has("/name") ? doc.name("/name", 200) : fileio::file_stem(file);
    if (doc.has("/description")) c.description = doc.text("/description", 2000);
    c.gpus_per_node = static_cast<int>(doc.integer("/gpus_per_node", 1, max_gpus_per_node));
    const auto& nodes = doc.array("/nodes", 1024);
    if (nodes.empty()) throw doc.error_at("/nodes", "nodes: expected at least one node group");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string at = fileio::json_pointer_child("/nodes", i);
        doc.object(at, {"count", "gpu", "speed"});
        NodeGroup g;
        g.count =
            static_cast<int>(doc.integer(fileio::json_pointer_child(at, "count"), 1, max_nodes));
        g.gpu = doc.string(fileio::json_pointer_child(at, "gpu"), 100);
        if (doc.has(fileio::json_pointer_child(at, "speed")))
            g.speed = doc.number(fileio::json_pointer_child(at, "speed"), 1e-3, 1e3);
        c.nodes.push_back(g);
    }
    long long total_nodes = 0;
    for (const NodeGroup& g : c.nodes)
        total_nodes += g.count;
    if (total_nodes > max_nodes)
        throw doc.error_at(
            "/nodes", fmt::format("nodes: {} nodes in all, more than the limit of {}", total_nodes,
                                  max_nodes));
    auto link = [&](const char* name) {
        const std::string at = std::string("/") + name;
        doc.object(at, {"bandwidth_gb_s", "latency_us", "collective_bus_gb_s", "p2p_gb_s"});
        return LinkSpec{
            doc.number(fileio::json_pointer_child(at, "bandwidth_gb_s"), 1e-6, 1e9) * gigabyte,
            doc.number(fileio::json_pointer_child(at, "latency_us"), 0, 1e9) * microsecond};
    };
    c.intra_node = link("intra_node");
    // NCCL's rates inside a node are what its port carries: a send/receive at most the port's
    // rate, an all-reduce's bus bandwidth at most twice it (NVSwitch's in-switch reduction,
    // NVLS, halves the bytes each GPU moves). 10000 GB/s on a 450 GB/s port was accepted
    // and reduced gradients 16 times faster than the link.
    const double port_gb_s = c.intra_node.bandwidth / gigabyte;
    if (doc.has("/intra_node/collective_bus_gb_s"))
        c.intra_node_collective_bandwidth =
            doc.number("/intra_node/collective_bus_gb_s", 1e-6, 2 * port_gb_s) * gigabyte;
    if (doc.has("/intra_node/p2p_gb_s"))
        c.intra_node_p2p_bandwidth = doc.number("/intra_node/p2p_gb_s", 1e-6, port_gb_s) * gigabyte;
    if (doc.has("/nic/collective_bus_gb_s"))
        throw doc.error_at("/nic/collective_bus_gb_s",
                           "collective_bus_gb_s belongs to intra_node only");
    if (doc.has("/nic/p2p_gb_s"))
        throw doc.error_at("/nic/p2p_gb_s", "p2p_gb_s belongs to intra_node only");
    c.nic = link("nic");
    if (doc.has("/nic_per_gpu")) {
        const auto& v = doc.at("/nic_per_gpu", "true or false");
        if (!v.is_boolean())
            throw doc.error_at("/nic_per_gpu", "nic_per_gpu: expected true or false");
        c.nic_per_gpu = v.get<bool>();
    }
    if (doc.has("/topology")) {
        const std::string& topology = doc.string("/topology", 20);
        if (topology == "star") {
            c.topology = InterNodeTopology::star;
        } else if (topology == "fat-tree") {
            c.topology = InterNodeTopology::fat_tree;
            c.nodes_per_leaf = static_cast<int>(doc.integer("/nodes_per_leaf", 1, max_nodes));
            c.leaf_uplink_bandwidth = doc.number("/leaf_uplink_gb_s", 1e-6, 1e9) * gigabyte;
        } else {
            throw doc.error_at("/topology", "topology: expected \"star\" or \"fat-tree\", got \"" +
                                                topology + "\"");
        }
    }
    // The fat tree's fields without it would be ignored: refused, as a misspelt topology is.
    if (c.topology != InterNodeTopology::fat_tree)
        for (const char* key : {"/nodes_per_leaf", "/leaf_uplink_gb_s"})
            if (doc.has(key))
                throw doc.error_at(
                    key, fmt::format("{} belongs to \"topology\": \"fat-tree\"", key + 1));
    if (doc.has("/nccl_algo")) {
        const std::string& algo = doc.string("/nccl_algo", 20);
        try {
            c.nccl_algo = parse_nccl_algo(algo);
        } catch (const std::invalid_argument& e) {
            throw doc.error_at("/nccl_algo", std::string("nccl_algo: ") + e.what());
        }
    }
    check_cluster(c);
    return c;
}

ClusterSpec load_cluster(std::string_view name_or_file) {
    // FILE.json:N resized nothing and was called an unknown cluster (or a missing file).
    if (const auto colon = name_or_file.rfind(':'); colon != std::string_view::npos) {
        const std::string_view count = name_or_file.substr(colon + 1);
        if (!count.empty() && count.find_first_not_of("0123456789") == std::string_view::npos &&
            fileio::file_extension(name_or_file.substr(0, colon)) == ".json")
            throw std::invalid_argument(fmt::format(
                "cluster {}: ':{}' resizes a preset; a cluster file lists its nodes itself (edit "
                "its node groups' counts)",
                fileio::quote_excerpt(name_or_file.substr(0, colon), 80), count));
    }
    if (fileio::names_a_file(name_or_file)) {
        const std::string path(name_or_file);
        return parse_cluster_json(path, fileio::read_text_file(path, max_cluster_file_bytes));
    }
    std::string_view name = name_or_file;
    int nodes = 0;
    if (const auto colon = name.find(':'); colon != std::string_view::npos) {
        const std::string_view count = name.substr(colon + 1);
        const auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), nodes);
        if (count.empty() || ec != std::errc() || ptr != count.data() + count.size() || nodes < 1 ||
            nodes > max_nodes)
            throw std::invalid_argument(fmt::format(
                "cluster '{}': expected NAME:NODES with NODES in 1..{}", name_or_file, max_nodes));
        name = name.substr(0, colon);
    }
    std::string known;
    for (const ClusterPreset& preset : cluster_presets()) {
        if (preset.name == name) {
            ClusterSpec c = preset.make(nodes);
            check_cluster(c);
            return c;
        }
        known += known.empty() ? "" : ", ";
        known += preset.name;
    }
    throw std::invalid_argument(
        fmt::format("unknown cluster {} (presets: {}; or a cluster file: a .json name or a path "
                    "with a '/')",
                    fileio::quote_excerpt(name, 80), known));
}

}  // namespace pipesim::simgrid
