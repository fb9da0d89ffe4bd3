#pragma once
// Building-block files: format "pipesim-block", version 1 (see docs/block-format.md).

#include <cstddef>
#include <string>
#include <string_view>

#include "schedules/block.hpp"

namespace pipesim {

/// Limits on a block file; anything larger is almost surely a mistake.
struct BlockFileLimits {
    std::size_t max_bytes = 4u << 20;
    std::size_t max_passes = 1u << 18;
    int max_devices = 4096;
    int max_chunks = 64;
    int max_group = 4096;
    int max_slots = 1 << 24;  ///< largest interval, pass length and start slot
};

/// Parses a block file. `file` names it in messages; a document without "name" gets
/// `default_name`. Throws ParseError "file:line:column: FIELD: what was expected, got what"
/// for malformed JSON, unknown or missing keys, values of the wrong type or out of range,
/// and at the offending pass for a block that check_block() rejects (repeated or missing
/// pass, pass before its input). Collisions of the repeated block are not checked here:
/// repeat_block() reports them with the ops and slot.
BuildingBlock parse_block_json(std::string_view text, const std::string& file,
                               const std::string& default_name = "block",
                               const BlockFileLimits& limits = {});

/// Reads and parses the block file at `path` (its name without extension is the default block
/// name). Throws std::invalid_argument "PATH: cannot read: ..." or a ParseError as above.
BuildingBlock read_block_file(const std::string& path, const BlockFileLimits& limits = {});

/// The block as a block file, ending in a newline; parse_block_json() of it gives back an
/// equal block (passes in the same order).
std::string block_to_json(const BuildingBlock& block);

}  // namespace pipesim
