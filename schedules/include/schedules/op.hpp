#pragma once
// Passes and ops: the atoms of a pipeline schedule.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace pipesim {

/// One pass of one microbatch through one virtual stage.
/// F: forward. B: backward for the input gradient. W: backward for the weight gradient.
/// BW: fused full backward (B then W in one op).
enum class Pass : std::uint8_t { F = 0, B = 1, W = 2, BW = 3 };

inline constexpr int pass_count = 4;

/// "F", "B", "W" or "BW".
std::string_view pass_name(Pass pass);

/// Parses "F", "B", "W" or "BW" (exact, upper case); false if `text` is none of them.
bool parse_pass(std::string_view text, Pass& pass);

/// An op: (pass, microbatch, virtual stage). Microbatches and stages count from 0.
struct Op {
    Pass pass = Pass::F;
    std::int32_t microbatch = 0;
    std::int32_t stage = 0;

    bool operator==(const Op&) const = default;
};

/// "B(mb 3, stage 2)": the form every error message uses.
std::string to_string(const Op& op);

/// Position of `op` in a dense array indexed by (microbatch, stage, pass), for schedules with
/// `stages` virtual stages. Size such arrays with dense_op_count(). Used by the validator and
/// every engine to keep per-op state in contiguous memory.
inline std::size_t dense_op_index(const Op& op, int stages) {
    return (static_cast<std::size_t>(op.microbatch) * static_cast<std::size_t>(stages) +
            static_cast<std::size_t>(op.stage)) *
               pass_count +
           static_cast<std::size_t>(op.pass);
}

inline std::size_t dense_op_count(int microbatches, int stages) {
    return static_cast<std::size_t>(microbatches) * static_cast<std::size_t>(stages) * pass_count;
}

}  // namespace pipesim
