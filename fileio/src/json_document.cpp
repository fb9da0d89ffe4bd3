#include "fileio/json_document.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/memory_budget.hpp"
#include "strict_json_builder.hpp"

namespace pipesim::fileio {

namespace {

using Value = JsonDocument::Value;

// Longest quote of input in a message.
constexpr std::size_t excerpt_chars = 40;

// Splits an RFC 6901 pointer into unescaped tokens ("" → none).
std::vector<std::string> pointer_tokens(std::string_view pointer) {
    std::vector<std::string> tokens;
    std::size_t i = 0;
    while (i < pointer.size()) {
        ++i;  // the '/'
        std::string token;
        while (i < pointer.size() && pointer[i] != '/') {
            if (pointer[i] == '~' && i + 1 < pointer.size()) {
                token += pointer[i + 1] == '1' ? '/' : '~';
                i += 2;
            } else {
                token += pointer[i++];
            }
        }
        tokens.push_back(std::move(token));
    }
    return tokens;
}

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xc0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xe0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (code & 0x3f));
    }
}

// Walks the raw text of a document nlohmann has accepted (up to the point being located), to
// find where a value starts. Used only to build messages, so it favours simplicity; every
// access is bounds-checked so a truncated or odd text just ends the search.
class TextWalker {
  public:
    explicit TextWalker(std::string_view text) : t_(text) {}

    std::size_t pos = 0;

    bool at_end() const { return pos >= t_.size(); }
    char peek() const { return at_end() ? '\0' : t_[pos]; }

    void skip_space() {
        while (!at_end() &&
               (t_[pos] == ' ' || t_[pos] == '\t' || t_[pos] == '\n' || t_[pos] == '\r'))
            ++pos;
    }

    // At '"': returns the decoded string and moves past the closing quote.
    std::string read_string() {
        std::string out;
        ++pos;
        while (!at_end() && t_[pos] != '"') {
            if (t_[pos] == '\\')
                out += read_escape();
            else
                out += t_[pos++];
        }
        ++pos;
        return out;
    }

    // At a backslash: returns the bytes the escape stands for and moves past it.
    std::string read_escape() {
        std::string out;
        ++pos;
        const char c = peek();
        ++pos;
        switch (c) {
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                std::uint32_t code = read_hex4();
                if (code >= 0xd800 && code < 0xdc00 && peek() == '\\' && pos + 1 < t_.size() &&
                    t_[pos + 1] == 'u') {
                    pos += 2;
                    const std::uint32_t low = read_hex4();
                    code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                }
                append_utf8(out, code);
                break;
            }
            default:
                out += c;
                break;
        }
        return out;
    }

    // Skips one value of any kind (containers without recursion).
    void skip_value() {
        if (peek() == '"') {
            read_string();
            return;
        }
        if (peek() != '{' && peek() != '[') {
            while (!at_end() &&
                   std::string_view(",]} \t\r\n").find(t_[pos]) == std::string_view::npos)
                ++pos;
            return;
        }
        int depth = 0;
        while (!at_end()) {
            const char c = t_[pos];
            if (c == '"') {
                read_string();
                continue;
            }
            ++pos;
            if (c == '{' || c == '[') ++depth;
            if ((c == '}' || c == ']') && --depth == 0) return;
        }
    }

  private:
    std::uint32_t read_hex4() {
        std::uint32_t code = 0;
        for (int k = 0; k < 4 && !at_end(); ++k, ++pos) {
            const char c = t_[pos];
            code <<= 4;
            if (c >= '0' && c <= '9')
                code |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                code |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                code |= static_cast<std::uint32_t>(c - 'A' + 10);
        }
        return code;
    }

    std::string_view t_;
};

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 1, column 5:
// syntax error while parsing value - ..."; keep what follows the position.
std::string nlohmann_problem(const std::string& what) {
    std::string problem = what;
    const auto column = what.find("column ");
    if (column != std::string::npos) {
        const auto colon = what.find(": ", column);
        if (colon != std::string::npos) problem = what.substr(colon + 2);
    } else if (what.rfind("[json.exception.", 0) == 0) {
        const auto space = what.find("] ");
        if (space != std::string::npos) problem = what.substr(space + 2);
    }
    // Keep the message one short line: cut it, and escape what a terminal would interpret and
    // the file's own bytes past ASCII (nlohmann quotes the byte it stopped at, perhaps one
    // byte of a character, perhaps not text at all), as quote_excerpt() does.
    std::string shown;
    for (const char ch : problem.substr(0, 160)) {
        const auto c = static_cast<unsigned char>(ch);
        shown += (c < 0x20 || c >= 0x7f) ? fmt::format("\\x{:02x}", c) : std::string(1, ch);
    }
    if (problem.size() > 160) shown += "...";
    return "invalid JSON: " + shown;
}

}  // namespace

double JsonDocument::estimated_bytes(std::string_view text, int max_depth) {
    // What nlohmann's DOM allocates (its values are 16 bytes, Value::object_t is a vector of
    // key/value pairs): each container a heap block holding its vector, and the vector's
    // elements, with room to double as vectors grow; each string a heap block holding a
    // std::string, and its characters where they outgrow the string's own buffer (15 bytes);
    // numbers, booleans and null sit in their slot. Destroying the DOM moves the largest
    // container's values onto a stack, which must fit too (JsonDocument's text is already
    // held). Every malloc'd block costs its size rounded up to 16 bytes plus 16 of header;
    // the scan takes the raw length of a string for its decoded length, an upper bound.
    constexpr double block_overhead = 16;
    constexpr double small_string = 15;
    const auto block = [](double bytes) { return std::ceil(bytes / 16) * 16 + block_overhead; };
    const auto string_bytes = [&](double length) {
        return length > small_string ? block(length + 1) : 0.0;
    };
    constexpr double value_slot = sizeof(Value);
    constexpr double member_slot = sizeof(Value::object_t::value_type);
    struct Open {
        bool is_array = false;
        bool has_value = false;  // arrays: an element has begun
        double items = 0;        // array elements or object members
    };
    std::vector<Open> open;
    int untracked_depth = 0;  // levels past max_depth: the parser refuses those anyway
    double bytes = 0, largest = 0;
    const auto close = [&]() {
        if (untracked_depth > 0) {
            --untracked_depth;
            return;
        }
        if (open.empty()) return;
        const Open& o = open.back();
        const double items = o.is_array ? o.items + (o.has_value ? 1 : 0) : o.items;
        bytes += block(sizeof(std::vector<char>)) +
                 (items > 0 ? block(2 * items * (o.is_array ? value_slot : member_slot)) : 0);
        largest = std::max(largest, items);
        open.pop_back();
    };
    std::size_t i = 0;
    bool after_colon = false;  // the next string is a value, not a key
    while (i < text.size()) {
        const char c = text[i];
        if (c == '"') {
            const std::size_t begin = ++i;
            while (i < text.size() && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            const auto length = static_cast<double>(std::min(i, text.size()) - begin);
            ++i;
            const bool is_key =
                !open.empty() && !open.back().is_array && !after_colon && untracked_depth == 0;
            if (is_key) {
                bytes += string_bytes(length);
            } else {
                bytes += block(sizeof(std::string)) + string_bytes(length);
                if (!open.empty() && open.back().is_array) open.back().has_value = true;
            }
            after_colon = false;
            continue;
        }
        ++i;
        switch (c) {
            case '{':
            case '[':
                if (!open.empty() && open.back().is_array) open.back().has_value = true;
                if (static_cast<int>(open.size()) < max_depth)
                    open.push_back(Open{c == '[', false, 0});
                else
                    ++untracked_depth;
                after_colon = false;
                break;
            case '}':
            case ']':
                close();
                break;
            case ',':
                if (!open.empty() && untracked_depth == 0 && open.back().is_array)
                    ++open.back().items;
                break;
            case ':':
                if (!open.empty() && untracked_depth == 0 && !open.back().is_array)
                    ++open.back().items;
                after_colon = true;
                break;
            case ' ':
            case '\t':
            case '\n':
            case '\r':
                break;
            default:  // a number or literal
                if (!open.empty() && open.back().is_array) open.back().has_value = true;
                after_colon = false;
                break;
        }
    }
    while (!open.empty() || untracked_depth > 0)
        close();
    return bytes + largest * value_slot;
}

JsonDocument::JsonDocument(std::string file, std::string text, const JsonLimits& limits)
    : file_(std::move(file)), text_(std::move(text)) {
    // nlohmann's lexer takes a NUL byte for the end of the text and ignores what follows; no
    // JSON text has one (inside a string it is written \u0000).
    if (const std::size_t nul = text_.find('\0'); nul != std::string::npos)
        throw ParseError(file_, position_at(text_, nul),
                         "invalid JSON: a NUL byte (JSON text has none; is this a binary file?)");
    // Refused before parsing: nlohmann cannot unwind a DOM it ran out of memory building (its
    // destructor allocates, so std::bad_alloc there ends the process). Small documents skip
    // asking the system what is left: most files read are a few KB.
    constexpr double ask_from = 64.0 * 1024 * 1024;
    if (const double bytes = estimated_bytes(text_, limits.max_depth); bytes > ask_from)
        check_memory(bytes, memory_budget(), fmt::format("reading {}", file_));
    try {
        detail::StrictJsonBuilder builder(*this, limits, root_);
        Value::sax_parse(text_, &builder);
    } catch (const nlohmann::json::parse_error& e) {
        const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
        throw ParseError(file_, position_at(text_, byte), nlohmann_problem(e.what()));
    } catch (const nlohmann::json::exception& e) {
        // A number too large for a double ("number overflow parsing '1e400'") comes without a
        // position: the first place its text appears is where it is.
        const std::string what = e.what();
        TextPosition at;
        if (const auto open = what.find("parsing '"); open != std::string::npos) {
            const auto begin = open + 9, close = what.find('\'', begin);
            if (close != std::string::npos && close > begin)
                if (const auto found = text_.find(what.substr(begin, close - begin));
                    found != std::string::npos)
                    at = position_at(text_, found);
        }
        throw ParseError(file_, at, nlohmann_problem(what));
    }
}

std::size_t JsonDocument::locate(std::string_view pointer, bool key, bool last_occurrence) const {
    const std::vector<std::string> tokens = pointer_tokens(pointer);
    TextWalker w(text_);
    w.skip_space();
    std::size_t key_pos = w.pos;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
        const bool last_token = k + 1 == tokens.size();
        if (w.peek() == '{') {
            ++w.pos;
            std::size_t found = std::string::npos, found_key = std::string::npos;
            while (true) {
                w.skip_space();
                if (w.peek() != '"') break;
                const std::size_t this_key = w.pos;
                const bool match = w.read_string() == tokens[k];
                w.skip_space();
                if (w.peek() != ':') break;
                ++w.pos;
                w.skip_space();
                if (match) {
                    found = w.pos;
                    found_key = this_key;
                    if (!(last_token && last_occurrence)) break;
                }
                w.skip_value();
                w.skip_space();
                if (w.peek() != ',') break;
                ++w.pos;
            }
            if (found == std::string::npos) return text_.size();
            w.pos = found;
            key_pos = found_key;
        } else if (w.peek() == '[') {
            std::size_t index = 0;
            for (char c : tokens[k]) {
                if (c < '0' || c > '9' || index > (std::size_t{1} << 40)) return text_.size();
                index = index * 10 + static_cast<std::size_t>(c - '0');
            }
            ++w.pos;
            w.skip_space();
            for (std::size_t i = 0; i < index; ++i) {
                if (w.at_end() || w.peek() == ']') return text_.size();
                w.skip_value();
                w.skip_space();
                if (w.peek() != ',') return text_.size();
                ++w.pos;
                w.skip_space();
            }
            if (w.peek() == ']') return text_.size();
            key_pos = w.pos;
        } else {
            return text_.size();
        }
    }
    return key ? key_pos : w.pos;
}

std::size_t JsonDocument::offset_of(std::string_view pointer) const {
    return locate(pointer, false, false);
}

TextPosition JsonDocument::position_of(std::string_view pointer) const {
    const std::size_t offset = locate(pointer, false, false);
    return offset < text_.size() ? position_at(text_, offset) : TextPosition{};
}

TextPosition JsonDocument::key_position_of(std::string_view pointer, bool last_occurrence) const {
    const std::size_t offset = locate(pointer, true, last_occurrence);
    return offset < text_.size() ? position_at(text_, offset) : TextPosition{};
}

TextPosition JsonDocument::position_in_string(std::string_view pointer, std::size_t offset) const {
    std::size_t i = locate(pointer, false, false);
    if (i >= text_.size() || text_[i] != '"') return position_of(pointer);
    ++i;
    std::size_t decoded = 0;
    while (decoded < offset && i < text_.size() && text_[i] != '"') {
        if (text_[i] != '\\') {
            ++decoded;
            ++i;
        } else if (i + 1 < text_.size() && text_[i + 1] == 'u') {
            // \uXXXX is 1 to 3 UTF-8 bytes; a surrogate pair (two escapes) is 4.
            TextWalker w(text_);
            w.pos = i;
            std::string bytes = w.read_escape();
            decoded += bytes.size();
            i = w.pos;
        } else {
            ++decoded;
            i += 2;
        }
    }
    return position_at(text_, i);
}

ParseError JsonDocument::error_at(std::string_view pointer, std::string problem) const {
    return ParseError(file_, position_of(pointer), std::move(problem));
}

std::string JsonDocument::display_name(std::string_view pointer) {
    std::string name;
    for (const std::string& token : pointer_tokens(pointer)) {
        const bool index =
            !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
        if (index)
            name += "[" + token + "]";
        else
            name += (name.empty() ? "" : ".") + token;
    }
    return name.empty() ? "the document" : name;
}

const Value* JsonDocument::find(std::string_view pointer) const {
    const Value* value = &root_;
    for (const std::string& token : pointer_tokens(pointer)) {
        if (value->is_object()) {
            const auto it = value->find(token);
            if (it == value->end()) return nullptr;
            value = &*it;
        } else if (value->is_array()) {
            if (token.empty() || token.size() > 18 ||
                token.find_first_not_of("0123456789") != std::string::npos)
                return nullptr;
            const std::size_t index = std::stoull(token);
            if (index >= value->size()) return nullptr;
            value = &(*value)[index];
        } else {
            return nullptr;
        }
    }
    return value;
}

bool JsonDocument::has(std::string_view pointer) const {
    return find(pointer) != nullptr;
}

std::string JsonDocument::quoted(std::string_view pointer) const {
    const Value* found = find(pointer);
    if (found == nullptr) return "nothing";
    const Value& value = *found;
    if (value.is_number()) {
        const std::size_t start = offset_of(pointer);
        std::size_t end = start;
        while (end < text_.size() &&
               std::string_view("+-.0123456789eE").find(text_[end]) != std::string_view::npos)
            ++end;
        if (end > start)
            return quote_excerpt(std::string_view(text_).substr(start, end - start), excerpt_chars);
    }
    return quote_excerpt(value.dump(), excerpt_chars);
}

const Value& JsonDocument::at(std::string_view pointer, std::string_view expected) const {
    if (const Value* value = find(pointer)) return *value;
    const auto slash = pointer.rfind('/');
    const std::string_view parent = slash == std::string_view::npos ? "" : pointer.substr(0, slash);
    throw error_at(parent, fmt::format("missing {}: expected {}", display_name(pointer), expected));
}

const Value& JsonDocument::object(std::string_view pointer,
                                  std::initializer_list<std::string_view> known) const {
    return object(pointer, std::span<const std::string_view>(known.begin(), known.size()));
}

const Value& JsonDocument::object(std::string_view pointer,
                                  std::span<const std::string_view> known) const {
    const Value& value = at(pointer, "an object");
    if (!value.is_object())
        throw error_at(pointer, fmt::format("{}: expected an object, got {}", display_name(pointer),
                                            quoted(pointer)));
    for (const auto& [key, member] : value.items()) {
        bool ok = false;
        for (std::string_view k : known)
            ok = ok || k == key;
        if (ok) continue;
        std::string list;
        for (std::string_view k : known)
            list += (list.empty() ? "" : ", ") + std::string(k);
        throw ParseError(
            file_, key_position_of(json_pointer_child(pointer, key)),
            fmt::format("unknown key {} in {} (known: {})", quote_excerpt(key, excerpt_chars),
                        display_name(pointer), list));
    }
    return value;
}

const Value& JsonDocument::array(std::string_view pointer, std::size_t max_size) const {
    const Value& value = at(pointer, "an array");
    if (!value.is_array())
        throw error_at(pointer, fmt::format("{}: expected an array, got {}", display_name(pointer),
                                            quoted(pointer)));
    if (value.size() > max_size)
        throw error_at(pointer, fmt::format("{}: expected at most {} elements, got {}",
                                            display_name(pointer), max_size, value.size()));
    return value;
}

std::int64_t JsonDocument::integer(std::string_view pointer, std::int64_t min,
                                   std::int64_t max) const {
    const std::string expected = fmt::format("an integer in {}..{}", min, max);
    const Value& value = at(pointer, expected);
    bool in_range = false;
    std::int64_t result = 0;
    if (value.is_number_unsigned()) {
        const auto u = value.get<std::uint64_t>();
        in_range = u <= static_cast<std::uint64_t>(max) &&
                   (min <= 0 || u >= static_cast<std::uint64_t>(min));
        result = static_cast<std::int64_t>(u);
    } else if (value.is_number_integer()) {
        result = value.get<std::int64_t>();
        in_range = result >= min && result <= max;
    }
    if (!in_range)
        throw error_at(pointer, fmt::format("{}: expected {}, got {}", display_name(pointer),
                                            expected, quoted(pointer)));
    return result;
}

double JsonDocument::number(std::string_view pointer, double min, double max) const {
    const std::string expected = fmt::format("a number in {:g}..{:g}", min, max);
    const Value& value = at(pointer, expected);
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < min ||
        value.get<double>() > max)
        throw error_at(pointer, fmt::format("{}: expected {}, got {}", display_name(pointer),
                                            expected, quoted(pointer)));
    return value.get<double>();
}

const std::string& JsonDocument::string(std::string_view pointer, std::size_t max_size) const {
    const Value& value = at(pointer, "a string");
    if (!value.is_string())
        throw error_at(pointer, fmt::format("{}: expected a string, got {}", display_name(pointer),
                                            quoted(pointer)));
    const auto& s = value.get_ref<const std::string&>();
    if (s.size() > max_size)
        throw error_at(pointer, fmt::format("{}: expected a string of at most {} bytes, got {}",
                                            display_name(pointer), max_size, s.size()));
    return s;
}

const std::string& JsonDocument::text(std::string_view pointer, std::size_t max_size) const {
    const std::string& s = string(pointer, max_size);
    if (has_control(s))
        throw error_at(pointer, fmt::format("{}: expected text without control characters, got {}",
                                            display_name(pointer), quote_excerpt(s)));
    return s;
}

const std::string& JsonDocument::name(std::string_view pointer, std::size_t max_size) const {
    const std::string& s = text(pointer, max_size);
    // Spaces alone print as nothing too ("on 2 ×   , b=1"), and so do zero-width characters.
    if (prints_nothing(s))
        throw error_at(pointer, fmt::format("{}: expected a name, got {}", display_name(pointer),
                                            s.empty() ? std::string("\"\"") : quote_excerpt(s)));
    return s;
}

void JsonDocument::require_format(std::string_view tag, int version) const {
    if (!root_.is_object())
        throw error_at("", fmt::format("expected a JSON object with \"format\": \"{}\", got {}",
                                       tag, quoted("")));
    check_header(tag, version, /*required=*/true);
}

void JsonDocument::optional_format(std::string_view tag, int version) const {
    // Not an object: the caller's object("") check says what is expected.
    if (root_.is_object()) check_header(tag, version, /*required=*/false);
}

void JsonDocument::check_header(std::string_view tag, int version, bool required) const {
    if (required && root_.is_object() && !root_.contains("format"))
        throw error_at("", fmt::format("missing format: expected \"format\": \"{}\", "
                                       "\"version\": {}",
                                       tag, version));
    if ((required || root_.contains("format")) && string("/format", 64) != tag)
        throw error_at("/format",
                       fmt::format("format: expected \"{}\", got {}", tag, quoted("/format")));
    if ((required || root_.contains("version")) && integer("/version", 1, 1'000'000) != version)
        throw error_at("/version", fmt::format("version {} is not supported: this pipesim reads "
                                               "version {}",
                                               root_["version"].dump(), version));
}

std::string json_pointer_child(std::string_view pointer, std::string_view key) {
    std::string out(pointer);
    out += '/';
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

std::string json_pointer_child(std::string_view pointer, std::size_t index) {
    return fmt::format("{}/{}", pointer, index);
}

}  // namespace pipesim::fileio
