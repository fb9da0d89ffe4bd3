#pragma once
// Flags declared once, in a table per flag group: names, value name, help and how the value
// is read. `--help` is printed from the same table the parser uses, so they cannot drift.

#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "args.hpp"

namespace pipesim::cli {

/// One flag of a group whose values are read into a `Target`.
template <class Target>
struct FlagSpec {
    std::string_view short_name;  ///< e.g. "-p"; empty: none
    std::string_view long_name;   ///< e.g. "--stages"
    std::string_view value_name;  ///< e.g. "P"; empty: a switch without a value
    /// The help text; each '\n' starts a continuation line under the first.
    std::string_view help;
    /// Stores the value (empty for a switch). Throws UsageError naming `flag` for bad values.
    void (*read)(Target& target, const std::string& flag, const std::string& value);
};

/// The help line(s) of one flag, aligned like every other help line of the CLI.
std::string flag_help(std::string_view short_name, std::string_view long_name,
                      std::string_view value_name, std::string_view help);

/// The help lines of every flag of `table`, in table order.
template <class Target>
std::string flags_help(std::span<const FlagSpec<Target>> table) {
    std::string out;
    for (const FlagSpec<Target>& f : table)
        out += flag_help(f.short_name, f.long_name, f.value_name, f.help);
    return out;
}

/// If `flag` is in `table`, reads its value (unless a switch) into `target` and returns the
/// entry; nullptr otherwise.
template <class Target>
const FlagSpec<Target>* read_flag(std::span<const FlagSpec<Target>> table, const std::string& flag,
                                  ArgReader& reader, Target& target) {
    for (const FlagSpec<Target>& f : table) {
        if (flag != f.long_name && (f.short_name.empty() || flag != f.short_name)) continue;
        f.read(target, flag, f.value_name.empty() ? std::string() : reader.value(flag));
        return &f;
    }
    return nullptr;
}

}  // namespace pipesim::cli
