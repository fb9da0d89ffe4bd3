// Building blocks of known schedules.
#include "schedules/block_catalog.hpp"

#include <array>

#include <fmt/format.h>

#include "schedules/placement.hpp"

namespace pipesim {

namespace {

BlockLayout looped_layout(std::string name, int devices, const SlotLengths& lengths, bool split) {
    BlockLayout layout;
    layout.name = std::move(name);
    layout.devices = devices;
    layout.stage_device = looped_placement(devices, 1);
    layout.lengths = lengths;
    layout.interval = lengths.f + lengths.b + lengths.w;
    layout.split = split;
    return layout;
}

}  // namespace

BuildingBlock one_f_one_b_block(int devices, const SlotLengths& lengths) {
    return place_block(looped_layout("1f1b-block", devices, lengths, false));
}

BuildingBlock zb_h1_block(int devices, const SlotLengths& lengths) {
    BlockLayout layout = looped_layout("zb-h1-block", devices, lengths, true);
    for (int i = 0; i < devices; ++i)
        layout.w_gap.push_back(i * layout.interval);
    return place_block(layout);
}

BuildingBlock zb_h2_block(int devices, const SlotLengths& lengths) {
    BlockLayout layout = looped_layout("zb-h2-block", devices, lengths, true);
    for (int i = 0; i < devices; ++i) {
        layout.f_gap.push_back(i == 0 ? 0 : lengths.w + layout.interval);
        layout.w_gap.push_back(2 * i * layout.interval);
    }
    return place_block(layout);
}

BuildingBlock interleaved_1f1b_block(int devices, int chunks) {
    // A group of p microbatches; the k-th forward of a device in Megatron's order (chunk-major
    // within the group) starts at q·k + α_r, the k-th backward at q·k + β_r, with q = f + g the
    // slots of one forward and one fused backward. Spacing devices' forwards by q + f and
    // backwards by g gives each device 2(p−1−r) + (v−1)p warm-up forwards, Megatron's count;
    // g ≥ (p−1)·f keeps the chunk wrap-around (device p−1 → device 0) in dependency order.
    const int p = devices;
    const int v = chunks;
    const int f = 1;
    const int g = std::max(2, p - 1);
    const int q = f + g;
    BuildingBlock block;
    block.name = "interleaved-1f1b-block";
    block.devices = p;
    block.chunks = v;
    block.stage_device = looped_placement(p, v);
    block.lengths = SlotLengths{f, g - 1, 1};
    block.interval = q * p * v;
    block.group = p;
    const int beta_last = q * (v - 1) * p + (q + f) * (p - 1) + f;
    for (int r = 0; r < p; ++r) {
        const int alpha = (q + f) * r;
        const int beta = beta_last + g * (p - 1 - r);
        for (int c = 0; c < v; ++c) {
            for (int j = 0; j < p; ++j) {
                const int k = c * p + j;
                block.passes.push_back(BlockPass{Pass::F, c * p + r, q * k + alpha, j});
                block.passes.push_back(BlockPass{Pass::BW, (v - 1 - c) * p + r, q * k + beta, j});
            }
        }
    }
    check_block(block);
    return block;
}

BlockLayout vshape_layout(int devices, int offset, const SlotLengths& lengths, std::string name) {
    const int p = devices;
    BlockLayout layout;
    layout.name = name.empty() ? fmt::format("v-shape-{}", offset) : std::move(name);
    layout.devices = p;
    layout.chunks = 2;
    layout.stage_device = vshape_placement(p, 2);
    layout.lengths = lengths;
    layout.interval = 2 * (lengths.f + lengths.b + lengths.w);
    layout.split = true;
    layout.f_gap.assign(static_cast<std::size_t>(2 * p), 0);
    layout.b_gap.assign(static_cast<std::size_t>(2 * p), 0);
    // First chunk's forwards (stages 1..p−1) and second chunk's backwards (stages 2p−2..p)
    // advance by `offset` pass lengths from device to device.
    for (int s = 1; s < p; ++s)
        layout.f_gap[s] = (offset - 1) * lengths.f;
    for (int s = p; s < 2 * p - 1; ++s)
        layout.b_gap[s] = (offset - 1) * lengths.b;
    return layout;
}

BuildingBlock vshape_block(int devices, int offset, const SlotLengths& lengths, std::string name) {
    return place_block(vshape_layout(devices, offset, lengths, std::move(name)));
}

BuildingBlock v_half_block(int devices, const SlotLengths& lengths, std::string name) {
    const BlockLayout offset_two =
        vshape_layout(devices, 2, lengths, name.empty() ? "v-half-block" : std::move(name));
    if (devices % 2 == 1) return place_block(offset_two);
    // Even p: the turn of the V (the last stage's backward after its forward) waits half an
    // interval, as in the authors' V-Half pattern (Qi et al., NeurIPS 2024, whose stable
    // pattern starts the second chunk's backwards 3 unit slots later for even p). Every
    // device's two lifespans then round up to p + 2 chunk activations together.
    BlockLayout delayed = offset_two;
    delayed.b_gap[2 * devices - 1] += lengths.f + lengths.b + lengths.w;
    try {
        return place_block(delayed);
    } catch (const InvalidBlock&) {
        // Some unequal slot lengths leave a pass no free slots after the delay.
        return place_block(offset_two);
    }
}

namespace {

BuildingBlock v_min(int p, const SlotLengths& l) {
    return vshape_block(p, 1, l, "v-min-block");
}
BuildingBlock v_half(int p, const SlotLengths& l) {
    return v_half_block(p, l);
}

constexpr std::array families{
    BlockFamily{"1f1b", "1F1B's block (fused backward)", &one_f_one_b_block},
    BlockFamily{"zb-h1", "ZB-H1's block", &zb_h1_block},
    BlockFamily{"zb-h2", "ZB-H2's block", &zb_h2_block},
    BlockFamily{"v-min", "V-shape block, offset 1 (memory ≈ p/3)", &v_min},
    BlockFamily{"v-half", "V-shape block, offset 2, turn delayed for even p (memory ⌊(p+2)/2⌋)",
                &v_half},
};

}  // namespace

std::span<const BlockFamily> block_families() {
    return families;
}

}  // namespace pipesim
