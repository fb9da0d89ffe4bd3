#include "args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/parse_error.hpp"

namespace pipesim::cli {

bool ArgReader::next(std::string& flag) {
    if (has_pending_)
        throw UsageError(fmt::format("{} takes no value (got '{}')", flag, pending_value_));
    if (pos_ >= args_.size()) return false;
    flag = args_[pos_++];
    if (flag.rfind("--", 0) == 0) {
        const auto eq = flag.find('=');
        if (eq != std::string::npos) {
            pending_value_ = flag.substr(eq + 1);
            has_pending_ = true;
            flag.resize(eq);
        }
    }
    // A flag given twice: the second would silently win (or, for a switch, mean nothing).
    if (flag.size() > 1 && flag[0] == '-') {
        if (std::find(seen_.begin(), seen_.end(), flag) != seen_.end() &&
            std::find(repeatable_.begin(), repeatable_.end(), flag) == repeatable_.end())
            throw UsageError(fmt::format("{} is given more than once; give it once", flag));
        seen_.push_back(flag);
    }
    return true;
}

std::string ArgReader::value(const std::string& flag) {
    std::string text;
    if (has_pending_) {
        has_pending_ = false;
        text = std::move(pending_value_);
    } else {
        if (pos_ >= args_.size()) throw UsageError(fmt::format("{} needs a value", flag));
        text = args_[pos_++];
    }
    // No flag takes an empty value; an empty file name (--timeline "", an unset shell
    // variable) read as "not asked for" and silently wrote nothing.
    if (text.empty()) throw UsageError(fmt::format("{} needs a value, got an empty one", flag));
    return text;
}

void ArgReader::claim_once(std::string_view name, const std::string& given) {
    // The same spelling twice is next()'s refusal; here two names of one flag.
    for (const auto& [claimed, as_given] : claimed_)
        if (claimed == name)
            throw UsageError(
                fmt::format("{} and {} both set {}; give one of them", as_given, given, name));
    claimed_.emplace_back(std::string(name), given);
}

std::string quote_arg(std::string_view text) {
    return fileio::quote_excerpt(text, 80);
}

void check_output_files(const std::vector<std::pair<std::string_view, std::string>>& outputs,
                        const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    std::vector<std::pair<std::string_view, fs::path>> seen;
    for (const auto& [flag, file] : outputs) {
        if (file.empty()) continue;
        std::error_code ec;
        // An input already read, or one about to be: the output would replace it.
        const bool input =
            !fileio::is_standard_stream(file) &&
            (fileio::is_input(file) ||
             std::any_of(inputs.begin(), inputs.end(), [&](const std::string& in) {
                 return !fileio::is_standard_stream(in) && fs::equivalent(in, file, ec);
             }));
        if (input)
            throw UsageError(
                fmt::format("{} {} is an input of this run, which writing it would "
                            "replace: give another file",
                            flag, quote_arg(file)));
        if (file == "-") {  // standard output: a second '-' is refused below
            for (const auto& [other_flag, other] : seen)
                if (other == "-")
                    throw UsageError(fmt::format(
                        "{} and {} both write to standard output ('-'): give one a file",
                        other_flag, flag));
            seen.emplace_back(flag, "-");
            continue;
        }
        // The messages the writer would give, before anything is written.
        try {
            fileio::check_writable_path(file);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        fs::path path = fs::weakly_canonical(fs::absolute(file, ec), ec);
        if (ec) path = fs::path(file).lexically_normal();
        for (const auto& [other_flag, other] : seen)
            if (other == path)
                throw UsageError(fmt::format("{} and {} both write {}: give each its own file",
                                             other_flag, flag, quote_arg(file)));
        seen.emplace_back(flag, std::move(path));
    }
}

int parse_int(const std::string& flag, const std::string& text, int min, int max) {
    int value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    // An integer too large for an int is out of range, as a smaller one would be.
    if (!text.empty() && ec == std::errc::result_out_of_range && ptr == end)
        throw UsageError(
            fmt::format("{}: must be in {}..{}, got {}", flag, min, max, quote_arg(text)));
    if (text.empty() || ec != std::errc() || ptr != end)
        throw UsageError(fmt::format("{}: expected an integer, got {}", flag, quote_arg(text)));
    if (value < min || value > max)
        throw UsageError(fmt::format("{}: must be in {}..{}, got {}", flag, min, max, value));
    return value;
}

namespace {

// A decimal number ("2", "-0.5", "1e-3", "+4"), the whole text: not strtod's hexadecimal
// floats ("0x1p3"), leading spaces, "inf" or "nan". One past a double's range is ±HUGE_VAL, for
// the caller's range message; one below it rounds to 0 or the nearest subnormal, as Python and
// the JSON files read it ("1e-400" was "expected a number").
std::optional<double> decimal_number(std::string_view text) {
    if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
    if (text.empty() || ptr != end) return std::nullopt;
    if (ec == std::errc::result_out_of_range)
        value = std::strtod(std::string(text).c_str(), nullptr);  // the same digits, rounded
    else if (ec != std::errc() || !std::isfinite(value))
        return std::nullopt;
    return value == 0 ? 0.0 : value;  // "-0" is 0 (printed "-0" otherwise)
}

}  // namespace

double parse_number(const std::string& flag, const std::string& text, double min, double max) {
    const std::optional<double> number = decimal_number(text);
    const double value = number.value_or(0);
    if (!number)
        throw UsageError(fmt::format("{}: expected a number, got {}", flag, quote_arg(text)));
    if (value < min) throw UsageError(fmt::format("{}: must be ≥ {}, got {}", flag, min, text));
    if (value > max) throw UsageError(fmt::format("{}: must be ≤ {:g}, got {}", flag, max, text));
    return value;
}

double parse_positive(const std::string& flag, const std::string& text) {
    const double value = parse_number(flag, text, -HUGE_VAL);
    if (!(value > 0 && std::isfinite(value)))
        throw UsageError(fmt::format("{}: must be > 0, got {}", flag, text));
    return value;
}

std::vector<std::vector<double>> parse_cost_triples(const std::string& flag,
                                                    const std::string& text) {
    std::vector<std::vector<double>> triples;
    std::size_t start = 0;
    while (true) {
        const auto colon = text.find(':', start);
        const std::string part =
            text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        std::vector<double> triple;
        std::size_t pos = 0;
        while (true) {
            const auto comma = part.find(',', pos);
            const std::string number =
                part.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            const std::optional<double> parsed = decimal_number(number);
            const double value = parsed.value_or(0);
            if (!parsed || value < 0 || value > 1e30)
                throw UsageError(fmt::format(
                    "{}: expected numbers F,B,W in 0..1e30 (triples separated by ':'), got "
                    "{} in {}",
                    flag, quote_arg(number), quote_arg(text)));
            triple.push_back(value);
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
        if (triple.size() != 3)
            throw UsageError(
                fmt::format("{}: expected three numbers F,B,W, got {}", flag, quote_arg(part)));
        triples.push_back(std::move(triple));
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return triples;
}

}  // namespace pipesim::cli
