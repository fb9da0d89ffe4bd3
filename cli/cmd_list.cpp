#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "schedules/registry.hpp"

namespace pipesim::cli {

int run_list(const std::vector<std::string>& args) {
    if (!args.empty()) throw UsageError(fmt::format("list takes no arguments, got '{}'", args[0]));
    fmt::print("schedules:\n");
    for (const ScheduleGenerator& g : schedule_generators()) {
        const std::string chunks =
            g.min_chunks == g.max_chunks
                ? fmt::format("v={}", g.min_chunks)
                : fmt::format("v≥{} (default {})", g.min_chunks, g.default_chunks);
        fmt::print("  {:<18} {:<16} {}\n", g.name, chunks, g.description);
    }
    return 0;
}

}  // namespace pipesim::cli
