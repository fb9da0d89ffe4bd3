#include "fileio/parse_error.hpp"

#include <fmt/format.h>

namespace pipesim::fileio {

TextPosition position_at(std::string_view text, std::size_t offset) {
    return PositionCursor(text).position(offset);
}

TextPosition PositionCursor::position(std::size_t offset) {
    const std::size_t end = offset < text_.size() ? offset : text_.size();
    if (end < offset_) {
        offset_ = 0;
        at_ = {1, 1};
    }
    for (; offset_ < end; ++offset_) {
        if (text_[offset_] == '\n') {
            ++at_.line;
            at_.column = 1;
        } else {
            ++at_.column;
        }
    }
    return at_;
}

namespace {

std::string format_message(const std::string& file, TextPosition where,
                           const std::string& problem) {
    if (!where.known()) return fmt::format("{}: {}", file, problem);
    return fmt::format("{}:{}:{}: {}", file, where.line, where.column, problem);
}

}  // namespace

ParseError::ParseError(std::string file, TextPosition where, std::string problem)
    : std::invalid_argument(format_message(file, where, problem)),
      file_(std::move(file)),
      where_(where),
      problem_(std::move(problem)) {}

std::string quote_excerpt(std::string_view text, std::size_t max_chars) {
    std::string out = "'";
    const std::size_t n = text.size() < max_chars ? text.size() : max_chars;
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\')
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
    }
    out += n < text.size() ? "'..." : "'";
    return out;
}

}  // namespace pipesim::fileio
