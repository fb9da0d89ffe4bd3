// libFuzzer target: cluster JSON (docs/cluster-format.md). Any input must either parse into
// a cluster that check_cluster() accepts, or be rejected with std::invalid_argument (a
// ParseError at a position, or check_cluster's message for a cluster that cannot work);
// anything else is a bug. There is no cluster writer, so nothing to round-trip.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/simgrid/cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    pipesim::simgrid::ClusterSpec cluster;
    try {
        cluster = pipesim::simgrid::parse_cluster_json("fuzz.json", text);
    } catch (const std::invalid_argument&) {
        return 0;
    }
    pipesim::simgrid::check_cluster(cluster);  // throws (uncaught: a bug) for what should not parse
    return 0;
}
