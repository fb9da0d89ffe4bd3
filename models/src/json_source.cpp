#include "json_source.hpp"

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim::models::detail {

namespace {

// Walks syntactically valid JSON and records the byte offset of every value by JSON pointer.
class PositionIndexer {
  public:
    PositionIndexer(std::string_view text, std::map<std::string, std::size_t>& out)
        : text_(text), out_(out) {}

    void run() { value(""); }

  private:
    void skip_space() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
    }

    std::string string_body() {  // at the opening quote; returns the raw contents
        std::string s;
        ++pos_;
        while (pos_ < text_.size() && text_[pos_] != '"') {
            if (text_[pos_] == '\\') s += text_[pos_++];
            s += text_[pos_++];
        }
        ++pos_;
        return s;
    }

    static std::string escape_pointer(const std::string& key) {
        std::string out;
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

    void value(const std::string& pointer) {
        skip_space();
        if (pos_ >= text_.size()) return;
        out_[pointer] = pos_;
        const char c = text_[pos_];
        if (c == '{') {
            ++pos_;
            skip_space();
            while (pos_ < text_.size() && text_[pos_] != '}') {
                const std::string key = string_body();
                skip_space();
                ++pos_;  // ':'
                value(pointer + "/" + escape_pointer(key));
                skip_space();
                if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
                skip_space();
            }
            ++pos_;
        } else if (c == '[') {
            ++pos_;
            skip_space();
            for (int i = 0; pos_ < text_.size() && text_[pos_] != ']'; ++i) {
                value(pointer + "/" + std::to_string(i));
                skip_space();
                if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
                skip_space();
            }
            ++pos_;
        } else if (c == '"') {
            string_body();
        } else {
            while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' &&
                   text_[pos_] != ']' && !std::isspace(static_cast<unsigned char>(text_[pos_])))
                ++pos_;
        }
    }

    std::string_view text_;
    std::map<std::string, std::size_t>& out_;
    std::size_t pos_ = 0;
};

}  // namespace

std::string line_column(std::string_view text, std::size_t offset) {
    int line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return fmt::format("{}:{}", line, column);
}

JsonSource::JsonSource(std::string_view text, std::string source)
    : text_(text), source_(std::move(source)) {
    try {
        root_ = nlohmann::json::parse(text_);
    } catch (const nlohmann::json::parse_error& e) {
        // e.what() is "[json.exception.parse_error.N] parse error at line L, column C: why".
        std::string why = e.what();
        const auto column = why.find("column ");
        const auto colon = why.find(": ", column == std::string::npos ? 0 : column);
        if (colon != std::string::npos) why = why.substr(colon + 2);
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        throw std::invalid_argument(
            fmt::format("{}:{}: invalid JSON: {}", source_, line_column(text_, offset), why));
    }
    PositionIndexer(text_, offsets_).run();
}

std::string JsonSource::where(const std::string& pointer) const {
    std::string p = pointer;
    while (true) {
        const auto it = offsets_.find(p);
        if (it != offsets_.end())
            return fmt::format("{}:{}", source_, line_column(text_, it->second));
        if (p.empty()) return source_;
        p.resize(p.rfind('/'));
    }
}

void JsonSource::fail(const std::string& pointer, const std::string& message) const {
    throw std::invalid_argument(fmt::format("{}: {}", where(pointer), message));
}

std::string read_text_file(const std::string& path, std::string_view what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument(fmt::format("cannot read {} file '{}'", what, path));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

}  // namespace pipesim::models::detail
