#include "flag_table.hpp"

namespace pipesim::cli {

std::string flag_help(std::string_view short_name, std::string_view long_name,
                      std::string_view value_name, std::string_view help) {
    constexpr std::size_t help_column = 24;
    std::string names = "  ";
    if (!short_name.empty()) names += fmt::format("{}, ", short_name);
    names += long_name;
    if (!value_name.empty()) names += fmt::format(" {}", value_name);
    names += names.size() + 2 <= help_column ? std::string(help_column - names.size(), ' ') : "  ";
    std::string out;
    std::size_t start = 0;
    while (start <= help.size()) {
        const auto end = help.find('\n', start);
        const std::string_view line =
            help.substr(start, end == std::string_view::npos ? end : end - start);
        out += fmt::format("{}{}\n", start == 0 ? names : std::string(help_column, ' '), line);
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return out;
}

}  // namespace pipesim::cli
