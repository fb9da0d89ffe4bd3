// DualPipe (DeepSeek-V3 report §3.2.1 and github.com/deepseek-ai/DualPipe) against DeepSeek's
// table: bubble (PP/2 − 1)(F&B + B − 3W), parameters 2×, activations PP + 1, with PP = p.
//
// Units. Costs are given per chunk (one virtual stage, one of the model's p layer slices)
// through uniform_stage_costs(p, 2, 2f, 2b, 2w), so a chunk's F, B, W take f, b, w. Memory uses
// the unit model of the IR: M_B = 1/2 per chunk, so "1 unit" is one microbatch's activations
// over everything a device holds, its two chunks (two slices: one of each model copy).
// DeepSeek counts in chunks ("1" = one microbatch through one PP stage = one slice), which is
// 1/2 of our unit: PP + 1 chunks = (p + 1)/2 units. 1F1B on the same model holds p slices per
// device, i.e. p/2 of these units, so the comparison "PP + 1 against PP" is preserved.
#include <array>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

Schedule dualpipe(int p, int m) {
    return generate_schedule("dualpipe", {p, m, 0, 0});
}

// Chunk pass times f, b, w (see the units above).
Metrics chunk_metrics(const Schedule& s, double f, double b, double w) {
    return compute_metrics(replay(s, uniform_stage_costs(s.devices, 2, 2 * f, 2 * b, 2 * w)),
                           unit_memory_model(s.devices, 2));
}

// Independent check of the replay: each op's earliest start by memoised recursion over its
// two kinds of predecessors, the previous op on its device and its inputs (plus the latency
// when an input ran on another device).
class LongestPath {
  public:
    LongestPath(const Schedule& s, const StageCosts& c, double latency)
        : s_(s), c_(c), latency_(latency) {
        for (int d = 0; d < s.devices; ++d)
            for (std::size_t k = 0; k < s.device_ops[d].size(); ++k)
                where_[key(s.device_ops[d][k])] = {d, static_cast<int>(k)};
    }

    double start(const Op& op) {
        const auto found = memo_.find(key(op));
        if (found != memo_.end()) return found->second;
        const auto [device, position] = where_.at(key(op));
        double t = 0;
        if (position > 0) t = end(s_.device_ops[device][position - 1]);
        for (const Op& in : inputs(op))
            t = std::max(t, end(in) + (where_.at(key(in)).first != device ? latency_ : 0.0));
        memo_[key(op)] = t;
        return t;
    }

  private:
    using Key = std::tuple<int, int, int>;
    static Key key(const Op& op) { return {static_cast<int>(op.pass), op.microbatch, op.stage}; }

    double end(const Op& op) {
        const double f = c_.forward[op.stage];
        const double b = c_.backward_input[op.stage];
        const double w = c_.backward_weight[op.stage];
        const double length = op.pass == Pass::F   ? f
                              : op.pass == Pass::B ? b
                              : op.pass == Pass::W ? w
                                                   : b + w;
        return start(op) + length;
    }

    std::vector<Op> inputs(const Op& op) const {
        const StageRange r = s_.stages_of(op.microbatch);
        std::vector<Op> in;
        if (op.pass == Pass::F && op.stage > r.first)
            in.push_back({Pass::F, op.microbatch, op.stage - 1});
        if (op.pass == Pass::B || op.pass == Pass::BW) {
            in.push_back({Pass::F, op.microbatch, op.stage});
            if (op.stage < r.last) {
                const Op split{Pass::B, op.microbatch, op.stage + 1};
                in.push_back(where_.count(key(split)) ? split
                                                      : Op{Pass::BW, op.microbatch, op.stage + 1});
            }
        }
        if (op.pass == Pass::W) in.push_back({Pass::B, op.microbatch, op.stage});
        return in;
    }

    const Schedule& s_;
    const StageCosts& c_;
    double latency_;
    std::map<Key, std::pair<int, int>> where_;
    std::map<Key, double> memo_;
};

}  // namespace

TEST_CASE("DualPipe is valid over a grid of even p and m, each copy fed from its own end",
          "[schedules][dualpipe]") {
    for (int p : {2, 4, 6, 8, 10, 16}) {
        for (int m : {2, 4, p, 2 * p, 2 * p + 2, 3 * p, 6 * p}) {
            if (m % 2 != 0) continue;
            CAPTURE(p, m);
            const Schedule s = dualpipe(p, m);  // throws unless validate() accepts it
            REQUIRE(s.microbatch_stages.size() == static_cast<std::size_t>(m));
            for (int j = 0; j < m; ++j)
                CHECK(s.stages_of(j) ==
                      (j < m / 2 ? StageRange{0, p - 1} : StageRange{p, 2 * p - 1}));
            // Copy A enters on device 0, copy B on device p − 1.
            CHECK(s.stage_device[0] == 0);
            CHECK(s.stage_device[p] == p - 1);
            // Each microbatch passes once through each stage of its range: one F there, and
            // either a fused BW or a B and a W. Count the passes of every (microbatch, stage)
            // from the ops the devices run, then the op total against the closed form
            // m·p·2 + (number of split backwards).
            std::map<std::pair<int, int>, std::array<int, pass_count>> passes;
            std::size_t ops = 0;
            for (int d = 0; d < p; ++d) {
                for (const Op& op : s.device_ops[static_cast<std::size_t>(d)]) {
                    const StageRange r = s.stages_of(op.microbatch);
                    CHECK((op.stage >= r.first && op.stage <= r.last));
                    CHECK(s.stage_device[static_cast<std::size_t>(op.stage)] == d);
                    ++passes[{op.microbatch, op.stage}][static_cast<std::size_t>(op.pass)];
                    ++ops;
                }
            }
            std::size_t range_stages = 0;
            for (const StageRange& r : s.microbatch_stages)
                range_stages += static_cast<std::size_t>(r.last - r.first + 1);
            const auto mp = static_cast<std::size_t>(m) * static_cast<std::size_t>(p);
            CHECK(range_stages == mp);
            CHECK(passes.size() == mp);
            std::size_t split = 0;
            for (const auto& [where, count] : passes) {
                CAPTURE(where.first, where.second);
                const int f = count[static_cast<std::size_t>(Pass::F)];
                const int b = count[static_cast<std::size_t>(Pass::B)];
                const int w = count[static_cast<std::size_t>(Pass::W)];
                const int bw = count[static_cast<std::size_t>(Pass::BW)];
                CHECK(f == 1);
                CHECK(((bw == 1 && b == 0 && w == 0) || (bw == 0 && b == 1 && w == 1)));
                if (b == 1) ++split;
            }
            CHECK(ops == mp * 2 + split);
        }
    }
}

TEST_CASE("DualPipe holds 2× the parameters: every layer slice sits on two devices",
          "[schedules][dualpipe]") {
    // Copy B's stage p + j holds the layers of copy A's stage j. With the V-shape placement
    // device i holds slices i and p − 1 − i, so each of the p slices is on two devices.
    // The devices holding a slice are those that run its ops (stage j or p + j), read from
    // the schedule; each op must also run on the device its stage is placed on.
    for (int p : {2, 4, 8}) {
        CAPTURE(p);
        const Schedule s = dualpipe(p, 2 * p);
        REQUIRE(s.stage_device.size() == static_cast<std::size_t>(2 * p));
        std::vector<std::set<int>> holders(static_cast<std::size_t>(p));
        for (int d = 0; d < p; ++d) {
            for (const Op& op : s.device_ops[static_cast<std::size_t>(d)]) {
                CHECK(s.stage_device[static_cast<std::size_t>(op.stage)] == d);
                const int slice = op.stage < p ? op.stage : op.stage - p;
                holders[static_cast<std::size_t>(slice)].insert(d);
            }
        }
        for (int slice = 0; slice < p; ++slice) {
            CAPTURE(slice);
            const std::set<int>& on = holders[static_cast<std::size_t>(slice)];
            CHECK(on.size() == 2);
            // V-shape: slice j sits on devices j and p − 1 − j.
            CHECK(on == std::set<int>{slice, p - 1 - slice});
        }
    }
}

TEST_CASE("DualPipe holds PP + 1 chunks, (p + 1)/2 units, on every device once m ≥ 2p",
          "[schedules][dualpipe]") {
    for (int p : {2, 4, 6, 8, 12}) {
        for (int m : {2 * p, 2 * p + 2, 4 * p}) {
            CAPTURE(p, m);
            const Metrics d = chunk_metrics(dualpipe(p, m), 1, 1, 1);
            for (const DeviceMetrics& device : d.devices)
                CHECK(device.peak_activation == Approx((p + 1) / 2.0));
        }
    }
}

TEST_CASE("DualPipe idles (p/2 − 1)·F, DeepSeek's formula when B = W", "[schedules][dualpipe]") {
    // DeepSeek's bubble (PP/2 − 1)(F&B + B − 3W) with F&B := F + B + W (the pair's F then its
    // full backward) and B the input-gradient pass gives (p/2 − 1)·F whenever B = W, which is
    // what the replay measures (as for dualpipe-v, whose test reads the formula the same way).
    for (auto [f, b, w] : {std::tuple{1.0, 1.0, 1.0}, {2.0, 1.0, 1.0}, {3.0, 2.0, 2.0}}) {
        for (int p : {2, 4, 6, 8, 12}) {
            for (int m : {2 * p, 3 * p + 2, 6 * p}) {
                CAPTURE(f, b, w, p, m);
                const Metrics d = chunk_metrics(dualpipe(p, m), f, b, w);
                const double fb = f + b + w;
                CHECK(d.bubble_time == Approx((p / 2 - 1) * (fb + b - 3 * w)).margin(1e-9));
                CHECK(d.makespan == Approx(m * (f + b + w) + d.bubble_time));
            }
        }
    }
}

TEST_CASE("DualPipe never idles more than DeepSeek's formula read with B the full backward",
          "[schedules][dualpipe]") {
    // The README defines B as a full backward chunk (B + W here). Read that way, with F&B :=
    // F + B + W (no overlap gain), (PP/2 − 1)(F&B + (B + W) − 3W) bounds the measured bubble:
    // unlike DeepSeek's overlapped pair, our F can start before the backward's input arrives.
    for (auto [f, b, w] : {std::tuple{1.0, 1.0, 1.0},
                           {2.0, 1.0, 1.0},
                           {1.0, 2.0, 1.0},
                           {1.0, 1.0, 2.0},
                           {3.0, 2.0, 1.0},
                           {1.0, 3.0, 2.0},
                           {2.0, 3.0, 1.0}}) {
        for (int p : {4, 6, 8}) {
            CAPTURE(f, b, w, p);
            const Metrics d = chunk_metrics(dualpipe(p, 4 * p), f, b, w);
            CHECK(d.bubble_time <= (p / 2 - 1) * (f + b + w + (b + w) - 3 * w) + 1e-9);
        }
    }
}

TEST_CASE("DualPipe's bubble does not grow with m and is below DualPipeV's at equal p",
          "[schedules][dualpipe]") {
    // Both idle (PP/2 − 1)·F with B = W: PP = p ranks for DualPipe, PP = 2p stages for
    // DualPipeV, so DualPipe's (p/2 − 1)·F against DualPipeV's (p − 1)·F.
    for (int p : {4, 8}) {
        const double first = chunk_metrics(dualpipe(p, 2 * p), 2, 1, 1).bubble_time;
        for (int m : {4 * p, 10 * p}) {
            CAPTURE(p, m);
            CHECK(chunk_metrics(dualpipe(p, m), 2, 1, 1).bubble_time == Approx(first));
        }
        const Schedule v = generate_schedule("dualpipe-v", {p, 4 * p, 0, 0});
        CHECK(chunk_metrics(v, 2, 1, 1).bubble_time == Approx(2 * first + 2));
    }
}

TEST_CASE("DualPipe's replay equals the brute-force longest path, with latency",
          "[schedules][dualpipe][sim]") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> cost(0.2, 3.0);
    for (auto [p, m] : {std::pair{2, 4}, {4, 8}, {4, 6}, {6, 14}}) {
        for (double latency : {0.0, 0.4}) {
            CAPTURE(p, m, latency);
            const Schedule s = dualpipe(p, m);
            StageCosts c;
            for (int k = 0; k < s.stages(); ++k) {
                c.forward.push_back(cost(rng));
                c.backward_input.push_back(cost(rng));
                c.backward_weight.push_back(cost(rng));
            }
            ReplayOptions options;
            options.comm_latency = latency;
            const Timeline t = replay(s, c, options);
            LongestPath expected(s, c, latency);
            for (const auto& device : t.device_ops)
                for (const TimedOp& op : device)
                    CHECK(op.start == Approx(expected.start(op.op)).margin(1e-9));
        }
    }
}

TEST_CASE("DualPipe refuses odd p and odd m with one clear line", "[schedules][dualpipe]") {
    CHECK_THROWS_WITH(dualpipe(3, 8),
                      Catch::Contains("even number of devices p") && Catch::Contains("p=3"));
    CHECK_THROWS_WITH(dualpipe(4, 7),
                      Catch::Contains("even number of microbatches m") && Catch::Contains("m=7"));
}
