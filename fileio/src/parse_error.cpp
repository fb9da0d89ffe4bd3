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

std::string printable_message(std::string_view message, std::size_t max_bytes) {
    std::size_t cut = message.size();
    if (cut > max_bytes) {
        cut = max_bytes;
        // Not inside a UTF-8 character: back up over its continuation bytes.
        while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xc0) == 0x80)
            --cut;
    }
    std::string out;
    out.reserve(cut + 32);
    for (std::size_t i = 0; i < cut; ++i) {
        const auto c = static_cast<unsigned char>(message[i]);
        if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
    }
    if (cut < message.size()) out += fmt::format("... ({} more bytes)", message.size() - cut);
    return out;
}

}  // namespace pipesim::fileio
