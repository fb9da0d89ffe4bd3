// DualPipe (DeepSeek-V3 report §3.2.1 and github.com/deepseek-ai/DualPipe) against DeepSeek's
// table: bubble (PP/2 − 1)(F&B + B − 3W), parameters 2×, activations PP + 1, with PP = p.
//
// Units. Each chunk of DualPipe is a full stage of one of the two model copies, so a
// full-stage cost triple (--costs) is a chunk's cost as is: uniform_stage_costs(p, 2, f, b, w,
// 1) gives every chunk F, B, W = f, b, w, and the unit memory model with split 1 gives M_B = 1
// per chunk (one microbatch's activations of one stage). DeepSeek counts in the same unit, so
// its PP + 1 is p + 1 here; 1F1B on the same model holds p.
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "analysis/published.hpp"
#include "analysis/run.hpp"
#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule_json.hpp"
#include "schedules/validate.hpp"
#include "sim/replay.hpp"

using namespace pipesim;
using namespace pipesim::sim;

namespace {

Schedule dualpipe(int p, int m) {
    return generate_schedule("dualpipe", {p, m, 0, 0});
}

// Chunk pass times f, b, w (see the units above), all-to-all time a per chunk F and backward,
// share x of a pair's all-to-all hidden.
Metrics chunk_metrics(const Schedule& s, double f, double b, double w, double a = 0, double x = 0) {
    ReplayOptions options;
    if (a > 0) options.all_to_all.assign(static_cast<std::size_t>(s.stages()), a);
    options.fb_overlap = x;
    const int split = s.microbatch_chunks();
    return compute_metrics(replay(s, uniform_stage_costs(s.devices, 2, f, b, w, split), options),
                           unit_memory_model(s.devices, 2, 1.0, split));
}

// One analyze run with full-stage --costs f,b,w.
analysis::Analysis analyze(const std::string& schedule, int p, int m, double f, double b, double w,
                           double a2a = 0, double overlap = 0) {
    analysis::PipelineSpec spec;
    spec.schedule = schedule;
    spec.generator = {p, m, 0, 0};
    spec.costs.passes = {PassCosts{f, b, w}};
    spec.all_to_all = a2a;
    spec.fb_overlap = overlap;
    return analysis::run(spec);
}

// Independent check of the replay: each op's earliest start by memoised recursion over its
// two kinds of predecessors, the previous op on its device and its inputs (plus the latency
// when an input ran on another device).
class LongestPath {
  public:
    // An F&B pair's ops start together, when the device is free and the inputs of both
    // have arrived, and both outputs are there at the pair's end: f + b(+w) of the two, less
    // `hidden` (the overlap the replay applies; 0 here unless given).
    LongestPath(const Schedule& s, const StageCosts& c, double latency, double hidden = 0)
        : s_(s), c_(c), latency_(latency), hidden_(hidden) {
        for (int d = 0; d < s.devices; ++d)
            for (std::size_t k = 0; k < s.device_ops[d].size(); ++k)
                where_[key(s.device_ops[d][k])] = {d, static_cast<int>(k)};
        for (std::size_t d = 0; d < s.fb_pairs.size(); ++d)
            for (const int k : s.fb_pairs[d]) {
                partner_[key(s.device_ops[d][static_cast<std::size_t>(k)])] =
                    s.device_ops[d][static_cast<std::size_t>(k) + 1];
                partner_[key(s.device_ops[d][static_cast<std::size_t>(k) + 1])] =
                    s.device_ops[d][static_cast<std::size_t>(k)];
            }
    }

    // When `op` (or the pair holding it) starts.
    double start(const Op& op) {
        const auto found = memo_.find(key(op));
        if (found != memo_.end()) return found->second;
        const auto paired = partner_.find(key(op));
        const Op first = paired == partner_.end() || op.pass == Pass::F ? op : paired->second;
        const auto [device, position] = where_.at(key(first));
        double t = 0;
        if (position > 0) t = end(s_.device_ops[device][position - 1]);
        std::vector<Op> ops{first};
        if (paired != partner_.end()) ops.push_back(op.pass == Pass::F ? paired->second : op);
        for (const Op& o : ops)
            for (const Op& in : inputs(o))
                t = std::max(t, end(in) + (where_.at(key(in)).first != device ? latency_ : 0.0));
        for (const Op& o : ops)
            memo_[key(o)] = t;
        return t;
    }

  private:
    using Key = std::tuple<int, int, int>;
    static Key key(const Op& op) { return {static_cast<int>(op.pass), op.microbatch, op.stage}; }

    double end(const Op& op) {
        const auto paired = partner_.find(key(op));
        if (paired != partner_.end())
            return start(op) + length(op) + length(paired->second) - hidden_;
        return start(op) + length(op);
    }

    double length(const Op& op) const {
        const double f = c_.forward[op.stage];
        const double b = c_.backward_input[op.stage];
        const double w = c_.backward_weight[op.stage];
        return op.pass == Pass::F ? f : op.pass == Pass::B ? b : op.pass == Pass::W ? w : b + w;
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
    double hidden_;
    std::map<Key, std::pair<int, int>> where_;
    std::map<Key, Op> partner_;
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

TEST_CASE("DualPipe is charged a full stage per chunk: busy equals 1F1B's for the same --costs",
          "[schedules][dualpipe]") {
    // Every device runs, for each of the m microbatches, one stage's F, B and W (m/2 in each
    // copy), as 1F1B does: busy m(F + B + W) on every device.
    for (auto [f, b, w] : {std::tuple{1.0, 1.0, 1.0}, {1.0, 2.0, 1.0}, {3.0, 2.0, 0.5}}) {
        for (auto [p, m] : {std::pair{4, 8}, {6, 24}, {8, 16}}) {
            CAPTURE(f, b, w, p, m);
            const analysis::Analysis one = analyze("1f1b", p, m, f, b, w);
            const analysis::Analysis dual = analyze("dualpipe", p, m, f, b, w);
            const analysis::Analysis v = analyze("dualpipe-v", p, m, f, b, w);
            for (int d = 0; d < p; ++d) {
                CHECK(one.metrics.devices[d].busy == Approx(m * (f + b + w)));
                CHECK(dual.metrics.devices[d].busy == Approx(one.metrics.devices[d].busy));
                CHECK(v.metrics.devices[d].busy == Approx(one.metrics.devices[d].busy));
            }
            // A DualPipe chunk is a full stage; a DualPipeV chunk (2p stages) half of one.
            CHECK(dual.costs.forward[0] == f);
            CHECK(v.costs.forward[0] == f / 2);
        }
    }
}

TEST_CASE("V schedules keep --costs as a full stage split over their two chunks",
          "[schedules][dualpipe]") {
    for (const char* name : {"v-min", "v-half", "v-zb", "zb-v", "interleaved-1f1b"}) {
        CAPTURE(name);
        const analysis::Analysis a = analyze(name, 4, 8, 2, 4, 6);
        for (std::size_t s = 0; s < a.costs.stages(); ++s) {
            CHECK(a.costs.forward[s] == 1);
            CHECK(a.costs.backward_input[s] == 2);
            CHECK(a.costs.backward_weight[s] == 3);
            CHECK(a.memory.activation[s] == 0.5);
        }
    }
}

TEST_CASE("DualPipe holds PP + 1 stage activations on every device once m ≥ 2p",
          "[schedules][dualpipe]") {
    for (int p : {2, 4, 6, 8, 12}) {
        for (int m : {2 * p, 2 * p + 2, 4 * p}) {
            CAPTURE(p, m);
            const analysis::Analysis a = analyze("dualpipe", p, m, 1, 1, 1);
            for (const DeviceMetrics& device : a.metrics.devices)
                CHECK(device.peak_activation == Approx(p + 1));
            // 1F1B on the same model: p on device 0.
            CHECK(analyze("1f1b", p, m, 1, 1, 1).metrics.peak_activation_max == Approx(p));
        }
    }
}

TEST_CASE("DualPipe's F&B pairs sit where DeepSeek's step loop overlaps F with B",
          "[schedules][dualpipe]") {
    // DeepSeek's dualpipe.py for 4 ranks and 8 microbatches, read step by step (steps 1–8 of
    // append_dualpipe_order), with F&B pairs written "F+BW": steps 4 and 5 pair each F with a
    // full backward, except on the middle ranks (1, 2) the first pair of step 4, which their
    // code runs unpaired. Copy A's microbatches are 0..3, copy B's 4..7.
    const std::vector<std::string> deepseek{
        "F0:0 F1:0 F2:0 F4:7 B4:7 W4:7 F5:7 F3:0+BW5:7 F6:7+BW0:0 BW6:7 F7:7+BW1:0 BW7:7 B2:0 "
        "W2:0 B3:0 W3:0",
        "F0:1 F4:6 F1:1 F5:6 F2:1 BW4:6 F6:6+BW0:1 F3:1+BW5:6 F7:6+BW1:1 BW6:6 BW2:1 B7:6 B3:1 "
        "W7:6 W3:1",
        "F4:5 F0:2 F5:5 F1:2 F6:5 BW0:2 F2:2+BW4:5 F7:5+BW1:2 F3:2+BW5:5 BW2:2 BW6:5 B3:2 B7:5 "
        "W3:2 W7:5",
        "F4:4 F5:4 F6:4 F0:3 B0:3 W0:3 F1:3 F7:4+BW1:3 F2:3+BW4:4 BW2:3 F3:3+BW5:4 BW3:3 B6:4 "
        "W6:4 B7:4 W7:4"};
    const Schedule s = dualpipe(4, 8);
    for (int d = 0; d < 4; ++d) {
        CAPTURE(d);
        std::string ours;
        const auto& ops = s.device_ops[static_cast<std::size_t>(d)];
        const auto& pairs = s.fb_pairs[static_cast<std::size_t>(d)];
        for (std::size_t k = 0; k < ops.size(); ++k) {
            const bool joined = k > 0 && std::find(pairs.begin(), pairs.end(),
                                                   static_cast<int>(k) - 1) != pairs.end();
            ours += fmt::format("{}{}{}:{}",
                                k == 0   ? ""
                                : joined ? "+"
                                         : " ",
                                pass_name(ops[k].pass), ops[k].microbatch, ops[k].stage);
        }
        CHECK(ours == deepseek[static_cast<std::size_t>(d)]);
    }
}

TEST_CASE("DualPipe and DualPipeV idle DeepSeek's (PP/2 − 1)(F&B + B − 3W) with equal passes",
          "[schedules][dualpipe]") {
    // By hand, with every chunk pass c (F = B = W = c, B the full backward 2c, F&B = F + B =
    // 3c with nothing overlapped): (PP/2 − 1)(3c + 2c − 3c) = (PP/2 − 1)·2c; PP = p for
    // DualPipe, 2p for DualPipeV. The analyze report gives the same figure next to it.
    struct Case {
        const char* name;
        int p, m;
        double c, formula;  // formula worked out by hand
    };
    for (const Case& k :
         {Case{"dualpipe", 2, 4, 1, 0}, Case{"dualpipe", 4, 8, 1, 2}, Case{"dualpipe", 6, 24, 2, 8},
          Case{"dualpipe", 8, 32, 1, 6}, Case{"dualpipe-v", 2, 4, 1, 2},
          Case{"dualpipe-v", 4, 16, 1, 6}, Case{"dualpipe-v", 6, 12, 0.5, 5}}) {
        CAPTURE(k.name, k.p, k.m, k.c);
        // --costs are a full stage: DualPipeV's chunk is half of one.
        const double full = std::string(k.name) == "dualpipe" ? k.c : 2 * k.c;
        analysis::PipelineSpec spec;
        spec.schedule = k.name;
        spec.generator = {k.p, k.m, 0, 0};
        spec.costs.passes = {PassCosts{full, full, full}};
        const analysis::Analysis a = analysis::run(spec);
        CHECK(a.metrics.bubble_time == Approx(k.formula).margin(1e-9));
        const auto published = analysis::published_bubble(a, spec);
        REQUIRE(published);
        CHECK(published->bubble == Approx(k.formula).margin(1e-9));
        CHECK(published->pair == Approx(3 * k.c));
    }
    CHECK_FALSE(analysis::published_bubble(analyze("1f1b", 4, 8, 1, 1, 1), {}));
}

TEST_CASE("With F ≥ B DeepSeek's order idles (PP/2 − 1)(2F + max(0, B − W))",
          "[schedules][dualpipe]") {
    // The closed form of docs/dualpipe.md (chunk F, B, W; PP = p for DualPipe, 2p for
    // DualPipeV). It meets the published (PP/2 − 1)(F&B + B − 3W) = (PP/2 − 1)(F + 2B − W)
    // only when F = B ≥ W; e.g. p = 4, F, B, W = 2, 1, 1: formula 3, the order 4.
    for (const char* name : {"dualpipe", "dualpipe-v"}) {
        for (int p : {4, 6, 8, 12}) {
            for (auto [f, b, w] : {std::tuple{1.0, 1.0, 1.0},
                                   {2.0, 1.0, 1.0},
                                   {3.0, 1.0, 2.0},
                                   {2.0, 2.0, 3.0},
                                   {3.0, 2.0, 1.0},
                                   {2.0, 1.0, 0.5},
                                   {5.0, 3.0, 4.0}}) {
                CAPTURE(name, p, f, b, w);
                const bool v = std::string(name) == "dualpipe-v";
                // --costs are a full stage; a DualPipeV chunk is half of one.
                const double share = v ? 2 : 1;
                const analysis::Analysis a =
                    analyze(name, p, 3 * p + (3 * p) % 2, share * f, share * b, share * w);
                const double steps = (v ? 2 * p : p) / 2.0 - 1;
                CHECK(a.metrics.bubble_time ==
                      Approx(steps * (2 * f + std::max(0.0, b - w))).margin(1e-9));
                const double published = steps * (f + 2 * b - w);
                CHECK(analysis::published_bubble(a, {})->bubble == Approx(published));
                if (f == b && w <= b) CHECK(a.metrics.bubble_time == Approx(published));
            }
        }
    }
}

TEST_CASE("DualPipe's bubble does not grow with m", "[schedules][dualpipe]") {
    for (int p : {4, 8}) {
        const double first = chunk_metrics(dualpipe(p, 2 * p), 2, 1, 1).bubble_time;
        for (int m : {4 * p, 10 * p}) {
            CAPTURE(p, m);
            CHECK(chunk_metrics(dualpipe(p, m), 2, 1, 1).bubble_time == Approx(first));
        }
    }
}

TEST_CASE("DualPipe's replay equals the brute-force longest path, pairs and latency",
          "[schedules][dualpipe][sim]") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> cost(0.2, 3.0);
    for (const char* name : {"dualpipe", "dualpipe-v"}) {
        for (auto [p, m] : {std::pair{2, 4}, {4, 8}, {4, 6}, {6, 14}}) {
            for (double latency : {0.0, 0.4}) {
                CAPTURE(name, p, m, latency);
                const Schedule s = generate_schedule(name, {p, m, 0, 0});
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
                        if (op.op.pass != Pass::BW && op.op.pass != Pass::B)
                            CHECK(op.start == Approx(expected.start(op.op)).margin(1e-9));
                // A pair's backward starts where its F ends in the picture; the pair itself
                // ends at F + backward after the pair's start.
                for (std::size_t d = 0; d < s.fb_pairs.size(); ++d)
                    for (const int k : s.fb_pairs[d]) {
                        const TimedOp& f = t.device_ops[d][static_cast<std::size_t>(k)];
                        const TimedOp& b = t.device_ops[d][static_cast<std::size_t>(k) + 1];
                        CHECK(b.start == Approx(f.end));
                        CHECK(b.end - f.start ==
                              Approx(c.forward[f.op.stage] + c.backward_input[b.op.stage] +
                                     c.backward_weight[b.op.stage]));
                    }
            }
        }
    }
}

TEST_CASE("Overlapping F&B pairs hides their all-to-all, never below the compute bound",
          "[schedules][dualpipe][sim]") {
    // Chunk F, B, W and an all-to-all a per F and per backward. Without overlap every op pays
    // its a; with share x a pair hides x·(min(a, B + W) + min(a, F)). Checked: the pair's
    // length, makespan monotone in x, makespan ≥ each device's compute m(F + B + W) and
    // ≥ its busy time, busy = compute + the all-to-all left exposed.
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> cost(0.2, 3.0);
    for (const char* name : {"dualpipe", "dualpipe-v"}) {
        for (auto [p, m] : {std::pair{4, 8}, {6, 18}, {8, 16}}) {
            const double f = cost(rng), b = cost(rng), w = cost(rng), a = cost(rng);
            CAPTURE(name, p, m, f, b, w, a);
            const Schedule s = generate_schedule(name, {p, m, 0, 0});
            // Ops per device and kind: DualPipe runs each microbatch on one of a device's two
            // chunks, DualPipeV on both.
            const double per_device = s.microbatch_chunks() == 1 ? m : 2.0 * m;
            const double compute = per_device * (f + b + w);
            double previous = std::numeric_limits<double>::infinity();
            for (double x : {0.0, 0.25, 0.5, 1.0}) {
                CAPTURE(x);
                ReplayOptions options;
                options.all_to_all.assign(static_cast<std::size_t>(s.stages()), a);
                options.fb_overlap = x;
                const Timeline t = replay(s, uniform_stage_costs(p, 2, f, b, w, 1), options);
                const Metrics mt = compute_metrics(t, unit_memory_model(p, 2));
                const double hidden = x * (std::min(a, b + w) + std::min(a, f));
                for (int d = 0; d < p; ++d) {
                    const auto& pairs = s.fb_pairs[static_cast<std::size_t>(d)];
                    REQUIRE_FALSE(pairs.empty());
                    const auto& ops = t.device_ops[static_cast<std::size_t>(d)];
                    for (const int k : pairs)
                        CHECK(ops[static_cast<std::size_t>(k) + 1].end -
                                  ops[static_cast<std::size_t>(k)].start ==
                              Approx(f + b + w + 2 * a - hidden));
                    // Every F and backward pays a, less what the device's pairs hide.
                    const double busy =
                        compute + 2 * per_device * a - hidden * static_cast<double>(pairs.size());
                    const DeviceMetrics& dm = mt.devices[static_cast<std::size_t>(d)];
                    CHECK(dm.busy == Approx(busy));
                    CHECK(mt.makespan >= dm.busy - 1e-9);
                    CHECK(mt.makespan >= compute - 1e-9);
                }
                CHECK(mt.makespan <= previous + 1e-9);
                previous = mt.makespan;
            }
        }
    }
}

TEST_CASE("F&B pairs keep the replay exact: the longest path with the hidden all-to-all",
          "[schedules][dualpipe][sim]") {
    // The brute-force longest path with the pair length reduced by the hidden share, on
    // costs that fold the all-to-all into F and B (what the replay adds to every F and B).
    for (auto [p, m] : {std::pair{4, 8}, {6, 12}}) {
        const double f = 1.5, b = 1, w = 0.7, a = 0.8, x = 0.6;
        const Schedule s = dualpipe(p, m);
        ReplayOptions options;
        options.all_to_all.assign(static_cast<std::size_t>(s.stages()), a);
        options.fb_overlap = x;
        options.comm_latency = 0.3;
        const Timeline t = replay(s, uniform_stage_costs(p, 2, f, b, w, 1), options);
        const StageCosts folded = uniform_stage_costs(p, 2, f + a, b + a, w, 1);
        LongestPath expected(s, folded, 0.3, x * (std::min(a, b + w) + std::min(a, f)));
        for (const auto& device : t.device_ops)
            for (const TimedOp& op : device)
                if (op.op.pass == Pass::F || op.op.pass == Pass::W)
                    CHECK(op.start == Approx(expected.start(op.op)).margin(1e-9));
    }
}

TEST_CASE("F&B pairs are checked: shape, kinds and the deadlock pairing can cause",
          "[schedules][dualpipe]") {
    Schedule s = dualpipe(4, 8);
    REQUIRE_FALSE(validate(s));
    Schedule bad = s;
    bad.fb_pairs[0][0] += 1;  // F3:0 + BW5:7 → BW5:7 + F6:7
    CHECK_THAT(validate(bad)->message, Catch::Contains("an F&B pair is an F then a B or BW"));
    bad = s;
    bad.fb_pairs.pop_back();
    CHECK_THAT(validate(bad)->message, Catch::Contains("fb_pairs lists 3 devices"));
    // Three devices; device 1 pairs F1:1 with BW0:1, whose input BW0:2 comes after F1:2 on
    // device 2, which needs F1:1: fine op by op, a deadlock as a pair.
    Schedule d = make_empty_schedule("paired", 3, 2, 1, {0, 1, 2});
    auto ops = [](std::initializer_list<Op> list) { return std::vector<Op>(list); };
    d.device_ops[0] = ops({{Pass::F, 0, 0}, {Pass::F, 1, 0}, {Pass::BW, 0, 0}, {Pass::BW, 1, 0}});
    d.device_ops[1] = ops({{Pass::F, 0, 1}, {Pass::F, 1, 1}, {Pass::BW, 0, 1}, {Pass::BW, 1, 1}});
    d.device_ops[2] = ops({{Pass::F, 0, 2}, {Pass::F, 1, 2}, {Pass::BW, 0, 2}, {Pass::BW, 1, 2}});
    REQUIRE_FALSE(validate(d));
    d.fb_pairs = {{}, {1}, {}};
    REQUIRE(validate(d));
    // The cycle named op by op, at the pair (a file's reader points at its F from there).
    CHECK(validate(d)->message ==
          "deadlock: device 1 at positions 1 and 2 (the F&B pair F(mb 1, stage 1) BW(mb 0, "
          "stage 1)) waits for BW(mb 0, stage 2) on device 2; device 2 at position 1 (F(mb 1, "
          "stage 2)) waits for F(mb 1, stage 1) on device 1, which closes the cycle (run "
          "unpaired, the ops would not wait: an F&B pair runs its two ops as one)");
    CHECK(validate(d)->device == 1);
    CHECK(validate(d)->position == 1);
    CHECK_THROWS_AS(replay(d, uniform_stage_costs(3, 1, 1, 1, 1)), InvalidSchedule);
}

TEST_CASE("DualPipe's pairs survive the schedule file", "[schedules][dualpipe][files]") {
    for (const char* name : {"dualpipe", "dualpipe-v"}) {
        CAPTURE(name);
        const Schedule s = generate_schedule(name, {4, 10, 0, 0});
        const std::string text = schedule_to_json(s);
        CHECK_THAT(text, Catch::Contains("\"fb_pairs\""));
        const Schedule back = parse_schedule_json(text, "t.json", name);
        CHECK(back == s);
    }
    // A file without the key (older files) has no pairs.
    const Schedule plain =
        parse_schedule_json(schedule_to_json(generate_schedule("1f1b", {2, 2, 0, 0})), "p.json");
    CHECK(plain.fb_pairs.empty());
}

TEST_CASE("DualPipe refuses odd p and odd m with one clear line", "[schedules][dualpipe]") {
    CHECK_THROWS_WITH(dualpipe(3, 8),
                      Catch::Contains("even number of devices p") && Catch::Contains("p=3"));
    CHECK_THROWS_WITH(dualpipe(4, 7),
                      Catch::Contains("even number of microbatches m") && Catch::Contains("m=7"));
}
