// Slot compaction of a repeated V-shape block: ops moved to earlier free slots of the unit
// grid while no device's memory rises above a cap (the "move each pass to the earliest slot
// that keeps the peak" reordering the controllable-memory paper describes, Qi et al., NeurIPS
// 2024, §3 and Appendix A).
#include "v_compact.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>

#include "block_timing.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

namespace {

constexpr double eps = 1e-9;

struct Slotted {
    int device = 0;
    Op op;
    int slot = 0;
};

// Sorts `items` stably by key(item) in 0..keys−1 (a counting sort: linear in the items and
// keys). Sorting by the least significant key first, then stably by each more significant
// one, orders by all of them together, as a lexicographic std::sort would (exactly: the keys
// these sorts use together are unique).
template <class T, class Key>
void counting_sort(std::vector<T>& items, int keys, Key key, std::vector<T>& scratch) {
    std::vector<int> start(static_cast<std::size_t>(keys) + 1, 0);
    for (const T& x : items)
        ++start[static_cast<std::size_t>(key(x)) + 1];
    for (std::size_t k = 1; k < start.size(); ++k)
        start[k] += start[k - 1];
    scratch.resize(items.size());
    for (const T& x : items)
        scratch[static_cast<std::size_t>(start[static_cast<std::size_t>(key(x))]++)] = x;
    items.swap(scratch);
}

// The largest slot of `ops` plus one (0 for none).
int slot_count(const std::vector<Slotted>& ops) {
    int count = 0;
    for (const Slotted& s : ops)
        count = std::max(count, s.slot + 1);
    return count;
}

// `ops` by (slot, device), or by (device, slot) with `device_first`.
void sort_slotted(std::vector<Slotted>& ops, int devices, bool device_first) {
    std::vector<Slotted> scratch;
    const int slots = slot_count(ops);
    auto by_slot = [](const Slotted& s) { return s.slot; };
    auto by_device = [](const Slotted& s) { return s.device; };
    if (device_first) {
        counting_sort(ops, slots, by_slot, scratch);
        counting_sort(ops, devices, by_device, scratch);
    } else {
        counting_sort(ops, devices, by_device, scratch);
        counting_sort(ops, slots, by_slot, scratch);
    }
}

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
        const bool in_order =
            std::is_sorted(ops_.begin(), ops_.end(), [](const Slotted& a, const Slotted& b) {
                return a.slot != b.slot ? a.slot < b.slot : a.device < b.device;
            });
        if (!in_order) sort_slotted(ops_, p_, false);
        busy_.assign(static_cast<std::size_t>(p_), std::vector<char>(length_, 0));
        level_.assign(static_cast<std::size_t>(p_), std::vector<double>(length_, 0.0));
        for (const Slotted& s : ops_)
            busy_[s.device][s.slot] = 1;
        // Each device's changes added in the order of ops_, as a pass per device would.
        std::vector<std::vector<double>> change(static_cast<std::size_t>(p_),
                                                std::vector<double>(length_ + 1, 0.0));
        for (const Slotted& s : ops_) {
            const double c = memory_change(s.op, memory_);
            change[s.device][c > 0 ? s.slot : s.slot + 1] += c;
        }
        for (int d = 0; d < p_; ++d) {
            double held = 0;
            for (int t = 0; t < length_; ++t)
                level_[d][t] = held += change[d][t];
        }
        end_.assign(3 * static_cast<std::size_t>(stages_ * m_), -1);
        last_start_.assign(3 * static_cast<std::size_t>(stages_), -1);
    }

    // Moves the ops in slot order to their earliest free slot after their inputs, except
    // those starting within [keep_from, keep_to) (the steady phase kept as laid out).
    void compact(int keep_from, int keep_to) {
        for (Slotted& s : ops_) {
            const int earliest = std::max(ready(s.op), last_start(s.op) + 1);
            if ((s.slot < keep_from || s.slot >= keep_to) && earliest < s.slot) {
                // An op that adds memory may start at t when the memory held from t to its own
                // slot stays within the cap with it: the slots from the first such t on (the
                // later t, the fewer slots it passes).
                const double c = memory_change(s.op, memory_);
                const auto& level = level_[s.device];
                int from = earliest;
                if (c > 0) {
                    from = s.slot;
                    while (from > earliest && level[from - 1] + c <= cap_ + eps)
                        --from;
                }
                for (int t = from; t < s.slot; ++t)
                    if (!busy_[s.device][t]) {
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
        std::vector<std::vector<const Slotted*>> b_of(static_cast<std::size_t>(p_));
        for (const Slotted& s : ops_)
            if (s.op.pass == Pass::B) b_of[s.device].push_back(&s);
        for (int d = 0; d < p_; ++d) {
            std::vector<const Slotted*>& bs = b_of[d];
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
        sort_slotted(sorted, p_, true);
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

// The greedy reordering of the controllable-memory paper's V schedules (Qi et al., NeurIPS 2024,
// Appendix A: each pass moved to the earliest free slot that keeps the peak, then the order
// executed as soon as possible on unit slots, "squeezed") as two rounds: first with the W's
// on the grid, warm-up and cool-down reordered; then without them (a free slot runs one
// pending W), only the cool-down reordered. The W's go back into the free slots, those of the
// second chunk first. Memory is counted in chunk activations with M_W = M_B.
class TwoRoundGreedy {
  public:
    // Kinds in the order a microbatch meets them on a device: first-chunk F, second-chunk F,
    // second-chunk B, first-chunk B, and the W's (anonymous: the j-th W follows the j-th B).
    static constexpr int kinds = 5;
    static constexpr int w_kind = 4;

    TwoRoundGreedy(int devices, int microbatches) : p_(devices), m_(microbatches) {
        slot_.assign(static_cast<std::size_t>(p_), std::vector<std::vector<int>>(kinds));
    }

    // Takes the F's and B's of the laid-out block (W's are put anew).
    void set(int device, const Op& op, int slot) {
        if (op.pass == Pass::W) return;
        auto& v = slot_[device][kind(op)];
        if (v.size() <= static_cast<std::size_t>(op.microbatch))
            v.resize(static_cast<std::size_t>(m_), -1);
        v[op.microbatch] = slot;
    }

    bool complete() const {
        for (const auto& dev : slot_)
            for (int k = 0; k < w_kind; ++k)
                if (dev[k].size() != static_cast<std::size_t>(m_) ||
                    std::find(dev[k].begin(), dev[k].end(), -1) != dev[k].end())
                    return false;
        return true;
    }

    // `limit`: the most chunk activations a device may hold while ops move; below the laid-out
    // peak, that peak.
    void run(int limit) {
        put_w(true, false);
        reorder(true, limit);
        squeeze();
        drop_w();
        reorder(false, limit);
        put_w(true, false);
        squeeze();
        drop_w();
    }

    // The order with the W's put back, those of `first_chunk` (0 or 1) first at a free slot.
    Schedule schedule(const Schedule& shape, int first_chunk) {
        std::vector<std::vector<std::vector<int>>> saved = slot_;
        put_w(false, first_chunk == 1);
        Schedule out = shape;
        std::vector<std::pair<int, Op>> ops;
        std::vector<std::pair<int, Op>> scratch;
        for (int d = 0; d < p_; ++d) {
            ops.clear();
            int slots = 0;
            for (int k = 0; k < kinds; ++k)
                for (std::size_t j = 0; j < slot_[d][k].size(); ++j) {
                    ops.emplace_back(slot_[d][k][j], op_of(d, k, static_cast<int>(j)));
                    slots = std::max(slots, slot_[d][k][j] + 1);
                }
            for (std::size_t j = 0; j < w_split_[d].size(); ++j) {
                ops.push_back(w_split_[d][j]);
                slots = std::max(slots, w_split_[d][j].first + 1);
            }
            // By slot (each slot holds one op).
            counting_sort(
                ops, slots, [](const std::pair<int, Op>& x) { return x.first; }, scratch);
            out.device_ops[d].clear();
            for (const auto& [slot, op] : ops)
                out.device_ops[d].push_back(op);
        }
        slot_ = std::move(saved);
        return out;
    }

  private:
    int kind(const Op& op) const {
        const bool first = op.stage < p_;
        if (op.pass == Pass::F) return first ? 0 : 1;
        return first ? 3 : 2;
    }
    int stage(int d, int k) const { return k == 0 || k == 3 ? d : 2 * p_ - 1 - d; }
    Op op_of(int d, int k, int mb) const { return Op{k < 2 ? Pass::F : Pass::B, mb, stage(d, k)}; }
    int last_slot(int d) const {
        int last = -1;
        for (const auto& v : slot_[d])
            for (int s : v)
                last = std::max(last, s);
        return last;
    }
    void drop_w() {
        for (auto& dev : slot_)
            dev[w_kind].clear();
    }

    // Into each free slot of a device one pending W (pending from the end of its B). With
    // `anonymous` the W's are counted only; otherwise they are named, by chunk, into w_split_.
    void put_w(bool anonymous, bool first_chunk_first) {
        w_split_.assign(static_cast<std::size_t>(p_), {});
        for (int d = 0; d < p_; ++d) {
            const int last = last_slot(d);
            std::vector<int> at(static_cast<std::size_t>(last + 1), -1);
            for (int k = 0; k < w_kind; ++k)
                for (int s : slot_[d][k])
                    at[s] = k;
            int pending[2] = {0, 0};  // by chunk
            int named[2] = {0, 0};
            auto place = [&](int chunk, int t) {
                if (anonymous)
                    slot_[d][w_kind].push_back(t);
                else
                    w_split_[d].emplace_back(
                        t, Op{Pass::W, named[chunk]++, chunk == 0 ? d : 2 * p_ - 1 - d});
                --pending[chunk];
            };
            for (int t = 0; t <= last; ++t) {
                if (at[t] >= 2) {
                    ++pending[at[t] == 3 ? 0 : 1];
                } else if (at[t] < 0) {
                    const int first = first_chunk_first ? 0 : 1;
                    if (pending[first] > 0)
                        place(first, t);
                    else if (pending[1 - first] > 0)
                        place(1 - first, t);
                }
            }
            int t = last;
            for (int chunk : {first_chunk_first ? 0 : 1, first_chunk_first ? 1 : 0})
                while (pending[chunk] > 0)
                    place(chunk, ++t);
        }
    }

    // Peak chunk activations of device d: F +1, W −1; without W's on the grid each free slot
    // (up to the last op) runs one pending W.
    int peak(int d) const {
        const int last = last_slot(d);
        std::vector<int>& at = peak_scratch_;
        at.assign(static_cast<std::size_t>(last + 1), -1);
        for (int k = 0; k < kinds; ++k)
            for (int s : slot_[d][k])
                at[s] = k;
        return profile_peak(at, last, !slot_[d][w_kind].empty());
    }
    // peak() of a device whose slots hold the kinds `at` (−1: free), its last op at `last`.
    static int profile_peak(const std::vector<int>& at, int last, bool with_w) {
        int held = 0, most = 0, pending = 0;
        for (int t = 0; t <= last; ++t) {
            const int k = at[t];
            if (k == 0 || k == 1)
                ++held;
            else if (k == w_kind)
                --held;
            else if (k >= 2)
                ++pending;
            else if (!with_w && pending > 0) {
                --held;
                --pending;
            }
            most = std::max(most, held);
        }
        return most;
    }

    // The slot after which op (d, k, mb) may run: after its inputs and the same kind's
    // previous microbatch on d.
    int after(int d, int k, int mb) const {
        int r = -1;
        auto need = [&](int dev, int kk) { r = std::max(r, slot_[dev][kk][mb]); };
        if (k == w_kind) {
            std::vector<int> bs = slot_[d][2];
            bs.insert(bs.end(), slot_[d][3].begin(), slot_[d][3].end());
            std::sort(bs.begin(), bs.end());
            r = bs[mb];
        } else {
            if (k == 0 && d > 0) need(d - 1, 0);
            if (k == 1 && d < p_ - 1) need(d + 1, 1);
            if (k == 2 && d > 0) need(d - 1, 2);
            if (k == 3 && d < p_ - 1) need(d + 1, 3);
            if (k > 0) need(d, k - 1);
        }
        if (mb > 0) r = std::max(r, slot_[d][k][mb - 1]);
        return r;
    }

    struct Event {
        int slot, device, kind, mb;
    };
    std::vector<Event> events() const {
        std::vector<Event> e;
        for (int d = 0; d < p_; ++d)
            for (int k = 0; k < kinds; ++k)
                for (std::size_t j = 0; j < slot_[d][k].size(); ++j)
                    e.push_back(Event{slot_[d][k][j], d, k, static_cast<int>(j)});
        // By (slot, device, kind), least significant key first.
        int slots = 0;
        for (const Event& x : e)
            slots = std::max(slots, x.slot + 1);
        std::vector<Event> scratch;
        counting_sort(
            e, kinds, [](const Event& x) { return x.kind; }, scratch);
        counting_sort(
            e, p_, [](const Event& x) { return x.device; }, scratch);
        counting_sort(
            e, slots, [](const Event& x) { return x.slot; }, scratch);
        return e;
    }

    // Each op, in slot order, to the earliest free slot after what it waits for at which its
    // device's peak stays within the largest peak before; the steady phase (from device 0's
    // first first-chunk B to its last first-chunk F) stays, and so does the warm-up when the
    // W's are not on the grid.
    void reorder(bool with_w, int limit) {
        for (int d = 0; d < p_; ++d)
            limit = std::max(limit, peak(d));
        std::vector<std::vector<char>> taken(static_cast<std::size_t>(p_));
        // Each device's kinds by slot and its last op, kept as ops move (what peak() would
        // build from slot_ for every slot tried).
        std::vector<std::vector<int>> at(static_cast<std::size_t>(p_));
        std::vector<int> last(static_cast<std::size_t>(p_));
        std::vector<char> w_on_grid(static_cast<std::size_t>(p_));
        for (int d = 0; d < p_; ++d) {
            last[d] = last_slot(d);
            taken[d].assign(static_cast<std::size_t>(last[d] + 1), 0);
            at[d].assign(static_cast<std::size_t>(last[d] + 1), -1);
            for (int k = 0; k < kinds; ++k)
                for (int slot : slot_[d][k])
                    at[d][slot] = k;
            w_on_grid[d] = !slot_[d][w_kind].empty();
        }
        // The last op of device d once its op at `from` has moved earlier (`at` updated).
        auto last_after = [&](int d, int from) {
            if (from != last[d]) return last[d];
            int l = from - 1;
            while (at[d][l] < 0)  // stops at the op moved, if not before
                --l;
            return l;
        };
        int phase = 0;
        for (const Event& e : events()) {
            int& s = slot_[e.device][e.kind][e.mb];
            if (phase == 0 && e.kind == 3 && e.device == 0) phase = 1;
            const bool keep = phase == 1 || (phase == 0 && !with_w);
            if (phase == 1 && e.kind == 0 && e.mb == m_ - 1) phase = 2;
            if (!keep) {
                const int original = s;
                bool moved = false;
                // With the W's on the grid only F's raise the memory: a B or a W moved earlier
                // leaves the device's peak as it was or lowers it, and every device stays within
                // `limit` (it starts so, and each move is kept only so): its first free slot is
                // taken without measuring.
                const bool lowers = w_on_grid[e.device] && e.kind >= 2;
                std::vector<int>& kinds_at = at[e.device];
                for (int t = after(e.device, e.kind, e.mb) + 1; t < original && !moved; ++t) {
                    if (taken[e.device][t]) continue;
                    s = t;
                    if (lowers) {
                        moved = true;
                        break;
                    }
                    kinds_at[original] = -1;
                    kinds_at[t] = e.kind;
                    moved = profile_peak(kinds_at, last_after(e.device, original),
                                         w_on_grid[e.device]) <= limit;
                    kinds_at[t] = -1;
                    kinds_at[original] = e.kind;
                }
                if (!moved) {
                    s = original;
                } else {
                    kinds_at[original] = -1;
                    kinds_at[s] = e.kind;
                    last[e.device] = last_after(e.device, original);
                }
            }
            taken[e.device][s] = 1;
        }
    }

    // Every op as soon as its inputs and its device allow, in each device's slot order, one
    // slot long.
    void squeeze() {
        std::vector<int> free_at(static_cast<std::size_t>(p_), 0);
        for (const Event& e : events()) {
            int start = free_at[e.device];
            if (e.kind != w_kind) start = std::max(start, after_squeezed(e) + 1);
            slot_[e.device][e.kind][e.mb] = start;
            free_at[e.device] = start + 1;
        }
    }
    // Like after() for F's and B's, read while squeezing (inputs already squeezed).
    int after_squeezed(const Event& e) const {
        int r = -1;
        auto need = [&](int dev, int kk) { r = std::max(r, slot_[dev][kk][e.mb]); };
        const int d = e.device;
        if (e.kind == 0 && d > 0) need(d - 1, 0);
        if (e.kind == 1 && d < p_ - 1) need(d + 1, 1);
        if (e.kind == 2 && d > 0) need(d - 1, 2);
        if (e.kind == 3 && d < p_ - 1) need(d + 1, 3);
        if (e.kind > 0) need(d, e.kind - 1);
        return r;
    }

    int p_;
    int m_;
    std::vector<std::vector<std::vector<int>>> slot_;  ///< device, kind, microbatch → slot
    std::vector<std::vector<std::pair<int, Op>>> w_split_;
    mutable std::vector<int> peak_scratch_;
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
    sort_slotted(laid_out, p, false);  // in the grids' order: each grid takes it as it is
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
        // Compacted without the W's; and compacted with them, then the cool-down again
        // without them. The W's go back two ways into copies of each: the compactions do not
        // depend on how.
        SlotGrid without_w(p, microbatches, laid_out, released_at_b, cap, false);
        without_w.compact(from, to);
        SlotGrid again(p, microbatches, with_w.ops(), released_at_b, cap, false);
        again.compact(0, to);
        for (bool second_first : {false, true}) {
            for (const SlotGrid* compacted : {&without_w, &again}) {
                SlotGrid filled = *compacted;
                filled.put_w(second_first);
                best.offer(filled.schedule(shape));
            }
        }
    }
    // The greedy two-round reordering of the same layout, for a V placement of F's and B's.
    if (block.chunks != 2 || block.stage_device != vshape_placement(p, 2)) return;
    TwoRoundGreedy greedy(p, microbatches);
    for (const Slotted& s : laid_out) {
        if (s.op.pass == Pass::BW) return;
        greedy.set(s.device, s.op, s.slot);
    }
    if (!greedy.complete()) return;
    // Within the laid-out peak, and within the cap (chunk activations, M_W = M_B: never less
    // than the cap's with a smaller M_W).
    // Clamped as a double: a device never holds more than chunks · microbatches, and a cap
    // beyond an int's range would be undefined as one.
    const int cap_chunks = static_cast<int>(
        std::min(std::floor(2 * cap + eps), static_cast<double>(block.chunks) * microbatches));
    for (int limit : {0, cap_chunks}) {
        TwoRoundGreedy g = greedy;
        g.run(limit);
        for (int first_chunk : {1, 0})
            best.offer(g.schedule(shape, first_chunk));
    }
}

}  // namespace pipesim::detail
