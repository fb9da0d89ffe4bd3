#pragma once
// Digests of generated schedules for the golden-digest tests: every device's ops in order
// hashed with FNV-1a (64 bits), so equal digests mean equal schedules (barring a collision),
// and the "key | digest" files in tests/golden that hold them.
#include <cstdint>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::test {

// FNV-1a, 64 bits.
struct Fnv {
    std::uint64_t h = 1469598103934665603ull;
    void mix(std::int64_t x) {
        for (int k = 0; k < 8; ++k) {
            h ^= static_cast<std::uint64_t>(x >> (8 * k)) & 0xff;
            h *= 1099511628211ull;
        }
    }
};

// Every device's ops in order, and the op count.
inline std::string digest(const Schedule& s) {
    Fnv fnv;
    for (const auto& ops : s.device_ops) {
        fnv.mix(-1);
        for (const Op& op : ops) {
            fnv.mix(static_cast<int>(op.pass));
            fnv.mix(op.microbatch);
            fnv.mix(op.stage);
        }
    }
    return fmt::format("{:016x} ops {}", fnv.h, s.op_count());
}

// Uneven per-stage times with a pattern (no random numbers: the files must not depend on a
// library's distributions).
inline PlanningCosts patterned_costs(int stages, double latency, double w_share) {
    PlanningCosts c;
    for (int s = 0; s < stages; ++s) {
        c.times.forward.push_back(1.0 + 0.25 * ((s * 7) % 5));
        c.times.backward_input.push_back(1.5 + 0.125 * ((s * 3) % 7));
        c.times.backward_weight.push_back(0.5 + 0.2 * ((s * 5) % 4));
    }
    c.comm_latency = latency;
    c.w_memory_share = w_share;
    return c;
}

// The "key | digest" lines of `path`.
inline std::map<std::string, std::string> read_digests(const std::string& path) {
    std::ifstream in(path);
    std::map<std::string, std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t bar = line.find(" | ");
        if (bar != std::string::npos) out[line.substr(0, bar)] = line.substr(bar + 3);
    }
    return out;
}

// Writes `digests` as "key | digest" lines; whether it succeeded.
inline bool write_digests(const std::string& path,
                          const std::map<std::string, std::string>& digests) {
    std::ofstream out(path);
    for (const auto& [key, value] : digests)
        out << key << " | " << value << '\n';
    return out.good();
}

}  // namespace pipesim::test
