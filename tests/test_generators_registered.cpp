// Every registered schedule builds exactly what tests/golden/registered_digests.txt records,
// for p = 1..32, several m (1, 2, p − 1, p, p + 1, 2p, 3p + 2) and four kinds of planning
// costs: none, analyze's default (F = B = W = 1 per full stage, split over the chunks), uneven
// per-stage times, and uneven times with a latency and a W memory share of one half. One line
// per schedule, costs and p holds the digest of the schedules (or errors) of every m. The
// file was written before the generators were made faster; a faster generator must build the
// same schedules. The V schedules with costs take minutes for every p: the default run checks
// them for some p, the "[.slow]" case for all. Rewrite it only when a schedule changes on purpose:
//   blocks_tests "[.write-registered-golden]"   (writes the file into the source tree)
#include <catch2/catch.hpp>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "schedule_digest.hpp"
#include "schedules/costs.hpp"
#include "schedules/registry.hpp"

using namespace pipesim;

namespace {

const std::string digest_file =
    std::string(PIPESIM_SOURCE_DIR) + "/tests/golden/registered_digests.txt";

enum class Costs { none, unit, uneven, uneven_latency };

const char* costs_name(Costs c) {
    switch (c) {
        case Costs::none:
            return "no costs";
        case Costs::unit:
            return "unit costs";
        case Costs::uneven:
            return "uneven costs";
        case Costs::uneven_latency:
            return "uneven costs, latency 0.3, W share 0.5";
    }
    return "";
}

PlanningCosts planning(Costs c, int devices, int chunks) {
    switch (c) {
        case Costs::none:
            return {};
        case Costs::unit:
            return {uniform_stage_costs(devices, chunks, 1, 1, 1), 0, 1};
        case Costs::uneven:
            return test::patterned_costs(devices * chunks, 0, 1);
        case Costs::uneven_latency:
            return test::patterned_costs(devices * chunks, 0.3, 0.5);
    }
    return {};
}

// The generator's options: its default v and group size, and for interleaved 1F1B v = 3
// and a group size of 2 as well.
struct Variant {
    const char* suffix;
    int chunks;
    int group_size;
};

std::vector<Variant> variants(const ScheduleGenerator& g) {
    if (!g.takes_group_size) return {{"", 0, 0}};
    return {{"", 0, 0}, {" v=3", 3, 0}, {" g=2", 0, 2}};
}

std::vector<int> microbatch_counts(int p) {
    std::vector<int> out;
    for (int m : {1, 2, p - 1, p, p + 1, 2 * p, 3 * p + 2})
        if (m >= 1 && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    return out;
}

// p = 1..32.
std::vector<int> every_p() {
    std::vector<int> out;
    for (int p = 1; p <= 32; ++p)
        out.push_back(p);
    return out;
}

// The digests of `names` for the devices counts `ps`; with planning costs only for `costed_ps`.
std::map<std::string, std::string> current_digests(std::initializer_list<const char*> names,
                                                   const std::vector<int>& ps = every_p(),
                                                   const std::vector<int>& costed_ps = every_p()) {
    std::map<std::string, std::string> out;
    for (const char* name : names) {
        const ScheduleGenerator& g = *find_generator(name);
        for (Costs c : {Costs::none, Costs::unit, Costs::uneven, Costs::uneven_latency})
            for (const Variant& variant : variants(g))
                for (int p : c == Costs::none ? ps : costed_ps) {
                    test::Fnv fnv;
                    for (int m : microbatch_counts(p)) {
                        GeneratorOptions o{p, m, variant.chunks, variant.group_size};
                        std::string text;
                        try {
                            o.planning = planning(c, p, o.chunks > 0 ? o.chunks : g.default_chunks);
                            text = test::digest(generate_schedule(name, o));
                        } catch (const std::exception& e) {
                            text = std::string("error ") + e.what();
                        }
                        for (char ch : fmt::format("m={} {};", m, text))
                            fnv.mix(ch);
                    }
                    out[fmt::format("{}{} {} p={}", name, variant.suffix, costs_name(c), p)] =
                        fmt::format("{:016x}", fnv.h);
                }
    }
    return out;
}

void check_recorded(std::initializer_list<const char*> names,
                    const std::vector<int>& costed_ps = every_p()) {
    const std::map<std::string, std::string> recorded = test::read_digests(digest_file);
    const std::map<std::string, std::string> current = current_digests(names, every_p(), costed_ps);
    REQUIRE(!current.empty());
    for (const auto& [key, value] : current) {
        CAPTURE(key);
        const auto found = recorded.find(key);
        REQUIRE(found != recorded.end());
        CHECK(value == found->second);
    }
}

constexpr std::initializer_list<const char*> fixed_orders{
    "gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "dualpipe", "dualpipe-v"};

}  // namespace

TEST_CASE("the fixed-order schedules build the recorded schedules up to p = 32",
          "[schedules][golden]") {
    check_recorded(fixed_orders);
}

TEST_CASE("zb-1p and zb-2p build the recorded schedules up to p = 32", "[schedules][golden]") {
    check_recorded({"zb-1p", "zb-2p"});
}

// The V schedules plan with costs by trying many candidates on small problems (seconds for
// all 32 p): by default with costs only for some p, every p in the slow test below.
const std::vector<int> some_p{1, 2, 3, 4, 6, 31, 32};

TEST_CASE("v-min and v-half build the recorded schedules", "[schedules][golden]") {
    check_recorded({"v-min", "v-half"}, some_p);
}

TEST_CASE("v-zb and zb-v build the recorded schedules", "[schedules][golden]") {
    check_recorded({"v-zb", "zb-v"}, some_p);
}

TEST_CASE("the V schedules build the recorded schedules with costs for every p up to 32",
          "[schedules][golden][.slow]") {
    check_recorded({"v-min", "v-half", "v-zb", "zb-v"});
}

TEST_CASE("the recorded digests cover every registered schedule", "[schedules][golden]") {
    const std::map<std::string, std::string> recorded = test::read_digests(digest_file);
    for (const ScheduleGenerator& g : schedule_generators()) {
        CAPTURE(g.name);
        CHECK(recorded.count(fmt::format("{} no costs p=32", g.name)) == 1);
    }
}

TEST_CASE("write the registered schedules' digests", "[.write-registered-golden]") {
    std::map<std::string, std::string> all = current_digests(fixed_orders);
    for (auto names : {std::initializer_list<const char*>{"zb-1p", "zb-2p"},
                       std::initializer_list<const char*>{"v-min", "v-half"},
                       std::initializer_list<const char*>{"v-zb", "zb-v"}})
        all.merge(current_digests(names));
    REQUIRE(test::write_digests(digest_file, all));
}
