#pragma once
// Positioned parse errors: "file:line:column: what was expected".

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipesim::fileio {

/// A place in a text file. Lines and columns count from 1; a column counts bytes (a tab or a
/// multi-byte UTF-8 character is one or more columns, as compilers count them). Line 0 means
/// "no particular place" (a problem with the file as a whole).
struct TextPosition {
    int line = 0;
    int column = 0;

    bool known() const { return line > 0; }
    bool operator==(const TextPosition&) const = default;
};

/// The line and column of byte `offset` in `text` (an offset at or past the end gives the
/// position just after the last byte).
TextPosition position_at(std::string_view text, std::size_t offset);

/// position_at() for a reader that keeps the position of every item it reads: asked for
/// offsets in increasing order, each call scans only from the previous one, so a pass over a
/// whole file costs O(size) in all (position_at per item would be quadratic) and no memory
/// per line. An offset before the previous one is found by scanning again from the start.
/// Keeps a view of `text`, which must outlive it.
class PositionCursor {
  public:
    explicit PositionCursor(std::string_view text) : text_(text) {}

    /// The same as position_at(text, offset).
    TextPosition position(std::size_t offset);

  private:
    std::string_view text_;
    std::size_t offset_ = 0;  // where the last call ended
    TextPosition at_{1, 1};   // the position of offset_
};

/// Bad input in a file. Derives from std::invalid_argument (the CLI maps it to exit code 2).
/// what() is "FILE:LINE:COLUMN: PROBLEM", or "FILE: PROBLEM" when the position is unknown;
/// PROBLEM says what was expected, e.g. "expected an integer in 1..4096, got 0".
class ParseError : public std::invalid_argument {
  public:
    ParseError(std::string file, TextPosition where, std::string problem);

    const std::string& file() const { return file_; }
    TextPosition where() const { return where_; }
    /// The message without the "FILE:LINE:COLUMN: " prefix.
    const std::string& problem() const { return problem_; }

  private:
    std::string file_;
    TextPosition where_;
    std::string problem_;
};

/// The length of the UTF-8 sequence `text` starts with, or 0 if it does not start with a
/// valid one (an overlong form, a surrogate or a code point past U+10FFFF included).
std::size_t utf8_sequence(std::string_view text);

/// The code point of the UTF-8 `sequence`: one whole character of 2 to 4 bytes, as
/// utf8_sequence() measures it.
std::uint32_t code_point(std::string_view sequence);

/// Whether the character of the UTF-8 `sequence` (one whole character of 2 to 4 bytes, as
/// utf8_sequence() measures it) moves or hides text on a terminal: the C1 controls, zero-width
/// and direction marks, the line and paragraph separators and the bidirectional embeddings,
/// overrides and isolates.
bool invisible_control(std::string_view sequence);

/// `text` quoted for a message: at most `max_chars` bytes (whole characters), its characters
/// as written, but control bytes and bytes that are not UTF-8 escaped as \xNN, and
/// characters that move or hide text (C1 controls, bidirectional overrides, zero-width marks)
/// or look like a plain space (no-break and other Unicode spaces) as \uNNNN, so hostile input
/// cannot garble a terminal or flood a log, and a name that differs by such a character shows
/// where.
std::string quote_excerpt(std::string_view text, std::size_t max_chars = 40);

/// `message` fit to be one line of a terminal or log: control bytes (a line break, an escape
/// sequence from a name the user gave) as \xNN, and cut after `max_bytes` bytes (at a
/// character's start) with how much was left out. What a command prints for an error.
std::string printable_message(std::string_view message, std::size_t max_bytes = 2000);

}  // namespace pipesim::fileio
