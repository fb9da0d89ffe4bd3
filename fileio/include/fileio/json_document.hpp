#pragma once
// JSON input files with positioned errors: the readers of schedule, timeline, building-block,
// model, calibration, cluster and sweep-grid files parse through JsonDocument and report
// "file:line:column: what was expected" for syntax and content errors alike.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fileio/parse_error.hpp"

namespace pipesim::fileio {

/// Limits on a JSON document's shape (its byte size is capped when the file is read).
struct JsonLimits {
    /// Deepest nesting of arrays and objects accepted (the root object is depth 1).
    int max_depth = 32;
    /// Most keys one object may have. pipesim's objects have at most a few dozen known keys;
    /// the cap keeps parsing linear (nlohmann's ordered objects look a new key up by a linear
    /// search, so an object of n keys costs n²/2 comparisons).
    std::size_t max_object_keys = 64;
};

/// A parsed JSON document that keeps its text, so any value can be located for a message.
/// Values are addressed by JSON pointer (RFC 6901): "" is the root, "/ops/3" the fourth
/// element of member "ops". Build child pointers with json_pointer_child().
///
/// Stricter than plain nlohmann::json::parse: a key repeated within one object, nesting
/// deeper than JsonLimits::max_depth and objects with more than JsonLimits::max_object_keys
/// keys are errors. Typed getters check type and range and throw
/// ParseError at the offending value (or, for a missing member, at its object).
class JsonDocument {
  public:
    using Value = nlohmann::ordered_json;

    /// Parses `text`; `file` names it in messages. Throws ParseError at the first syntax error,
    /// and std::invalid_argument (one line, the estimate and what is left) before parsing a
    /// text whose values would not fit in this process's memory (estimated_bytes).
    JsonDocument(std::string file, std::string text, const JsonLimits& limits = {});

    /// An upper bound on the bytes parsing `text` allocates (and destroying the result needs),
    /// from one linear scan of it; levels deeper than `max_depth` are not counted.
    static double estimated_bytes(std::string_view text, int max_depth);

    const std::string& file() const { return file_; }
    const std::string& text() const { return text_; }
    const Value& root() const { return root_; }

    /// Where the value at `pointer` starts (unknown if there is no such value).
    TextPosition position_of(std::string_view pointer) const;
    /// Where the key of object member `pointer` starts (its value's position for an array
    /// element or the root); of the last one if the key is repeated and `last_occurrence`.
    TextPosition key_position_of(std::string_view pointer, bool last_occurrence = false) const;
    /// Where byte `offset` of the decoded string at `pointer` was written (escapes count as
    /// written, so the column points into the file's text); the string's position if
    /// `pointer` is not a string.
    TextPosition position_in_string(std::string_view pointer, std::size_t offset) const;
    /// Byte offset in text() where the value at `pointer` starts, or text().size().
    std::size_t offset_of(std::string_view pointer) const;

    /// The value at `pointer` quoted for a message (shortened if long), a number as the file
    /// writes it: parsed, 2^64 would read 1.8446744073709552e+19.
    std::string quoted(std::string_view pointer) const;
    /// A ParseError located at the value at `pointer`.
    ParseError error_at(std::string_view pointer, std::string problem) const;

    /// Whether `pointer` names a value.
    bool has(std::string_view pointer) const;
    /// The value at `pointer`; throws at the enclosing object if it is missing, saying
    /// `expected` (e.g. "an integer in 1..64").
    const Value& at(std::string_view pointer, std::string_view expected) const;
    /// The object at `pointer`; throws unless it is an object whose keys are all in `known`
    /// (the message lists them).
    const Value& object(std::string_view pointer,
                        std::initializer_list<std::string_view> known) const;
    const Value& object(std::string_view pointer, std::span<const std::string_view> known) const;
    /// The array at `pointer` with at most `max_size` elements.
    const Value& array(std::string_view pointer, std::size_t max_size) const;
    /// The integer at `pointer`, in [min, max]. Numbers with a fraction or exponent
    /// ("4.0", "1e3") are rejected: counts are written as plain integers.
    std::int64_t integer(std::string_view pointer, std::int64_t min, std::int64_t max) const;
    /// The finite number at `pointer`, in [min, max].
    double number(std::string_view pointer, double min, double max) const;
    /// The string at `pointer`, at most `max_size` bytes.
    const std::string& string(std::string_view pointer, std::size_t max_size) const;
    /// The string at `pointer` as string() reads it, and printable: no control characters
    /// (bytes below 0x20 and 0x7f), so a name can go into a terminal, a report or a message as
    /// it is (an escape sequence would run in the terminal).
    const std::string& text(std::string_view pointer, std::size_t max_size) const;
    /// text() that shows something (prints_nothing()): a name that reports print (an empty one
    /// reads "on 4 × ,").
    const std::string& name(std::string_view pointer, std::size_t max_size) const;

    /// Checks the header every pipesim JSON format starts with: the root is an object whose
    /// "format" is `tag` (checked first, so another kind of JSON file is named as such) and
    /// whose "version" is `version`. Throws ParseError at the offending value.
    void require_format(std::string_view tag, int version) const;
    /// require_format() for formats whose header is optional (model, GPU and cluster files):
    /// "format" and "version" are checked only where present.
    void optional_format(std::string_view tag, int version) const;

    /// "device_ops[2]" for "/device_ops/2": how messages name a value.
    static std::string display_name(std::string_view pointer);

  private:
    // The "format" and "version" of the root object: each checked where present, or always
    // when `required`.
    void check_header(std::string_view tag, int version, bool required) const;

    const Value* find(std::string_view pointer) const;
    std::size_t locate(std::string_view pointer, bool key, bool last_occurrence) const;

    std::string file_;
    std::string text_;
    Value root_;
};

/// `pointer` extended by object key `key` (escaped as RFC 6901 asks: ~ → ~0, / → ~1).
std::string json_pointer_child(std::string_view pointer, std::string_view key);
/// `pointer` extended by array index `index`.
std::string json_pointer_child(std::string_view pointer, std::size_t index);

}  // namespace pipesim::fileio
