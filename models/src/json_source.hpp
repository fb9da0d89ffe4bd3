#pragma once
// Internal: a parsed JSON document that remembers where each value was, so that messages
// can name SOURCE:LINE:COLUMN for semantic errors too (nlohmann::json keeps no positions).

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipesim::models::detail {

class JsonSource {
  public:
    /// Parses `text`. Throws std::invalid_argument "SOURCE:LINE:COLUMN: reason" on a syntax
    /// error.
    JsonSource(std::string_view text, std::string source);

    const nlohmann::json& root() const { return root_; }
    const std::string& source() const { return source_; }

    /// "SOURCE:LINE:COLUMN" of the value at JSON pointer `pointer` ("" is the root), or of
    /// the closest enclosing value that exists.
    std::string where(const std::string& pointer) const;

    /// Throws std::invalid_argument "WHERE: message" for the value at `pointer`.
    [[noreturn]] void fail(const std::string& pointer, const std::string& message) const;

  private:
    std::string text_;
    std::string source_;
    nlohmann::json root_;
    std::map<std::string, std::size_t> offsets_;  // JSON pointer → byte offset of its value
};

/// "LINE:COLUMN" (1-based) of byte `offset` in `text`.
std::string line_column(std::string_view text, std::size_t offset);

/// Reads a whole file; throws std::invalid_argument naming the path if it cannot.
std::string read_text_file(const std::string& path, std::string_view what);

}  // namespace pipesim::models::detail
