// The list schedulers and the idle fill (auto_schedule, the Zero Bubble round heuristic,
// fill_idle) build exactly the schedules recorded in tests/golden/generator_digests.txt, for
// every shape that uses them up to p = 32: the registered zb-1p, zb-2p, v-half and v-zb, the
// search's greedy (v = 1 and V-shape v = 2) and heuristic candidates and its filled V-shape
// blocks. The file was written by the straightforward algorithms these replaced (one scan of
// every device per op placed, a look-ahead window growing with p), so faster versions must
// keep every op of every device in place. Rewrite it only on purpose:
//   blocks_tests "[.write-golden]"   (writes the file into the source tree)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "schedule_digest.hpp"
#include "schedules/auto_schedule.hpp"
#include "schedules/block_catalog.hpp"
#include "schedules/placement.hpp"
#include "schedules/registry.hpp"

using namespace pipesim;
using pipesim::test::digest;
using pipesim::test::Fnv;
using pipesim::test::patterned_costs;

namespace {

const std::string digest_file =
    std::string(PIPESIM_SOURCE_DIR) + "/tests/golden/generator_digests.txt";

std::vector<int> microbatch_counts(int p) {
    std::vector<int> out;
    for (int m : {1, 2, 3, p - 1, p, p + 1, 2 * p, 3 * p + 2})
        if (m >= 1 && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    return out;
}

// Every case: a key naming it and the digest of what it builds (or its error).
std::map<std::string, std::string> current_digests() {
    std::map<std::string, std::string> out;
    auto record = [&](const std::string& key, const std::function<std::string()>& build) {
        try {
            out[key] = build();
        } catch (const std::exception& e) {
            out[key] = std::string("error ") + e.what();
        }
    };
    for (int p = 1; p <= 32; ++p) {
        for (int m : microbatch_counts(p)) {
            for (const char* name : {"zb-1p", "zb-2p", "v-half", "v-zb"})
                record(fmt::format("{} p={} m={}", name, p, m), [&] {
                    return digest(generate_schedule(name, {p, m, 0, 0}));
                });
            for (int offset = 1; offset <= 6; ++offset)
                record(fmt::format("v-shape {} filled p={} m={}", offset, p, m), [&] {
                    return digest(schedule_from_block(
                        vshape_block(p, offset), m,
                        BlockScheduleOptions{.reorder = true, .fill_idle = true}));
                });
            for (int chunks : {1, 2}) {
                for (double cap : {0.5 * p + 1, 1.0 * p, 2.0 * p}) {
                    record(fmt::format("auto v={} cap {:g} p={} m={}", chunks, cap, p, m), [&] {
                        AutoScheduleOptions a;
                        a.devices = p;
                        a.microbatches = m;
                        a.chunks = chunks;
                        if (chunks == 2) a.stage_device = vshape_placement(p, 2);
                        a.costs = patterned_costs(p * chunks, 0.3, 1);
                        a.memory_limit = cap;
                        return digest(auto_schedule(a));
                    });
                }
            }
            for (double cap : {1.0 * p, 1.5 * p, 2.0 * p}) {
                record(fmt::format("heuristic cap {:g} p={} m={}", cap, p, m), [&] {
                    // The paper's eight choices: the first eight candidates (the ninth to
                    // 16th also clear the first stage's W's, zb_heuristic.cpp).
                    std::string all;
                    const std::vector<PlannedSchedule> candidates =
                        zero_bubble_heuristic("h", p, m, patterned_costs(p, 0.2, 0.5), cap);
                    for (std::size_t k = 0; k < std::min<std::size_t>(8, candidates.size()); ++k)
                        all += fmt::format("[{} {:.17g} {:.17g}]", digest(candidates[k].schedule),
                                           candidates[k].length.longest_span,
                                           candidates[k].length.makespan);
                    Fnv fnv;
                    for (char ch : all)
                        fnv.mix(ch);
                    return fmt::format("{:016x}", fnv.h);
                });
            }
            for (const char* name : {"zb-1p", "zb-2p"})
                record(fmt::format("{} costs p={} m={}", name, p, m), [&] {
                    GeneratorOptions o{p, m, 0, 0};
                    o.planning = patterned_costs(p, 0.4, 0.25);
                    return digest(generate_schedule(name, o));
                });
        }
    }
    return out;
}

}  // namespace

TEST_CASE("the list schedulers and the idle fill build the recorded schedules up to p = 32",
          "[schedules][auto][golden]") {
    const std::map<std::string, std::string> recorded = test::read_digests(digest_file);
    const std::map<std::string, std::string> current = current_digests();
    REQUIRE(recorded.size() == current.size());
    for (const auto& [key, value] : current) {
        CAPTURE(key);
        const auto found = recorded.find(key);
        REQUIRE(found != recorded.end());
        CHECK(value == found->second);
    }
}

TEST_CASE("write the recorded schedule digests", "[.write-golden]") {
    REQUIRE(test::write_digests(digest_file, current_digests()));
}
