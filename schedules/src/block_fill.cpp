// Building blocks: idle slots filled with later ops of the device's own order, within a
// memory cap (the block's lifespan bound).
#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>

#include "block_timing.hpp"

namespace pipesim::detail {

namespace {

constexpr double tolerance = 1e-9;

bool is_backward(Pass pass) {
    return pass == Pass::B || pass == Pass::BW;
}

// One device during the fill: its original order, which ops were pulled ahead, what it holds.
struct FillingDevice {
    const std::vector<Op>* order = nullptr;
    std::vector<char> taken;
    std::size_t head = 0;
    double held = 0;
    double cap = 0;
    std::size_t lookahead = 0;
    int forwards_left = 0;
    std::vector<Op> out;
};

class Filler {
  public:
    Filler(const Schedule& schedule, const std::vector<double>& duration, const MemoryModel& memory)
        : stages_(schedule.stages()),
          duration_(duration),
          memory_(memory),
          end_(output_slot_count(schedule.microbatches, schedule.stages()), -1.0) {}

    // The op the device runs when it is free at time t: after its last forward, a ready
    // backward before a W; else its next op in order if its inputs are done; else the first
    // later op (within the lookahead) whose inputs are done and which keeps the device's
    // memory, now and until the op's old place in the order, within the cap. Returns the op's
    // position in the order, or the order's size when nothing can run.
    std::size_t choose(FillingDevice& dev, double t) const {
        const std::vector<Op>& order = *dev.order;
        while (dev.head < order.size() && dev.taken[dev.head])
            ++dev.head;
        if (dev.head == order.size()) return dev.head;
        if (dev.forwards_left == 0 && order[dev.head].pass == Pass::W) {
            // Cool-down: a backward whose inputs are done overtakes the W's, which only free
            // memory and feed no other device (the Zero Bubble papers' deferred W's).
            for (std::size_t k = dev.head + 1; k < order.size(); ++k)
                if (!dev.taken[k] && is_backward(order[k].pass) && ready(order[k], t)) return k;
        }
        if (ready(order[dev.head], t)) return dev.head;
        // `rise` is the highest the memory climbs, above `held`, over the ops the candidate
        // would overtake (the empty prefix counts: 0).
        double climb = memory_change(order[dev.head], memory_);
        double rise = std::max(0.0, climb);
        const std::size_t last = std::min(order.size(), dev.head + 1 + dev.lookahead);
        for (std::size_t k = dev.head + 1; k < last; ++k) {
            if (dev.taken[k]) continue;
            const Op& op = order[k];
            const double change = memory_change(op, memory_);
            if (dev.held + change + rise <= dev.cap + tolerance && ready(op, t)) return k;
            climb += change;
            rise = std::max(rise, climb);
        }
        return order.size();
    }

    // Runs the op at `position` of the device's order from time t; returns its end.
    double run(FillingDevice& dev, std::size_t position, double t) {
        const Op& op = (*dev.order)[position];
        dev.taken[position] = 1;
        dev.out.push_back(op);
        dev.held += memory_change(op, memory_);
        if (op.pass == Pass::F) --dev.forwards_left;
        const double finish = t + duration_[static_cast<std::size_t>(op.stage) * pass_count +
                                            static_cast<std::size_t>(op.pass)];
        if (op.pass != Pass::W) end_[output_slot(op, stages_)] = finish;
        return finish;
    }

  private:
    bool ready(const Op& op, double t) const {
        const double inputs = inputs_end(op, stages_, end_);
        return inputs >= 0 && inputs <= t + tolerance;
    }

    int stages_;
    const std::vector<double>& duration_;
    const MemoryModel& memory_;
    std::vector<double> end_;
};

}  // namespace

std::optional<Schedule> fill_idle(const Schedule& schedule, const std::vector<double>& duration,
                                  const std::vector<double>& cap, const MemoryModel& memory) {
    const int devices = schedule.devices;
    std::vector<FillingDevice> state(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d) {
        FillingDevice& dev = state[d];
        const std::vector<Op>& order = schedule.device_ops[d];
        dev.order = &order;
        dev.taken.assign(order.size(), 0);
        dev.cap = std::max(cap[d], order_peak(order, memory));
        dev.out.reserve(order.size());
        dev.forwards_left = static_cast<int>(std::count_if(
            order.begin(), order.end(), [](const Op& op) { return op.pass == Pass::F; }));
        // An op more microbatches ahead than the cap holds would need forwards beyond it.
        double smallest_forward = 0;
        for (const Op& op : order)
            if (op.pass == Pass::F && memory.activation[op.stage] > 0)
                smallest_forward = smallest_forward > 0
                                       ? std::min(smallest_forward, memory.activation[op.stage])
                                       : memory.activation[op.stage];
        const double held_microbatches =
            smallest_forward > 0 ? std::ceil(dev.cap / smallest_forward) : 0;
        const std::size_t ops_per_microbatch =
            order.size() / static_cast<std::size_t>(std::max(1, schedule.microbatches)) + 1;
        dev.lookahead = ops_per_microbatch * (static_cast<std::size_t>(held_microbatches) + 1);
    }
    Filler filler(schedule, duration, memory);
    // Devices by the time they are free (ties: the device queued first); a device that finds
    // nothing to run waits, parked, until the next op ends anywhere.
    using Entry = std::pair<double, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> free_at;
    for (int d = 0; d < devices; ++d)
        if (!schedule.device_ops[d].empty()) free_at.emplace(0.0, d);
    std::vector<int> parked;
    double parked_since = 0;
    while (!free_at.empty()) {
        const auto [t, d] = free_at.top();
        if (!parked.empty() && t > parked_since + tolerance) {
            for (int e : parked)
                free_at.emplace(t, e);
            parked.clear();
            continue;
        }
        free_at.pop();
        FillingDevice& dev = state[d];
        const std::size_t position = filler.choose(dev, t);
        if (position == dev.order->size()) {
            if (dev.head < dev.order->size()) {
                parked.push_back(d);
                parked_since = t;
            }
            continue;
        }
        free_at.emplace(filler.run(dev, position, t), d);
    }
    if (!parked.empty()) return std::nullopt;
    Schedule filled = schedule;
    for (int d = 0; d < devices; ++d)
        filled.device_ops[d] = std::move(state[d].out);
    return filled;
}

}  // namespace pipesim::detail
