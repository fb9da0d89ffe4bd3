// Building blocks: idle slots filled with later ops of the device's own order, within a
// memory cap (the block's lifespan bound).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

#include "block_timing.hpp"
#include "schedules/op_dependencies.hpp"

namespace pipesim::detail {

namespace {

constexpr double tolerance = 1e-9;

bool is_backward(Pass pass) {
    return pass == Pass::B || pass == Pass::BW;
}

// Over a device's order, the sum and the highest prefix sum of the memory changes of the ops
// not taken yet (taken ones count 0): how high the memory climbs over the ops a candidate
// would overtake, in logarithmic time (an iterative segment tree; non-commutative combine).
// Ranges asked for are at most `longest` ops long and start ever later, so the tree covers a
// window of the order only, at least twice that long, and is rebuilt (from the order and
// which ops are taken) when a range leaves it: linear work in all, but memory for the window
// alone, not for the whole order (at p = 63, m = 1024 that was 12 MB per fill, most of it
// paged in, written once and never read).
class ClimbTree {
  public:
    ClimbTree() = default;
    ClimbTree(const std::vector<Op>& order, const std::vector<char>& taken,
              const MemoryModel& memory, std::size_t longest)
        : order_(&order), taken_(&taken), memory_(&memory) {
        while (size_ < std::min(2 * (longest + 1), order.size()))
            size_ *= 2;
        node_.resize(2 * size_);
        rebuild(0);
    }

    // The op at `position` is taken: its change counts 0 from now on.
    void clear(std::size_t position) {
        if (position < origin_ || position >= origin_ + size_) return;  // a rebuild reads taken_
        std::size_t k = size_ + (position - origin_);
        node_[k] = Node{0, 0};
        for (k /= 2; k > 0; k /= 2)
            node_[k] = combine(node_[2 * k], node_[2 * k + 1]);
    }

    // The highest sum of the changes at first..j over j in first..last−1. Precondition:
    // first < last ≤ the order's size, last − first ≤ longest, first never smaller than before.
    double highest_prefix(std::size_t first, std::size_t last) {
        if (last > origin_ + size_) rebuild(first);
        Node left{0, -std::numeric_limits<double>::infinity()};
        Node right = left;
        for (first += size_ - origin_, last += size_ - origin_; first < last;
             first /= 2, last /= 2) {
            if (first & 1) left = combine(left, node_[first++]);
            if (last & 1) right = combine(node_[--last], right);
        }
        return combine(left, right).best;
    }

  private:
    struct Node {
        double sum = 0;
        double best = 0;  ///< highest prefix sum
    };
    static Node combine(const Node& a, const Node& b) {
        return Node{a.sum + b.sum, std::max(a.best, a.sum + b.best)};
    }
    void rebuild(std::size_t origin) {
        origin_ = origin;
        const std::vector<Op>& order = *order_;
        const std::size_t end = std::min(order.size(), origin + size_);
        for (std::size_t position = origin; position < origin + size_; ++position) {
            const double change = position < end && !(*taken_)[position]
                                      ? memory_change(order[position], *memory_)
                                      : 0.0;
            node_[size_ + (position - origin)] = Node{change, change};
        }
        for (std::size_t k = size_; k-- > 1;)
            node_[k] = combine(node_[2 * k], node_[2 * k + 1]);
    }

    const std::vector<Op>* order_ = nullptr;
    const std::vector<char>* taken_ = nullptr;
    const MemoryModel* memory_ = nullptr;
    std::size_t size_ = 1;    ///< leaves: a power of two
    std::size_t origin_ = 0;  ///< the position of the first leaf
    std::vector<Node> node_;
};

// A binary min-heap (by <) that can also replace its top in one pass down. Which of equal
// elements is on top does not matter here: equal elements are equal values.
template <class T>
class MinHeap {
  public:
    bool empty() const { return v_.empty(); }
    const T& top() const { return v_.front(); }
    void push(T x) {
        std::size_t k = v_.size();
        v_.push_back(x);
        while (k > 0) {
            const std::size_t parent = (k - 1) / 2;
            if (!(x < v_[parent])) break;
            v_[k] = v_[parent];
            k = parent;
        }
        v_[k] = x;
    }
    void pop() {
        const T last = v_.back();
        v_.pop_back();
        if (!v_.empty()) sift_down(last);
    }
    // pop() then push(x).
    void replace_top(T x) { sift_down(x); }

  private:
    // Puts x at the root's place and moves it down.
    void sift_down(T x) {
        const std::size_t n = v_.size();
        std::size_t k = 0;
        for (;;) {
            std::size_t child = 2 * k + 1;
            if (child >= n) break;
            if (child + 1 < n && v_[child + 1] < v_[child]) ++child;
            if (!(v_[child] < x)) break;
            v_[k] = v_[child];
            k = child;
        }
        v_[k] = x;
    }

    std::vector<T> v_;
};
// Devices by a time, each device at most once: a tournament tree over the devices (a leaf per
// device, each inner node holding the earlier of its children; ties: the lower index), so an
// update walks one path of log₂ p nodes and compares one pair per node.
class DeviceTree {
  public:
    explicit DeviceTree(int devices) {
        while (leaves_ < static_cast<std::size_t>(devices))
            leaves_ *= 2;
        time_.assign(2 * leaves_, never);
        device_.assign(2 * leaves_, 0);
        for (std::size_t k = 0; k < leaves_; ++k)
            device_[leaves_ + k] = static_cast<int>(k);
        for (std::size_t k = leaves_; k-- > 1;)
            device_[k] = device_[2 * k];
    }
    bool empty() const { return time_[1] == never; }
    // The earliest (time, device) (ties: the lower device).
    double time() const { return time_[1]; }
    int device() const { return device_[1]; }
    // Device d at t (or, with `never`, not in the tree).
    void set(int d, double t) {
        std::size_t k = leaves_ + static_cast<std::size_t>(d);
        time_[k] = t;
        for (k /= 2; k > 0; k /= 2) {
            // The left child's devices precede the right's: it wins ties.
            const std::size_t won = time_[2 * k + 1] < time_[2 * k] ? 2 * k + 1 : 2 * k;
            time_[k] = time_[won];
            device_[k] = device_[won];
        }
    }
    void remove(int d) { set(d, never); }

  private:
    static constexpr double never = std::numeric_limits<double>::infinity();
    std::size_t leaves_ = 1;
    std::vector<double> time_;
    std::vector<int> device_;
};

// The devices' free times, each device at most once, earliest first (ties: the lower index).
// The devices mostly share a few distinct times (they step together in the steady state), so
// the times are kept as a calendar: the distinct times in increasing order, each with a bit set
// of its devices, where taking the earliest and adding a time near the latest cost a few
// steps. Past `most_times` distinct times it turns into a DeviceTree for good.
class FreeTimes {
  public:
    explicit FreeTimes(int devices)
        : words_(static_cast<std::size_t>(devices) / 64 + 1), tree_(devices) {}

    bool empty() const { return calendar_ ? first_ == times_.size() : tree_.empty(); }
    double time() const { return calendar_ ? times_[first_].time : tree_.time(); }
    int device() const {
        if (!calendar_) return tree_.device();
        const Time& e = times_[first_];
        return static_cast<int>(
            e.low * 64 + static_cast<std::size_t>(std::countr_zero(set_[e.set * words_ + e.low])));
    }
    // Removes the earliest.
    void pop() {
        if (!calendar_) {
            tree_.remove(tree_.device());
            return;
        }
        Time& e = times_[first_];
        std::uint64_t* set = &set_[e.set * words_];
        set[e.low] &= set[e.low] - 1;  // its lowest device
        if (--e.count == 0) {
            unused_.push_back(e.set);
            ++first_;
            return;
        }
        while (set[e.low] == 0)
            ++e.low;
    }
    // Device d (not held) is free at t.
    void insert(int d, double t) {
        if (!calendar_) {
            tree_.set(d, t);
            return;
        }
        std::size_t k = times_.size();
        while (k > first_ && times_[k - 1].time > t)
            --k;
        if (k == first_ || times_[k - 1].time != t) {
            add_time(d, t, k);
            return;
        }
        Time& e = times_[k - 1];
        const std::size_t word = static_cast<std::size_t>(d) / 64;
        set_[e.set * words_ + word] |= std::uint64_t{1} << (d % 64);
        ++e.count;
        e.low = std::min(e.low, word);
    }

  private:
    static constexpr std::size_t most_times = 32;
    struct Time {
        double time;
        std::size_t set;  ///< its device set: words_ words from set_[set · words_]
        std::size_t count;
        std::size_t low;  ///< the set's first word with a device
    };
    // insert() of a time not held, to go at times_[k].
    [[gnu::noinline]] void add_time(int d, double t, std::size_t k) {
        if (times_.size() - first_ == most_times) {
            to_tree();
            tree_.set(d, t);
            return;
        }
        if (first_ >= most_times) {  // drop the times passed
            times_.erase(times_.begin(), times_.begin() + static_cast<std::ptrdiff_t>(first_));
            k -= first_;
            first_ = 0;
        }
        const std::size_t word = static_cast<std::size_t>(d) / 64;
        const std::size_t set = new_set();
        set_[set * words_ + word] = std::uint64_t{1} << (d % 64);
        times_.insert(times_.begin() + static_cast<std::ptrdiff_t>(k), Time{t, set, 1, word});
    }
    std::size_t new_set() {
        if (!unused_.empty()) {
            const std::size_t id = unused_.back();
            unused_.pop_back();
            return id;
        }
        set_.resize(set_.size() + words_, 0);
        return set_.size() / words_ - 1;
    }
    void to_tree() {
        for (std::size_t k = first_; k < times_.size(); ++k)
            for (std::size_t w = 0; w < words_; ++w)
                for (std::uint64_t bits = set_[times_[k].set * words_ + w]; bits != 0;
                     bits &= bits - 1)
                    tree_.set(
                        static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))),
                        times_[k].time);
        calendar_ = false;
    }

    std::size_t words_;
    bool calendar_ = true;
    std::vector<Time> times_;  ///< increasing; those before first_ are passed
    std::size_t first_ = 0;
    std::vector<std::uint64_t> set_;
    std::vector<std::size_t> unused_;  ///< device sets free for reuse (all zero)
    DeviceTree tree_;
};

using ReadyAt = std::pair<double, std::size_t>;  // when an op's inputs are done, its position

// A set of positions in a device's order, one bit each.
class PositionSet {
  public:
    void resize(std::size_t n) {
        word_.assign(n / 64 + 1, 0);
        used_.assign(word_.size() / 64 + 1, 0);
    }
    bool empty() const { return count_ == 0; }
    bool contains(std::size_t k) const { return (word_[k / 64] & bit(k)) != 0; }
    void insert(std::size_t k) {
        if (word_[k / 64] == 0) used_[k / 4096] |= bit(k / 64);
        word_[k / 64] |= bit(k);
        ++count_;
    }
    // Whether k was in the set.
    bool erase(std::size_t k) {
        std::uint64_t& word = word_[k / 64];
        if ((word & bit(k)) == 0) return false;
        word &= ~bit(k);
        if (word == 0) used_[k / 4096] &= ~bit(k / 64);
        --count_;
        return true;
    }
    // Calls visit(k) for the positions first ≤ k < last in the set in increasing order until it
    // returns true; returns that k, or `last`.
    template <class Visit>
    std::size_t find(std::size_t first, std::size_t last, Visit&& visit) const {
        if (count_ == 0 || first >= last) return last;
        std::uint64_t bits = word_[first / 64] & (~std::uint64_t{0} << (first % 64));
        std::size_t w = first / 64;
        for (;;) {
            while (bits != 0) {
                const std::size_t k = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
                if (k >= last) return last;
                if (visit(k)) return k;
                bits &= bits - 1;
            }
            w = next_used(w + 1);
            if (w * 64 >= last) return last;
            bits = word_[w];
        }
    }

  private:
    static std::uint64_t bit(std::size_t k) { return std::uint64_t{1} << (k % 64); }
    // The first word from w on with a position in the set (past the end if none).
    std::size_t next_used(std::size_t w) const {
        std::size_t u = w / 64;
        if (u >= used_.size()) return word_.size();
        std::uint64_t bits = used_[u] & (~std::uint64_t{0} << (w % 64));
        while (bits == 0) {
            if (++u == used_.size()) return word_.size();
            bits = used_[u];
        }
        return u * 64 + static_cast<std::size_t>(std::countr_zero(bits));
    }

    std::vector<std::uint64_t> word_;
    std::vector<std::uint64_t> used_;  ///< a bit per word: whether it holds a position
    std::size_t count_ = 0;
};

// One device during the fill: its original order, which ops were pulled ahead, what it holds,
// and its ops whose inputs are done: with the time they are (`waiting`), then, once that time
// has come, in `ready` (and, once its forwards have all run, the backwards among them in
// `backward`: only the cool-down asks for them) until they run.
struct FillingDevice {
    const std::vector<Op>* order = nullptr;
    std::vector<char> taken;
    std::size_t head = 0;
    double held = 0;
    double peak = 0;         ///< the highest `held` so far (order_peak()'s sums of `out`)
    double first_start = 0;  ///< when `out`'s first op started
    double last_end = 0;     ///< when its last op ended
    double cap = 0;
    std::size_t lookahead = 0;
    int forwards_left = 0;
    std::vector<Op> out;
    std::vector<ReadyAt> waiting;  ///< few: one per input running elsewhere, mostly
    PositionSet ready;
    PositionSet backward;
    ClimbTree climb;
    /// Ops pulled ahead whose leaves `climb` has not cleared yet: climbs are measured from the
    /// head on, so those the head has passed by the next measure never need clearing.
    std::vector<std::uint32_t> unclear;
    /// choose()'s scratch: per group, the call that last met a ready op of it.
    std::vector<std::uint32_t> seen;
    std::uint32_t call = 0;
};

class Filler {
  public:
    // Devices as fill_idle() sets them up: each one's cap, lookahead and climbs.
    Filler(const Schedule& schedule, const std::vector<double>& duration,
           const std::vector<double>& cap, const MemoryModel& memory)
        : schedule_(schedule),
          stages_(schedule.stages()),
          duration_(duration),
          memory_(memory),
          microbatches_(static_cast<std::size_t>(schedule.microbatches)),
          end_(output_slot_count(schedule.microbatches, schedule.stages()), -1.0),
          position_(dense_op_count(schedule.microbatches, schedule.stages()), -1),
          chunk_(static_cast<std::size_t>(stages_), 0),
          devices_(static_cast<std::size_t>(schedule.devices)),
          parked_(devices_.size(), 0) {
        std::vector<int> chunks(devices_.size(), 0);
        for (int s = 0; s < stages_; ++s)
            chunk_[s] = chunks[schedule.stage_device[s]]++;
        for (int d = 0; d < schedule.devices; ++d) {
            const std::vector<Op>& order = schedule.device_ops[d];
            FillingDevice& dev = devices_[d];
            dev.order = &order;
            dev.taken.assign(order.size(), 0);
            dev.out.reserve(order.size());
            dev.ready.resize(order.size());
            dev.backward.resize(order.size());
            dev.seen.assign(static_cast<std::size_t>(chunks[d]) * pass_count, 0);
            // The order's own peak (order_peak()'s sums), its forwards and the smallest
            // activation a forward adds.
            double held = 0;
            double peak = 0;
            double smallest_forward = 0;
            for (std::size_t k = 0; k < order.size(); ++k) {
                const Op& op = order[k];
                position_[op_index(op)] = static_cast<std::int32_t>(k);
                held += memory_change(op, memory_);
                peak = std::max(peak, held);
                if (op.pass != Pass::F) continue;
                ++dev.forwards_left;
                const double activation = memory.activation[op.stage];
                if (activation > 0)
                    smallest_forward =
                        smallest_forward > 0 ? std::min(smallest_forward, activation) : activation;
                // Only a first-stage F needs nothing (inputs_end() 0).
                if (op.stage == 0) dev.waiting.emplace_back(0.0, k);
            }
            dev.cap = std::max(cap[d], peak);
            // An op more microbatches ahead than the cap holds would need forwards beyond it.
            const double held_microbatches =
                smallest_forward > 0 ? std::min(std::ceil(dev.cap / smallest_forward),
                                                static_cast<double>(schedule.microbatches))
                                     : 0;
            const std::size_t ops_per_microbatch =
                order.size() / static_cast<std::size_t>(std::max(1, schedule.microbatches)) + 1;
            dev.lookahead = ops_per_microbatch * (static_cast<std::size_t>(held_microbatches) + 1);
            // Climbs from the head to a candidate within the lookahead.
            dev.climb = ClimbTree(order, dev.taken, memory_, dev.lookahead);
        }
    }

    FillingDevice& device(int d) { return devices_[d]; }

    // The op the device runs when it is free at time t: after its last forward, a ready
    // backward before a W; else its next op in order if its inputs are done; else the first
    // later op (within the lookahead) whose inputs are done and which keeps the device's
    // memory, now and until the op's old place in the order, within the cap. Returns the op's
    // position in the order, or the order's size when nothing can run.
    //
    // Ops of one group have the same memory change and the memory climb before an op only
    // grows with its position, so in each group only the first ready op can be the answer.
    std::size_t choose(FillingDevice& dev, double t) const {
        const std::vector<Op>& order = *dev.order;
        while (dev.head < order.size() && dev.taken[dev.head])
            ++dev.head;
        if (dev.head == order.size()) return dev.head;
        std::size_t kept = 0;
        for (const ReadyAt& w : dev.waiting) {
            if (w.first > t + tolerance) {
                dev.waiting[kept++] = w;
                continue;
            }
            dev.ready.insert(w.second);
            if (dev.forwards_left == 0 && is_backward(order[w.second].pass))
                dev.backward.insert(w.second);
        }
        dev.waiting.resize(kept);
        if (dev.forwards_left == 0 && order[dev.head].pass == Pass::W && !dev.backward.empty()) {
            // Cool-down: a backward whose inputs are done overtakes the W's, which only free
            // memory and feed no other device (the Zero Bubble papers' deferred W's).
            return dev.backward.find(dev.head, order.size(), [](std::size_t) { return true; });
        }
        // The head's inputs are done by t exactly when its waiting entry came into `ready`.
        if (dev.ready.contains(dev.head)) return dev.head;
        // Positions before the head are taken, and the head is not ready: the candidates are
        // the first ready op of each group after the head, within the lookahead, in order.
        const std::size_t last = std::min(order.size(), dev.head + 1 + dev.lookahead);
        const std::uint32_t call = ++dev.call;
        bool measured = false;
        const std::size_t chosen = dev.ready.find(dev.head + 1, last, [&](std::size_t k) {
            std::uint32_t& seen = dev.seen[group(order[k])];
            if (seen == call) return false;  // a later op of a group met before
            seen = call;
            if (!measured) {
                // A climb from the head reads only nodes whose leaves are all at or after it.
                for (const std::uint32_t u : dev.unclear)
                    if (u >= dev.head) dev.climb.clear(u);
                dev.unclear.clear();
                measured = true;
            }
            const double rise = std::max(0.0, dev.climb.highest_prefix(dev.head, k));
            return dev.held + memory_change(order[k], memory_) + rise <= dev.cap + tolerance;
        });
        return chosen < last ? chosen : order.size();
    }

    // `next`, whose inputs are done at `inputs` (−1: not all yet), waits on its device.
    void offer(const Op& next, double inputs) {
        const std::int32_t k = position_[op_index(next)];
        if (k >= 0 && inputs >= 0) {
            const int d = schedule_.stage_device[next.stage];
            devices_[d].waiting.emplace_back(inputs, static_cast<std::size_t>(k));
            if (parked_[d]) wake_.push({inputs, d});
        }
    }

    // Runs the op at `position` of the device's order from time t; returns its end.
    double run(FillingDevice& dev, std::size_t position, double t) {
        const Op& op = (*dev.order)[position];
        dev.taken[position] = 1;
        dev.ready.erase(position);
        if (dev.forwards_left == 0) dev.backward.erase(position);
        // Climbs are measured from the head on: only an op pulled ahead needs clearing.
        if (position != dev.head) dev.unclear.push_back(static_cast<std::uint32_t>(position));
        if (dev.out.empty()) dev.first_start = t;
        dev.out.push_back(op);
        dev.held += memory_change(op, memory_);
        dev.peak = std::max(dev.peak, dev.held);
        if (op.pass == Pass::F && --dev.forwards_left == 0) {
            // From now on `backward` holds the ready backwards.
            dev.ready.find(0, dev.order->size(), [&](std::size_t k) {
                if (is_backward((*dev.order)[k].pass)) dev.backward.insert(k);
                return false;
            });
        }
        const double finish = t + duration_[static_cast<std::size_t>(op.stage) * pass_count +
                                            static_cast<std::size_t>(op.pass)];
        dev.last_end = finish;
        if (op.pass == Pass::W) return finish;
        end_[slot(op)] = finish;
        // The ops waiting for this one whose inputs are now all done: for_each_successor()'s,
        // in its order, each with inputs_end() (the latest of 0 and its inputs' ends, −1 if
        // one has not run), read here from the slots this op's pass and stage imply.
        const int s = op.stage;
        const std::int32_t mb = op.microbatch;
        auto backward_at = [&](int stage) {
            const bool split = position_[op_index(Op{Pass::B, mb, stage})] >= 0;
            return Op{split ? Pass::B : Pass::BW, mb, stage};
        };
        // inputs_end() of an op whose inputs end at a (and b).
        auto inputs = [](double a, double b = 0.0) {
            const double e = std::max(std::max(0.0, a), b);
            return a >= 0 && b >= 0 ? e : -1.0;
        };
        if (op.pass == Pass::F) {
            if (s < stages_ - 1) offer(Op{Pass::F, mb, s + 1}, inputs(finish));
            const Op back = backward_at(s);
            offer(back, s < stages_ - 1 ? inputs(finish, end_[slot(Op{Pass::B, mb, s + 1})])
                                        : inputs(finish));
        } else {
            if (s > 0)
                offer(backward_at(s - 1), inputs(end_[slot(Op{Pass::F, mb, s - 1})], finish));
            if (op.pass == Pass::B) offer(Op{Pass::W, mb, s}, inputs(finish));
        }
        return finish;
    }

    // Device d finds nothing to run at time t: it waits, parked, until an op of its order has
    // its inputs done.
    void park(int d, double t) {
        parked_[d] = 1;
        ++parked_count_;
        parked_since_ = t;
        const FillingDevice& dev = devices_[d];
        if (!dev.waiting.empty())
            wake_.push({std::min_element(dev.waiting.begin(), dev.waiting.end())->first, d});
    }
    int parked_count() const { return parked_count_; }
    double parked_since() const { return parked_since_; }

    // The parked devices with an op whose inputs are done at time t, unparked. The others
    // would find nothing at t either: they count as parked again at t.
    const std::vector<int>& wake_up(double t) {
        woken_.clear();
        while (!wake_.empty() && wake_.top().first <= t + tolerance) {
            const int d = wake_.top().second;
            wake_.pop();
            if (!parked_[d]) continue;  // woken before
            parked_[d] = 0;
            --parked_count_;
            woken_.push_back(d);
        }
        parked_since_ = t;
        return woken_;
    }

  private:
    // Per-op state is kept stage by stage (then microbatch): a device runs its stages'
    // microbatches in about increasing order, so it reads and writes them in sequence.
    std::size_t stage_major(const Op& op) const {
        return static_cast<std::size_t>(op.stage) * microbatches_ +
               static_cast<std::size_t>(op.microbatch);
    }
    // The op's output slot in end_ (B and BW share one).
    std::size_t slot(const Op& op) const {
        return stage_major(op) * 2 + (op.pass == Pass::F ? 0 : 1);
    }
    std::size_t op_index(const Op& op) const {
        return stage_major(op) * pass_count + static_cast<std::size_t>(op.pass);
    }
    std::size_t group(const Op& op) const {
        return static_cast<std::size_t>(chunk_[op.stage]) * pass_count +
               static_cast<std::size_t>(op.pass);
    }

    const Schedule& schedule_;
    int stages_;
    const std::vector<double>& duration_;
    const MemoryModel& memory_;
    std::size_t microbatches_;
    std::vector<double> end_;             ///< per slot(): when the op's output is done, or −1
    std::vector<std::int32_t> position_;  ///< per op_index(): place in its device's order
    std::vector<int> chunk_;              ///< per stage: its index among its device's stages
    std::vector<FillingDevice> devices_;
    /// When a device may have something new to run (an op's inputs done), by time.
    MinHeap<std::pair<double, int>> wake_;
    std::vector<int> woken_;  ///< wake_up()'s result
    std::vector<char> parked_;
    int parked_count_ = 0;
    double parked_since_ = 0;
};

}  // namespace

std::optional<Schedule> fill_idle(const Schedule& schedule, const std::vector<double>& duration,
                                  const std::vector<double>& cap, const MemoryModel& memory,
                                  double give_up_above, OrderFigures* figures) {
    const int devices = schedule.devices;
    Filler filler(schedule, duration, cap, memory);
    // Devices by the time they are free (ties: the lower index); a device that finds
    // nothing to run waits, parked, until the next op ends anywhere. Only an op whose inputs
    // become done can give a parked device something to run (its order, memory and ready ops
    // are as they were), so it is woken only at the first such time and skips the others.
    FreeTimes free_at(devices);
    for (int d = 0; d < devices; ++d)
        if (!schedule.device_ops[d].empty()) free_at.insert(d, 0.0);
    while (!free_at.empty()) {
        const double t = free_at.time();
        const int d = free_at.device();
        if (filler.parked_count() > 0 && t > filler.parked_since() + tolerance) {
            for (int e : filler.wake_up(t))
                free_at.insert(e, t);
            continue;
        }
        FillingDevice& dev = filler.device(d);
        const std::size_t position = filler.choose(dev, t);
        if (position == dev.order->size()) {
            free_at.pop();
            if (dev.head < dev.order->size()) filler.park(d, t);
            continue;
        }
        free_at.pop();
        free_at.insert(d, filler.run(dev, position, t));
        if (dev.held > give_up_above) return std::nullopt;  // the same sums as order_peak's
    }
    if (filler.parked_count() > 0) return std::nullopt;
    if (figures != nullptr) {
        *figures = OrderFigures{};
        for (int d = 0; d < devices; ++d) {
            const FillingDevice& dev = filler.device(d);
            figures->first_start.push_back(dev.first_start);
            figures->last_end.push_back(dev.last_end);
            figures->peak.push_back(dev.peak);
        }
    }
    // The schedule's shape with the filled orders (not a copy of its orders, replaced).
    Schedule filled = make_empty_schedule(schedule.name, devices, schedule.microbatches,
                                          schedule.chunks, schedule.stage_device);
    filled.microbatch_stages = schedule.microbatch_stages;
    filled.fb_pairs = schedule.fb_pairs;
    for (int d = 0; d < devices; ++d)
        filled.device_ops[d] = std::move(filler.device(d).out);
    return filled;
}

}  // namespace pipesim::detail
