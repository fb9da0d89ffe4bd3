// The search's V-shape blocks of every six-slot starting pattern: every schedule valid and
// within the cap, zero bubble where ZB-V has none, a larger cap never worse, and the search's
// best at least as good as the authors' adaptive V scheduler on inputs it was run on.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "schedules/search.hpp"
#include "schedules/validate.hpp"
#include "search_replay.hpp"

using namespace pipesim;

namespace {

constexpr double tol = 1e-9;
constexpr const char* patterns_prefix = "v-shape patterns";

// The search, with every candidate of the pattern family checked for validity on the way.
struct Searched {
    SearchResult result;
    int pattern_schedules = 0;
    bool all_valid = true;
};

Searched search(const SearchOptions& o) {
    Searched out;
    out.result = search_schedules(o, [&](const Schedule& s) {
        if (s.name == "v-patterns") {
            ++out.pattern_schedules;
            if (validate(s)) out.all_valid = false;
        }
        return test::replay_evaluation(s, o);
    });
    return out;
}

const SearchEntry* patterns_entry(const SearchResult& r) {
    for (const SearchEntry& e : r.ranking)
        if (e.label.rfind(patterns_prefix, 0) == 0) return &e;
    return nullptr;
}

}  // namespace

TEST_CASE("six-slot pattern schedules are valid and keep the cap, on random inputs",
          "[search][patterns]") {
    std::mt19937 rng(2024);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int trial = 0; trial < 4; ++trial) {
        const int p = pick(3, 7);
        const int m = pick(p, 4 * p);  // fewer than 2p microbatches too
        const double cap = pick(p, 2 * p) / 2.0;
        const PassCosts full{2.0 * pick(1, 5), 2.0 * pick(1, 5), 2.0 * pick(1, 5)};
        const double c = pick(0, 1);
        CAPTURE(p, m, cap, full.forward, full.backward_input, full.backward_weight, c);
        const Searched s = search(test::search_options(p, m, cap, full, c));
        CHECK(s.all_valid);
        const SearchEntry* e = patterns_entry(s.result);
        if (!e) continue;  // no block fits this cap
        CHECK(s.pattern_schedules == 1);
        CHECK(e->fits);
        CHECK(e->evaluation.peak_activation_max <= cap + tol);
        // The search's best is never above it.
        CHECK(s.result.ranking.front().evaluation.bubble_rate <= e->evaluation.bubble_rate + tol);
    }
}

TEST_CASE("with F = B = W and 1F1B's memory the six-slot patterns idle nowhere",
          "[search][patterns]") {
    // ZB-V's block is one of the patterns (F, B of both chunks one slot apart, offsets 2 and
    // -1; Qi et al., NeurIPS 2024, §3): with equal pass times and no latency every device
    // runs without a gap once it has started, within p full-stage microbatches.
    for (int p : {3, 4, 6}) {
        CAPTURE(p);
        const Searched s = search(test::search_options(p, 3 * p, p, PassCosts{1, 1, 1}));
        const SearchEntry* e = patterns_entry(s.result);
        REQUIRE(e);
        CHECK(e->evaluation.bubble_rate == Approx(0).margin(tol));
        CHECK(e->evaluation.peak_activation_max <= p + tol);
    }
}

TEST_CASE("a larger cap never makes the six-slot patterns worse", "[search][patterns]") {
    // With at least 2p microbatches every block that fits a cap fits a larger one.
    const PassCosts full{4, 6, 8};
    double previous = 1;
    for (double cap : {2.5, 3.5, 5.0}) {
        CAPTURE(cap);
        const Searched s = search(test::search_options(5, 12, cap, full, 1));
        const SearchEntry* e = patterns_entry(s.result);
        if (!e) continue;
        CHECK(e->evaluation.bubble_rate <= previous + tol);
        previous = e->evaluation.bubble_rate;
    }
    CHECK(previous < 1);
}

TEST_CASE("the capped search is at least as good as the authors' adaptive V scheduler",
          "[search][patterns]") {
    // v_auto_schedule.py (sail-sg/zero-bubble-pipeline-parallelism) run with these chunk
    // times (half the full-stage ones below), latency and cap (twice the full-stage cap, in
    // chunk activations), its schedule replayed by pipesim: bubble rate and peak. The search's
    // best before the six-slot patterns in brackets.
    struct Row {
        int p, m;
        PassCosts full;
        double c, cap, bubble, peak;
    };
    for (const Row& r : {
             Row{8, 24, {6, 10, 8}, 0, 7.5, 0.046358, 7.5},   // (5.11 %)
             Row{4, 12, {10, 4, 10}, 1, 2.5, 0.181819, 2.5},  // (18.87 %)
             Row{4, 14, {10, 6, 10}, 1, 2.5, 0.161291, 2.5},  // (17.27 %)
             Row{5, 16, {8, 2, 8}, 1, 4.5, 0.088608, 4.5},    // (9.43 %)
             Row{7, 16, {2, 6, 6}, 0, 5.5, 0.096775, 5.5},    // (10.04 %)
         }) {
        CAPTURE(r.p, r.m, r.full.forward, r.full.backward_input, r.full.backward_weight, r.c,
                r.cap);
        const Searched s = search(test::search_options(r.p, r.m, r.cap, r.full, r.c));
        const SearchEntry& best = s.result.ranking.front();
        CHECK(best.fits);
        CHECK(best.evaluation.bubble_rate <= r.bubble);
        CHECK(best.evaluation.peak_activation_max <= r.peak + tol);
    }
}
