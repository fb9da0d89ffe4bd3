// The greedy block placer: each pass at the earliest slot that is free modulo the interval.
#include <algorithm>

#include <fmt/format.h>

#include "schedules/block_catalog.hpp"
#include "schedules/op_dependencies.hpp"

namespace pipesim {

namespace {

class SlotGrid {
  public:
    SlotGrid(int devices, int interval)
        : interval_(interval),
          busy_(static_cast<std::size_t>(devices) * static_cast<std::size_t>(interval), 0) {}

    // The earliest start ≥ ready whose `length` slots are free on `device` modulo T, or −1.
    int earliest(int device, int ready, int length) const {
        for (int t = ready; t < ready + interval_; ++t)
            if (free(device, t, length)) return t;
        return -1;
    }

    void take(int device, int start, int length) {
        for (int k = 0; k < length; ++k)
            busy_[index(device, start + k)] = 1;
    }

  private:
    bool free(int device, int start, int length) const {
        if (length > interval_) return false;
        for (int k = 0; k < length; ++k)
            if (busy_[index(device, start + k)]) return false;
        return true;
    }
    std::size_t index(int device, int slot) const {
        return static_cast<std::size_t>(device) * static_cast<std::size_t>(interval_) +
               static_cast<std::size_t>(slot % interval_);
    }

    int interval_;
    std::vector<char> busy_;
};

int gap(const std::vector<int>& gaps, int stage) {
    return gaps.empty() ? 0 : gaps.at(static_cast<std::size_t>(stage));
}

}  // namespace

BuildingBlock place_block(const BlockLayout& layout) {
    BuildingBlock block;
    block.name = layout.name;
    block.devices = layout.devices;
    block.chunks = layout.chunks;
    block.stage_device = layout.stage_device;
    block.lengths = layout.lengths;
    block.interval = layout.interval;
    const int stages = block.stages();
    if (block.interval < 1 || block.stage_device.size() != static_cast<std::size_t>(stages))
        throw InvalidBlock(fmt::format("block '{}': bad layout (interval {}, {} stages placed)",
                                       block.name, block.interval, block.stage_device.size()));
    SlotGrid grid(block.devices, block.interval);
    std::vector<int> end(static_cast<std::size_t>(stages) * pass_count, 0);
    // Places `pass` of `stage` `gap_slots` after its inputs end, at the first free slots.
    auto place = [&](Pass pass, int stage, int gap_slots) {
        int ready = 0;
        for (const Op& input :
             predecessors(Op{pass, 0, stage}, StageRange{0, stages - 1}, layout.split))
            ready = std::max(ready, end[static_cast<std::size_t>(input.stage) * pass_count +
                                        static_cast<std::size_t>(input.pass)]);
        const int device = block.stage_device[stage];
        const int length = block.lengths.of(pass);
        const int start = grid.earliest(device, ready + gap_slots, length);
        if (start < 0)
            throw InvalidBlock(fmt::format(
                "block '{}': {} of stage {} finds no {} free slots on device {} within the "
                "interval of {}",
                block.name, pass_name(pass), stage, length, device, block.interval));
        grid.take(device, start, length);
        block.passes.push_back(BlockPass{pass, stage, start, 0});
        end[static_cast<std::size_t>(stage) * pass_count + static_cast<std::size_t>(pass)] =
            start + length;
    };
    for (int s = 0; s < stages; ++s)
        place(Pass::F, s, gap(layout.f_gap, s));
    const Pass backward = layout.split ? Pass::B : Pass::BW;
    for (int s = stages - 1; s >= 0; --s)
        place(backward, s, gap(layout.b_gap, s));
    if (layout.split)
        for (int s = stages - 1; s >= 0; --s)
            place(Pass::W, s, gap(layout.w_gap, s));
    check_block(block);
    return block;
}

}  // namespace pipesim
