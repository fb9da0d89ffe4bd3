#pragma once
// What the schedule and block readers share: op positions for messages, the allocation
// budget, validation with the offending op's position, and the placement field.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fileio/parse_error.hpp"
#include "schedules/schedule.hpp"

namespace pipesim::fileio {

class JsonDocument;

}  // namespace pipesim::fileio

namespace pipesim::detail {

/// Where each op of a parsed schedule was written: one offset per op, parallel to
/// Schedule::device_ops, whose meaning the reader defines (a byte in the file, a byte in a
/// device's op string), and the reader's way to turn one into a position. Only a message
/// needs a position, so recording one costs O(1) per op however large the file.
struct OpPositions {
    std::vector<std::vector<std::size_t>> offsets;
    std::function<fileio::TextPosition(std::size_t device, std::size_t offset)> locate;

    /// Where op `index` of `device` was written; unknown if there is no such op.
    fileio::TextPosition at(std::size_t device, std::size_t index) const;
};

/// Where a JSON text's first value starts: past a UTF-8 byte-order mark (an editor's save,
/// which the JSON reader allows) and white space; npos for none.
std::size_t json_text_start(std::string_view text);

/// The unsigned decimal at s[i], advancing i past its digits. −1 if s[i] is not a digit;
/// `too_big` (with i at the digit that made it so) if the number reaches `limit`, so a
/// claimed 10^12 never overflows or allocates.
inline constexpr long long too_big = -2;
long long read_decimal(std::string_view s, std::size_t& i, long long limit);

/// Validation keeps dense per-(microbatch, stage) arrays. Throws ParseError unless their size
/// stays proportional to the ops the file really lists (a valid schedule has at least two
/// ops per microbatch and stage), so a file claiming 10^6 microbatches with a handful of ops
/// is refused before anything large is allocated.
void check_op_budget(const Schedule& schedule, std::size_t ops, const std::string& file);

/// Refuses (fileio::OverMemoryBudget, one line naming `file`) reading `ops` ops that this
/// process cannot hold: the ops (an Op and its offset each, `growth` times over for lists
/// that grow as they are read) and validation's two end times per microbatch and stage (at
/// most 8 bytes an op: a valid schedule has two ops or more per pair), plus
/// `other_bytes_per_op` of the reader's own. Checked with the memory left now, after the
/// file's text (and its JSON document) were read. Files of under a million ops skip it.
void check_read_memory(const std::string& file, std::size_t ops, double growth,
                       double other_bytes_per_op = 0);

/// validate(), throwing ParseError "invalid schedule: ..." at the offending op when the issue
/// names one, else for the file as a whole. `pass_names`, when given, is appended where the
/// message names a backward pass: how the file's own letters map to pipesim's (a PyTorch CSV
/// writes a full backward B and an input gradient I).
void validate_parsed(const Schedule& schedule, const OpPositions& positions,
                     const std::string& file, std::string_view pass_names = {});

/// The JSON document of a schedule or block file, after the checks every such file starts
/// with: at most `max_bytes` bytes, valid JSON, "format" `format_tag` and "version"
/// `version`. Throws ParseError naming `file` otherwise.
fileio::JsonDocument open_json_file(std::string_view text, const std::string& file,
                                    std::size_t max_bytes, std::string_view format_tag,
                                    int version);

/// The "/placement" field of a schedule or block file: "looped", "v-shape" (v even) or an
/// array of devices·chunks device numbers in 0..devices−1. Throws ParseError at the field.
std::vector<int> read_placement(const fileio::JsonDocument& doc, int devices, int chunks);

}  // namespace pipesim::detail
