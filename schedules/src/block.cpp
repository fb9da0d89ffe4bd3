// Building blocks: shape and dependency checks, and the lifespan bound.
#include "schedules/block.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "schedules/op_dependencies.hpp"

namespace pipesim {

namespace {

// Sizes beyond these are almost surely mistakes in a block file.
constexpr int max_block_devices = 4096;
constexpr int max_block_chunks = 64;
constexpr int max_block_group = 4096;
constexpr int max_block_slots = 1 << 24;

struct PassSlots {
    const BlockPass* pass[pass_count] = {nullptr, nullptr, nullptr, nullptr};
};

std::string describe(const BlockPass& p) {
    return fmt::format("{}(mb {}, stage {}) at slot {}", pass_name(p.pass), p.microbatch, p.stage,
                       p.start);
}

void check_shape(const BuildingBlock& b) {
    auto fail = [&](const std::string& what) {
        throw InvalidBlock(fmt::format("block '{}': {}", b.name, what));
    };
    if (b.devices < 1 || b.devices > max_block_devices)
        fail(fmt::format("devices must be in 1..{}, got {}", max_block_devices, b.devices));
    if (b.chunks < 1 || b.chunks > max_block_chunks)
        fail(fmt::format("chunks must be in 1..{}, got {}", max_block_chunks, b.chunks));
    if (b.interval < 1 || b.interval > max_block_slots)
        fail(fmt::format("interval must be in 1..{}, got {}", max_block_slots, b.interval));
    if (b.group < 1 || b.group > max_block_group)
        fail(fmt::format("group must be in 1..{}, got {}", max_block_group, b.group));
    for (auto [name, len] : {std::pair{"F", b.lengths.f}, {"B", b.lengths.b}, {"W", b.lengths.w}})
        if (len < 1 || len > max_block_slots)
            fail(fmt::format("the length of {} must be in 1..{} slots, got {}", name,
                             max_block_slots, len));
    if (b.stage_device.size() != static_cast<std::size_t>(b.stages()))
        fail(fmt::format("placement lists {} stages, expected devices·chunks = {}",
                         b.stage_device.size(), b.stages()));
    std::vector<int> count(static_cast<std::size_t>(b.devices), 0);
    for (int s = 0; s < b.stages(); ++s) {
        const int d = b.stage_device[s];
        if (d < 0 || d >= b.devices)
            fail(
                fmt::format("stage {} is placed on device {}, outside 0..{}", s, d, b.devices - 1));
        ++count[d];
    }
    for (int d = 0; d < b.devices; ++d)
        if (count[d] != b.chunks)
            fail(fmt::format("device {} holds {} stages, expected {} (chunks)", d, count[d],
                             b.chunks));
}

// The index of `p` in the block's passes.
int index_of(const BuildingBlock& b, const BlockPass& p) {
    return static_cast<int>(&p - b.passes.data());
}

// The block's passes indexed by (microbatch, stage); throws for repeats and missing passes.
std::vector<PassSlots> index_passes(const BuildingBlock& b) {
    const int stages = b.stages();
    std::vector<PassSlots> slots(static_cast<std::size_t>(b.group * stages));
    for (const BlockPass& p : b.passes) {
        auto fail = [&](const std::string& what, int at) {
            throw InvalidBlock(fmt::format("block '{}': {}", b.name, what), at);
        };
        if (p.stage < 0 || p.stage >= stages)
            fail(fmt::format("pass {} has a stage outside 0..{}", describe(p), stages - 1),
                 index_of(b, p));
        if (p.microbatch < 0 || p.microbatch >= b.group)
            fail(fmt::format("pass {} has a microbatch outside 0..{}", describe(p), b.group - 1),
                 index_of(b, p));
        if (p.start < 0 || p.start > max_block_slots)
            fail(fmt::format("pass {} must start in slots 0..{}", describe(p), max_block_slots),
                 index_of(b, p));
        const BlockPass*& slot =
            slots[p.microbatch * stages + p.stage].pass[static_cast<int>(p.pass)];
        // An exact repeat is located at its first occurrence, the one the reader meets first.
        if (slot)
            fail(fmt::format("{} appears twice (also {})", describe(p), describe(*slot)),
                 index_of(b, slot->start == p.start ? *slot : p));
        slot = &p;
    }
    for (int j = 0; j < b.group; ++j) {
        for (int s = 0; s < stages; ++s) {
            const PassSlots& ps = slots[j * stages + s];
            auto has = [&](Pass pass) { return ps.pass[static_cast<int>(pass)] != nullptr; };
            auto missing = [&](const char* what) {
                throw InvalidBlock(fmt::format("block '{}': microbatch {} stage {} has no {}",
                                               b.name, j, s, what));
            };
            if (!has(Pass::F)) missing("F");
            if (has(Pass::BW) && (has(Pass::B) || has(Pass::W)))
                throw InvalidBlock(fmt::format(
                    "block '{}': microbatch {} stage {} has both BW and {}: use either the fused "
                    "backward or B and W",
                    b.name, j, s, has(Pass::B) ? "B" : "W"));
            if (!has(Pass::BW) && !has(Pass::B) && !has(Pass::W))
                missing("backward (BW, or B and W)");
            if (!has(Pass::BW) && !has(Pass::B)) missing("B");
            if (!has(Pass::BW) && !has(Pass::W)) missing("W");
        }
    }
    return slots;
}

const BlockPass& last_of(const PassSlots& ps) {
    return ps.pass[static_cast<int>(Pass::BW)] ? *ps.pass[static_cast<int>(Pass::BW)]
                                               : *ps.pass[static_cast<int>(Pass::W)];
}

void check_dependencies(const BuildingBlock& b, const std::vector<PassSlots>& slots) {
    const int stages = b.stages();
    auto need_after = [&](const BlockPass& later, const BlockPass& earlier) {
        const int ready = earlier.start + b.lengths.of(earlier.pass);
        if (later.start < ready)
            throw InvalidBlock(
                fmt::format("block '{}': {} starts before its input {} ends at slot {}", b.name,
                            describe(later), describe(earlier), ready),
                index_of(b, later));
    };
    for (int j = 0; j < b.group; ++j) {
        const PassSlots* row = &slots[static_cast<std::size_t>(j * stages)];
        auto split = [&](int stage) {
            return row[stage].pass[static_cast<int>(Pass::BW)] == nullptr;
        };
        for (int s = 0; s < stages; ++s) {
            for (Pass pass : {Pass::F, Pass::B, Pass::BW, Pass::W}) {
                const BlockPass* later = row[s].pass[static_cast<int>(pass)];
                if (!later) continue;
                for (const Op& input :
                     predecessors(Op{pass, j, s}, StageRange{0, stages - 1}, split))
                    need_after(*later, *row[input.stage].pass[static_cast<int>(input.pass)]);
            }
        }
    }
}

}  // namespace

int SlotLengths::of(Pass pass) const {
    switch (pass) {
        case Pass::F:
            return f;
        case Pass::B:
            return b;
        case Pass::W:
            return w;
        case Pass::BW:
            return b + w;
    }
    return 0;
}

void check_block(const BuildingBlock& block) {
    check_shape(block);
    check_dependencies(block, index_passes(block));
}

Lifespan block_lifespan(const BuildingBlock& block, const MemoryModel& memory) {
    const int stages = block.stages();
    const std::vector<PassSlots> slots = index_passes(block);
    Lifespan result;
    result.stage_lifespan.assign(static_cast<std::size_t>(stages), 0);
    result.stage_in_flight.assign(static_cast<std::size_t>(stages), 0);
    result.device_bound.assign(static_cast<std::size_t>(block.devices), 0.0);
    for (int s = 0; s < stages; ++s) {
        for (int j = 0; j < block.group; ++j) {
            const PassSlots& ps = slots[j * stages + s];
            const BlockPass& first = *ps.pass[static_cast<int>(Pass::F)];
            const BlockPass& last = last_of(ps);
            const int lifespan = last.start + block.lengths.of(last.pass) - first.start;
            result.stage_lifespan[s] = std::max(result.stage_lifespan[s], lifespan);
            result.stage_in_flight[s] += (lifespan + block.interval - 1) / block.interval;
        }
        result.device_bound[block.stage_device[s]] +=
            result.stage_in_flight[s] * memory.activation.at(static_cast<std::size_t>(s));
    }
    for (double bound : result.device_bound)
        result.max_bound = std::max(result.max_bound, bound);
    return result;
}

}  // namespace pipesim
