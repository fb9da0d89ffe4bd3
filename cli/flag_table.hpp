#pragma once
// Flags declared once, in a table per flag group: names, value name, help and how the value
// is read. `--help` is printed from the same table the parser uses, so they cannot drift.

#include <array>
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
    /// Whether the flag may be given more than once (each value read in turn); otherwise a
    /// second occurrence is refused.
    bool repeatable = false;
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
/// entry; nullptr otherwise. Throws UsageError for a second occurrence of a flag that is not
/// repeatable (under either of its names).
template <class Target>
const FlagSpec<Target>* read_flag(std::span<const FlagSpec<Target>> table, const std::string& flag,
                                  ArgReader& reader, Target& target) {
    for (const FlagSpec<Target>& f : table) {
        if (flag != f.long_name && (f.short_name.empty() || flag != f.short_name)) continue;
        if (!f.repeatable) reader.claim_once(f.long_name, flag);
        f.read(target, flag, f.value_name.empty() ? std::string() : reader.value(flag));
        return &f;
    }
    return nullptr;
}

/// flags_help() and read_flag() for a table held in a std::array.
template <class Target, std::size_t N>
std::string flags_help(const std::array<FlagSpec<Target>, N>& table) {
    return flags_help(std::span<const FlagSpec<Target>>(table));
}
template <class Target, std::size_t N>
bool read_flag(const std::array<FlagSpec<Target>, N>& table, const std::string& flag,
               ArgReader& reader, Target& target) {
    return read_flag(std::span<const FlagSpec<Target>>(table), flag, reader, target) != nullptr;
}

}  // namespace pipesim::cli
