#pragma once
// Command-line reading shared by the subcommands. Every error is a UsageError whose message
// names the flag and what was expected; main() turns it into exit code 2.

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipesim::cli {

class UsageError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

/// Walks a subcommand's arguments. Accepts "--flag value" and "--flag=value".
class ArgReader {
  public:
    explicit ArgReader(std::vector<std::string> args) : args_(std::move(args)) {}

    /// Moves to the next argument; false at the end. `flag` gets "--costs" for "--costs=1,2,3".
    /// A flag given a second time is a UsageError, unless `repeatable` names it (e.g.
    /// --straggler).
    bool next(std::string& flag);
    /// Flags that may be given more than once (each adds a value).
    void allow_repeats(std::vector<std::string> flags) { repeatable_ = std::move(flags); }
    /// The value of the current flag (from "=value" or the next argument); never empty (an
    /// empty one is a UsageError).
    std::string value(const std::string& flag);
    /// Records that the flag called `name` (its long name) was given as `given`; throws
    /// UsageError if it was given before.
    void claim_once(std::string_view name, const std::string& given);

  private:
    std::vector<std::string> args_;
    std::size_t pos_ = 0;
    std::string pending_value_;
    bool has_pending_ = false;
    std::vector<std::pair<std::string, std::string>> claimed_;  // (name, as given)
    std::vector<std::string> seen_, repeatable_;
};

/// `text` quoted for a message: control and non-ASCII bytes escaped, at most 80 characters
/// (then "..."), so hostile arguments cannot reach the terminal raw.
std::string quote_arg(std::string_view text);

/// Throws UsageError if two of the (flag, file) outputs name the same file (after resolving
/// "." and ".."), or one cannot be written where it is named: its folder does not exist, or it
/// is a folder. Checked before any work, so that a run that fails writes none of its outputs.
/// Empty files are not asked for and skipped. An output that names an input (a file read so
/// far, or one of `inputs`, however named) is refused: it would replace what the run reads.
void check_output_files(const std::vector<std::pair<std::string_view, std::string>>& outputs,
                        const std::vector<std::string>& inputs = {});

/// What `parse(text)` returns, its std::invalid_argument turned into a UsageError whose
/// message names `flag` ("--flag: what was expected, got 'x'").
template <class Parse>
auto parse_flag_value(const std::string& flag, const std::string& text, Parse parse)
    -> decltype(parse(text)) {
    try {
        return parse(text);
    } catch (const std::invalid_argument& e) {
        throw UsageError(flag + ": " + e.what());
    }
}

/// Integer in [min, max], the whole text a number.
int parse_int(const std::string& flag, const std::string& text, int min, int max);
/// Finite number in [min, max], the whole text a number.
double parse_number(const std::string& flag, const std::string& text, double min,
                    double max = 1e30);
/// Finite number > 0, the whole text a number.
double parse_positive(const std::string& flag, const std::string& text);
/// "F,B,W" or "F,B,W:F,B,W:..." → triples of numbers in 0..1e30.
std::vector<std::vector<double>> parse_cost_triples(const std::string& flag,
                                                    const std::string& text);

}  // namespace pipesim::cli
