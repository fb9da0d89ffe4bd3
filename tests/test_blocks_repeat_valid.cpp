// schedule_from_block() returns the repeated order without walking it: a block that passes
// check_block (dependencies kept in slot time, no collision when repeated) repeats into an
// order that validate() accepts. Checked here for every catalog family, V-shape offsets and
// turn delays, slot lengths, p and m, against the full validation.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "schedules/block_catalog.hpp"
#include "schedules/validate.hpp"

using namespace pipesim;

namespace {

void check_repeats_valid(const BuildingBlock& block, int p) {
    for (int m : {1, 2, p - 1, p, p + 1, 2 * p + 3}) {
        if (m < 1 || m % block.group != 0) continue;
        CAPTURE(block.name, p, m);
        const Schedule s = schedule_from_block(block, m, {.reorder = false, .fill_idle = false});
        const auto issue = validate(s);
        CHECK(!issue);
    }
}

}  // namespace

TEST_CASE("a checked block repeats into a valid order", "[blocks]") {
    const std::vector<SlotLengths> lengths{{}, {1, 2, 1}, {2, 3, 2}, {1, 1, 2}};
    int blocks = 0;
    for (int p = 1; p <= 12; ++p) {
        for (const SlotLengths& l : lengths) {
            for (const BlockFamily& family : block_families()) {
                try {
                    check_repeats_valid(family.build(p, l), p);
                    ++blocks;
                } catch (const InvalidBlock&) {
                    // no such block for these slot lengths
                }
            }
            for (int offset = 1; offset <= 6; ++offset)
                for (int delay : {0, 1, 3}) {
                    BlockLayout layout = vshape_layout(p, offset, l);
                    layout.b_gap[static_cast<std::size_t>(2 * p - 1)] += delay;
                    try {
                        check_repeats_valid(place_block(layout), p);
                        ++blocks;
                    } catch (const std::invalid_argument&) {
                        // no free slot for some pass, or the repetition collides
                    }
                }
        }
    }
    CHECK(blocks > 500);
}
