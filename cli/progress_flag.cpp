#include "progress_flag.hpp"

#include <fmt/format.h>

#include "args.hpp"

namespace pipesim::cli {

sweep::ProgressStyle parse_progress(const std::string& flag, const std::string& text) {
    if (text == "auto") return sweep::ProgressStyle::automatic;
    if (text == "bar") return sweep::ProgressStyle::bar;
    if (text == "lines") return sweep::ProgressStyle::lines;
    if (text == "none") return sweep::ProgressStyle::none;
    throw UsageError(fmt::format("{}: expected auto, bar, lines or none, got '{}'", flag, text));
}

}  // namespace pipesim::cli
