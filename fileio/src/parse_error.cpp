#include "fileio/parse_error.hpp"

#include <algorithm>
#include <cstdint>

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

std::size_t utf8_sequence(std::string_view text) {
    if (text.empty()) return 0;
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return 1;
    const std::size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                               : lead >= 0xE0 && lead <= 0xEF ? 3
                               : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                              : 0;
    if (length == 0 || text.size() < length) return 0;
    for (std::size_t i = 1; i < length; ++i)
        if ((byte(i) & 0xC0) != 0x80) return 0;
    const unsigned char second = byte(1);
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
        (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F))
        return 0;
    return length;
}

std::uint32_t code_point(std::string_view sequence) {
    std::uint32_t code = static_cast<unsigned char>(sequence[0]) & (sequence.size() == 2   ? 0x1F
                                                                    : sequence.size() == 3 ? 0x0F
                                                                                           : 0x07);
    for (std::size_t i = 1; i < sequence.size(); ++i)
        code = (code << 6) | (static_cast<unsigned char>(sequence[i]) & 0x3F);
    return code;
}

// The zero-width and direction marks: the Arabic letter mark, the Mongolian vowel separator,
// the word joiner and invisible operators, the zero-width no-break space.
bool invisible_control(std::string_view sequence) {
    const std::uint32_t code = code_point(sequence);
    return (code >= 0x80 && code <= 0x9F) || code == 0x061C || code == 0x180E ||
           (code >= 0x200B && code <= 0x200F) || (code >= 0x2028 && code <= 0x202E) ||
           (code >= 0x2060 && code <= 0x2069) || code == 0xFEFF;
}

namespace {

// Spaces other than U+0020 that a terminal shows as one: the no-break spaces, the Ogham space
// mark, the en quad to the hair space, the medium mathematical and the ideographic space.
bool lookalike_space(std::uint32_t code) {
    return code == 0x00A0 || code == 0x1680 || (code >= 0x2000 && code <= 0x200A) ||
           code == 0x202F || code == 0x205F || code == 0x3000;
}

}  // namespace

std::string quote_excerpt(std::string_view text, std::size_t max_chars) {
    std::string out = "'";
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t length = utf8_sequence(text.substr(i));
        // Whole characters only: the one that would pass the limit is left out.
        if (i + std::max<std::size_t>(length, 1) > max_chars) break;
        if (length > 1) {
            const std::string_view character = text.substr(i, length);
            const std::uint32_t code = code_point(character);
            // A character that hides or moves text, or looks like a plain space, by its code
            // point as Python and JSON write it ('1f1b\u200b'); any other as the user wrote
            // it ('é', 'модель').
            if (invisible_control(character) || lookalike_space(code))
                out += fmt::format("\\u{:04x}", code);
            else
                out += character;
            i += length;
            continue;
        }
        if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\')
            out += fmt::format("\\x{:02x}", c);
        else
            out += static_cast<char>(c);
        ++i;
    }
    out += i < text.size() ? "'..." : "'";
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
