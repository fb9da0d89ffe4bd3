// libFuzzer target: saved timeline JSON (docs/timeline-format.md). Any input must either
// parse, or be rejected with ParseError (NotATimeline included); anything else is a bug.
// What parses must round-trip: timeline_json() of it reads back to the same timeline and
// memory model.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "fileio/parse_error.hpp"
#include "viz/timeline_file.hpp"

namespace {

bool same_memory(const std::optional<pipesim::MemoryModel>& a,
                 const std::optional<pipesim::MemoryModel>& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a || (a->activation == b->activation && a->held_for_w == b->held_for_w);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    pipesim::viz::SavedTimeline saved;
    try {
        saved = pipesim::viz::parse_timeline_json(std::move(text), "fuzz.json");
    } catch (const pipesim::fileio::ParseError&) {
        return 0;
    }
    const std::string written =
        pipesim::viz::timeline_json(saved.timeline, saved.memory ? &*saved.memory : nullptr);
    const pipesim::viz::SavedTimeline again =
        pipesim::viz::parse_timeline_json(written, "again.json");
    if (!(again.timeline == saved.timeline) || !same_memory(again.memory, saved.memory))
        std::abort();
    return 0;
}
