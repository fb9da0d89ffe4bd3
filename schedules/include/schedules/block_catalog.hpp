#pragma once
// Building blocks of known schedules, laid out by a greedy placer: 1F1B, ZB-H1, ZB-H2 and
// interleaved 1F1B (showing the framework is general), and the V-shape family of Qi et al.,
// "Pipeline Parallelism with Controllable Memory" (NeurIPS 2024).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/block.hpp"

namespace pipesim {

/// What place_block lays out: one microbatch's passes on a slot grid repeating every
/// `interval` slots. Gaps are extra idle slots per virtual stage (empty: none):
/// f_gap[s] between the end of F(s−1) and F(s); b_gap[s] between the end of the backward of
/// s+1 (or of F(s) for the last stage) and the backward of s; w_gap[s] between B(s) and W(s).
struct BlockLayout {
    std::string name;
    int devices = 0;
    int chunks = 1;
    std::vector<int> stage_device;
    SlotLengths lengths;
    int interval = 0;
    bool split = true;  ///< B and W, or a fused BW
    std::vector<int> f_gap;
    std::vector<int> b_gap;
    std::vector<int> w_gap;
};

/// Places the F's in stage order, then the backwards in reverse stage order, then the W's,
/// each at the earliest slot after its inputs (plus its gap) whose slots are free on its
/// device modulo the interval, so the block never collides with its repetitions.
/// Throws InvalidBlock if a pass finds no free slots (the device's work exceeds T).
BuildingBlock place_block(const BlockLayout& layout);

/// 1F1B: fused backwards, T = f + b + w; device i holds p − i microbatches.
BuildingBlock one_f_one_b_block(int devices, const SlotLengths& lengths = {});
/// ZB-H1: 1F1B's block with split backward, device i's W delayed by i intervals (memory p).
BuildingBlock zb_h1_block(int devices, const SlotLengths& lengths = {});
/// ZB-H2: forwards spaced T + w apart, device i's W delayed by 2i intervals (memory 2p − 1).
BuildingBlock zb_h2_block(int devices, const SlotLengths& lengths = {});
/// Interleaved 1F1B in Megatron's order with microbatch groups of p: a block of p
/// microbatches on a looped placement with v chunks (its own slot lengths: F 1, BW p − 1).
BuildingBlock interleaved_1f1b_block(int devices, int chunks);

/// The V-shape building block (two chunks, device i holds stages i and 2p−1−i, T = 2(f+b+w)).
/// `offset` is the start-to-start distance of consecutive devices' forwards on the first chunk
/// and of backwards on the second (the other chain advances by one pass length); offset
/// f=b=w=1 gives V-Min (memory ≈ p/3 of a full stage), 2 V-Half (≈ p/2).
BuildingBlock vshape_block(int devices, int offset, const SlotLengths& lengths = {},
                           std::string name = "");

/// vshape_block's layout before placing (its gaps may be changed, e.g. to delay the turn of
/// the V: b_gap[2p−1], the wait of the last stage's backward after its forward).
BlockLayout vshape_layout(int devices, int offset, const SlotLengths& lengths = {},
                          std::string name = "");

/// V-Half's block (Qi et al., NeurIPS 2024): vshape_block offset 2; for even p the backward
/// of the last stage starts f + b + w slots (half an interval) after it could, which gives
/// every device the paper's peak ⌊(p+2)/2⌋ full-stage microbatches (offset 2 alone: p/2 + 1.5).
/// Odd p, or slot lengths with which the delayed block finds no free slots for some pass:
/// exactly vshape_block(p, 2). `name` empty: "v-half-block".
BuildingBlock v_half_block(int devices, const SlotLengths& lengths = {}, std::string name = "");

/// A named block family of the catalog: name and builder for p devices.
struct BlockFamily {
    std::string_view name;
    std::string_view description;
    BuildingBlock (*build)(int devices, const SlotLengths& lengths);
};

/// The catalog of block families, used by `pipesim search` and the tests.
std::span<const BlockFamily> block_families();

}  // namespace pipesim
