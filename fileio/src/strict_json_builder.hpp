#pragma once
// Builds a JsonDocument's values from nlohmann's SAX events, enforcing what JsonDocument adds
// to plain JSON: bounded nesting, unique keys, a bounded number of keys per object.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fileio/json_document.hpp"

namespace pipesim::fileio::detail {

/// A SAX handler for JsonDocument::Value::sax_parse that checks each event and hands it to
/// nlohmann's own DOM builder. Not Value::parse with a callback: that parser scans the
/// enclosing container at the end of every object, so an array of n objects (a timeline's
/// ops) cost n²/2 steps. Throws ParseError at the offending value or key; syntax errors are
/// nlohmann's parse_error, thrown by the DOM builder.
class StrictJsonBuilder {
  public:
    using Value = JsonDocument::Value;

    StrictJsonBuilder(const JsonDocument& doc, const JsonLimits& limits, Value& root)
        : doc_(doc), limits_(limits), dom_(root) {}

    bool null() {
        next_value();
        return dom_.null();
    }
    bool boolean(bool value) {
        next_value();
        return dom_.boolean(value);
    }
    bool number_integer(Value::number_integer_t value) {
        next_value();
        return dom_.number_integer(value);
    }
    bool number_unsigned(Value::number_unsigned_t value) {
        next_value();
        return dom_.number_unsigned(value);
    }
    bool number_float(Value::number_float_t value, const Value::string_t& text) {
        next_value();
        return dom_.number_float(value, text);
    }
    bool string(Value::string_t& value) {
        next_value();
        return dom_.string(value);
    }
    bool binary(Value::binary_t& value) {
        next_value();
        return dom_.binary(value);
    }
    bool start_object(std::size_t size) {
        open(false);
        return dom_.start_object(size);
    }
    bool key(Value::string_t& key) {
        add_key(key);
        return dom_.key(key);
    }
    bool end_object() {
        frames_.pop_back();
        return dom_.end_object();
    }
    bool start_array(std::size_t size) {
        open(true);
        return dom_.start_array(size);
    }
    bool end_array() {
        frames_.pop_back();
        return dom_.end_array();
    }
    template <class Exception>
    bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
        return dom_.parse_error(position, token, error);
    }

  private:
    // An open array or object. Positions are kept as indices and keys, and turned into a JSON
    // pointer only for a message.
    struct Frame {
        bool is_array = false;
        std::size_t next_index = 0;     // arrays: elements begun so far
        std::vector<std::string> keys;  // objects: keys so far, the current one last
    };

    // A value begins: it is the next element of an enclosing array.
    void next_value() {
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().next_index;
    }

    void open(bool is_array) {
        next_value();
        if (static_cast<int>(frames_.size()) >= limits_.max_depth)
            throw doc_.error_at(current_pointer(),
                                fmt::format("nesting deeper than {} levels", limits_.max_depth));
        frames_.push_back(Frame{is_array, 0, {}});
    }

    void add_key(const std::string& key) {
        std::vector<std::string>& keys = frames_.back().keys;
        const bool repeated = std::find(keys.begin(), keys.end(), key) != keys.end();
        keys.push_back(key);
        constexpr std::size_t excerpt_chars = 40;
        if (repeated)
            throw ParseError(doc_.file(), doc_.key_position_of(current_pointer(), true),
                             fmt::format("key {} appears twice in this object",
                                         quote_excerpt(key, excerpt_chars)));
        // Checked before nlohmann inserts the key: its objects find a key by a linear search.
        if (keys.size() > limits_.max_object_keys)
            throw ParseError(
                doc_.file(), doc_.key_position_of(current_pointer()),
                fmt::format("key {}: more than {} keys in one object",
                            quote_excerpt(key, excerpt_chars), limits_.max_object_keys));
    }

    // The pointer of the value being read now (the last element or key of each open frame).
    std::string current_pointer() const {
        std::string pointer;
        for (const Frame& frame : frames_)
            pointer = frame.is_array ? json_pointer_child(pointer, frame.next_index - 1)
                                     : json_pointer_child(pointer, frame.keys.back());
        return pointer;
    }

    const JsonDocument& doc_;
    const JsonLimits& limits_;
    nlohmann::detail::json_sax_dom_parser<Value> dom_;
    std::vector<Frame> frames_;
};

}  // namespace pipesim::fileio::detail
