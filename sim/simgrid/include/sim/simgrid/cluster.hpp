#pragma once
// GPU cluster descriptions for the SimGrid engine: presets and a JSON file format
// (docs/cluster-format.md). Plain data; nothing here needs SimGrid.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pipesim::simgrid {

/// A link class: bandwidth in bytes per second (each direction), latency in seconds.
struct LinkSpec {
    double bandwidth = 0;
    double latency = 0;

    bool operator==(const LinkSpec&) const = default;
};

/// The NIC latency of the built-in clusters, end to end between GPUs of two nodes (seconds):
/// an assumed figure (small-message NCCL point-to-point latencies over InfiniBand or RoCE are
/// a few microseconds), not a datasheet one.
inline constexpr double preset_nic_latency = 5e-6;

/// Nodes that share a GPU type. `speed` scales every compute op on these GPUs (2 = twice as
/// fast as the costs given). 0 means "from the GPU type": the ratio of its dense bf16 peak
/// to that of the GPU the costs were computed for (models' GPU table).
struct NodeGroup {
    int count = 1;
    std::string gpu;
    double speed = 0;

    bool operator==(const NodeGroup&) const = default;
};

enum class InterNodeTopology { star, fat_tree };

/// How the data-parallel gradient all-reduce runs, as NCCL_ALGO chooses it: a ring, a tree (a
/// chain inside each node and a double binary tree between nodes), or per collective the one
/// NCCL's tuning model predicts faster (docs/cluster-format.md, "Collectives").
enum class NcclAlgo { auto_select, ring, tree };
/// "auto", "ring" or "tree".
const char* to_string(NcclAlgo algo);
/// Parses "auto", "ring" or "tree"; throws std::invalid_argument naming the three otherwise.
NcclAlgo parse_nccl_algo(std::string_view text);

/// A GPU cluster. Inside a node every GPU has its own port (NVLink-class or PCIe) to a
/// non-blocking node switch. Between nodes, traffic leaves through a NIC (one per node, or one
/// per GPU) into a non-blocking star, or a two-level fat tree whose leaf switches each have an
/// uplink of `leaf_uplink_bandwidth` to the spine. A route's whole latency is the latency of
/// its class (intra-node or inter-node), so the model's latencies are end to end.
struct ClusterSpec {
    std::string name;
    std::string description;
    int gpus_per_node = 8;
    std::vector<NodeGroup> nodes;
    LinkSpec intra_node;  ///< each GPU's port inside its node
    /// What NCCL's ring collectives reach inside a node, as all-reduce bus bandwidth (bytes/s,
    /// nccl-tests' busbw); every hop of a collective between two GPUs of one node moves at this
    /// rate instead of the port's. 0: the port's bandwidth (an ideal collective).
    double intra_node_collective_bandwidth = 0;
    /// What NCCL's send/receive reaches between two GPUs of one node (bytes/s): a pipeline
    /// message inside a node moves at most this fast (NCCL gives a point-to-point transfer a
    /// few of its channels, not the whole port). 0: the port's bandwidth.
    double intra_node_p2p_bandwidth = 0;
    LinkSpec nic;  ///< each NIC; latency is the inter-node latency
    bool nic_per_gpu = false;
    InterNodeTopology topology = InterNodeTopology::star;
    int nodes_per_leaf = 0;            ///< fat tree only
    double leaf_uplink_bandwidth = 0;  ///< fat tree only, bytes per second each direction
    /// The gradient all-reduce's algorithm on this cluster (SimOptions::nccl_algo overrides).
    NcclAlgo nccl_algo = NcclAlgo::auto_select;

    int node_count() const;
    int gpu_count() const { return node_count() * gpus_per_node; }
    /// The node group of node `node`.
    const NodeGroup& group_of_node(int node) const;

    bool operator==(const ClusterSpec&) const = default;
};

/// Built-in presets, each with its source in cluster_presets.cpp.
struct ClusterPreset {
    std::string_view name;
    std::string_view description;
    ClusterSpec (*make)(int nodes);  ///< nodes = 0: the preset's default size
};
std::vector<ClusterPreset> cluster_presets();

/// The largest cluster file load_cluster() reads.
inline constexpr std::size_t max_cluster_file_bytes = 1 << 20;

/// Resolves "NAME" or "NAME:NODES" (a preset, optionally resized) or a path to a cluster JSON
/// file (anything ending in .json). Throws std::invalid_argument naming the preset list for
/// an unknown name, or "file:line:column: ..." for a bad file.
ClusterSpec load_cluster(std::string_view name_or_file);

/// Parses a cluster JSON document; `file` names it in messages.
ClusterSpec parse_cluster_json(const std::string& file, const std::string& text);

/// Throws std::invalid_argument unless every count, bandwidth and latency makes sense.
void check_cluster(const ClusterSpec& cluster);

}  // namespace pipesim::simgrid
