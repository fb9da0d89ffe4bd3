// Slot compaction of a repeated V-shape block: ops moved to earlier free slots of the unit
// grid while no device's memory rises above a cap (the "move each pass to the earliest slot
// that keeps the peak" reordering the controllable-memory paper describes, Qi et al., NeurIPS
// 2024, §3 and Appendix A).
#include "v_compact.hpp"

#include <algorithm>
#include <deque>
#include <tuple>

#include "block_timing.hpp"

namespace pipesim::detail {

namespace {

constexpr double eps = 1e-9;

struct Slotted {
    int device = 0;
    Op op;
    int slot = 0;
};

class SlotGrid {
  public:
    SlotGrid(int devices, int microbatches, const std::vector<Slotted>& ops,
             const MemoryModel& memory, double cap, bool keep_w)
        : p_(devices), m_(microbatches), stages_(2 * devices), memory_(memory), cap_(cap) {
        for (const Slotted& s : ops) {
            if (!keep_w && s.op.pass == Pass::W) continue;
            ops_.push_back(s);
            length_ = std::max(length_, s.slot + 1);
        }
        // Room for W's put back after the last op.
        length_ += 3 * m_ * 2 + 2;
        std::sort(ops_.begin(), ops_.end(), [](const Slotted& a, const Slotted& b) {
            return std::tie(a.slot, a.device) < std::tie(b.slot, b.device);
        });
        busy_.assign(static_cast<std::size_t>(p_), std::vector<char>(length_, 0));
        level_.assign(static_cast<std::size_t>(p_), std::vector<double>(length_, 0.0));
        for (const Slotted& s : ops_)
            busy_[s.device][s.slot] = 1;
        for (int d = 0; d < p_; ++d) {
            std::vector<double> change(length_ + 1, 0.0);
            for (const Slotted& s : ops_)
                if (s.device == d) {
                    const double c = memory_change(s.op, memory_);
                    change[c > 0 ? s.slot : s.slot + 1] += c;
                }
            double held = 0;
            for (int t = 0; t < length_; ++t)
                level_[d][t] = held += change[t];
        }
        end_.assign(3 * static_cast<std::size_t>(stages_ * m_), -1);
        last_start_.assign(3 * static_cast<std::size_t>(stages_), -1);
    }

    // Moves the ops in slot order to their earliest free slot after their inputs, except
    // those starting within [keep_from, keep_to) (the steady phase kept as laid out).
    void compact(int keep_from, int keep_to) {
        std::vector<double> highest;  // from each slot to the op's own, the memory held
        for (Slotted& s : ops_) {
            const int earliest = std::max(ready(s.op), last_start(s.op) + 1);
            if ((s.slot < keep_from || s.slot >= keep_to) && earliest < s.slot) {
                const double c = memory_change(s.op, memory_);
                const auto& level = level_[s.device];
                highest.assign(static_cast<std::size_t>(s.slot - earliest), 0.0);
                double most = -1e300;
                for (int t = s.slot - 1; t >= earliest; --t)
                    highest[t - earliest] = most = std::max(most, level[t]);
                for (int t = earliest; t < s.slot; ++t)
                    if (!busy_[s.device][t] &&
                        (c <= 0 || highest[t - earliest] + c <= cap_ + eps)) {
                        move(s, t);
                        break;
                    }
            }
            done(s);
        }
    }

    // Puts each device's W's back into its free slots: at each free slot the oldest pending
    // W (of the second chunk first when `second_first`), pending from its B's end.
    void put_w(bool second_first) {
        std::vector<Slotted> ws;
        for (int d = 0; d < p_; ++d) {
            std::vector<const Slotted*> bs;
            for (const Slotted& s : ops_)
                if (s.device == d && s.op.pass == Pass::B) bs.push_back(&s);
            std::sort(bs.begin(), bs.end(),
                      [](const Slotted* a, const Slotted* b) { return a->slot < b->slot; });
            std::deque<Op> pending[2];  // by chunk: 0 first half of the V, 1 second
            std::size_t next_b = 0;
            for (int t = 0; next_b < bs.size() || !pending[0].empty() || !pending[1].empty(); ++t) {
                while (next_b < bs.size() && bs[next_b]->slot < t) {
                    const Op& b = bs[next_b++]->op;
                    pending[b.stage < p_ ? 0 : 1].push_back(Op{Pass::W, b.microbatch, b.stage});
                }
                if (busy_[d][t]) continue;
                int chunk = second_first ? 1 : 0;
                if (pending[chunk].empty()) chunk = 1 - chunk;
                if (pending[chunk].empty()) continue;
                busy_[d][t] = 1;
                ws.push_back(Slotted{d, pending[chunk].front(), t});
                pending[chunk].pop_front();
            }
        }
        ops_.insert(ops_.end(), ws.begin(), ws.end());
    }

    const std::vector<Slotted>& ops() const { return ops_; }

    Schedule schedule(const Schedule& shape) const {
        Schedule out = shape;
        std::vector<Slotted> sorted = ops_;
        std::sort(sorted.begin(), sorted.end(), [](const Slotted& a, const Slotted& b) {
            return std::tie(a.device, a.slot) < std::tie(b.device, b.slot);
        });
        for (auto& ops : out.device_ops)
            ops.clear();
        for (const Slotted& s : sorted)
            out.device_ops[s.device].push_back(s.op);
        return out;
    }

    int start_of(Pass pass, int stage, int mb) const {
        for (const Slotted& s : ops_)
            if (s.op == Op{pass, mb, stage}) return s.slot;
        return -1;
    }

  private:
    std::size_t at(Pass pass, int stage, int mb) const {
        const int kind = pass == Pass::F ? 0 : pass == Pass::B ? 1 : 2;
        return (static_cast<std::size_t>(kind) * stages_ + stage) * m_ + mb;
    }
    int ready(const Op& op) const {
        int r = 0;
        auto need = [&](Pass pass, int stage) {
            r = std::max(r, end_[at(pass, stage, op.microbatch)]);
        };
        if (op.pass == Pass::F && op.stage > 0) need(Pass::F, op.stage - 1);
        if (op.pass == Pass::B) {
            need(Pass::F, op.stage);
            if (op.stage < stages_ - 1) need(Pass::B, op.stage + 1);
        }
        if (op.pass == Pass::W) need(Pass::B, op.stage);
        return r;
    }
    int last_start(const Op& op) const { return last_start_[at(op.pass, op.stage, 0) / m_]; }
    void done(const Slotted& s) {
        end_[at(s.op.pass, s.op.stage, s.op.microbatch)] = s.slot + 1;
        last_start_[at(s.op.pass, s.op.stage, 0) / m_] = s.slot;
    }
    void move(Slotted& s, int t) {
        auto& level = level_[s.device];
        const double c = memory_change(s.op, memory_);
        if (c > 0)
            for (int k = t; k < s.slot; ++k)
                level[k] += c;
        else
            for (int k = t + 1; k <= s.slot; ++k)
                level[k] += c;
        busy_[s.device][s.slot] = 0;
        busy_[s.device][t] = 1;
        s.slot = t;
    }

    int p_;
    int m_;
    int stages_;
    const MemoryModel& memory_;
    double cap_;
    int length_ = 0;
    std::vector<Slotted> ops_;
    std::vector<std::vector<char>> busy_;
    std::vector<std::vector<double>> level_;  ///< per device and slot, the memory held
    std::vector<int> end_;                    ///< per op, its end slot once placed
    std::vector<int> last_start_;             ///< per stage and pass, the last placed start
};

}  // namespace

void offer_compacted(const BuildingBlock& block, int microbatches, const MemoryModel& memory,
                     double cap, BestPlan& best) {
    if (block.lengths != SlotLengths{} || block.group != 1) return;
    Timeline repeated;
    try {
        repeated = repeat_block(block, microbatches);
    } catch (const std::invalid_argument&) {
        return;
    }
    const Schedule shape = make_empty_schedule(block.name, block.devices, microbatches,
                                               block.chunks, block.stage_device);
    // The steady phase: from the end of the first microbatch (its backward on stage 0) to the
    // last microbatch's first forward.
    const int p = block.devices;
    std::vector<Slotted> laid_out;
    for (int d = 0; d < p; ++d)
        for (const TimedOp& t : repeated.device_ops[d])
            laid_out.push_back(Slotted{d, t.op, static_cast<int>(t.start + 0.5)});
    const SlotGrid probe(p, microbatches, laid_out, memory, cap, true);
    const int steady_from = probe.start_of(Pass::B, 0, 0);
    const int steady_to = probe.start_of(Pass::F, 0, microbatches - 1);
    // Without its W's on the grid a device counts each B as releasing all it holds.
    MemoryModel released_at_b = memory;
    std::fill(released_at_b.held_for_w.begin(), released_at_b.held_for_w.end(), 0.0);
    for (bool keep_steady : {true, false}) {
        const int from = keep_steady ? steady_from : 0;
        const int to = keep_steady ? steady_to : 0;
        SlotGrid with_w(p, microbatches, laid_out, memory, cap, true);
        with_w.compact(from, to);
        best.offer(with_w.schedule(shape));
        for (bool second_first : {false, true}) {
            SlotGrid without_w(p, microbatches, laid_out, released_at_b, cap, false);
            without_w.compact(from, to);
            without_w.put_w(second_first);
            best.offer(without_w.schedule(shape));
            // Compacted with its W's, then the cool-down again without them.
            SlotGrid again(p, microbatches, with_w.ops(), released_at_b, cap, false);
            again.compact(0, to);
            again.put_w(second_first);
            best.offer(again.schedule(shape));
        }
    }
}

}  // namespace pipesim::detail
