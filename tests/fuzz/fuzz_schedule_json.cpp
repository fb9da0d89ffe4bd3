// libFuzzer target: pipesim schedule JSON. Any input must either parse into a valid schedule
// that round-trips exactly, or be rejected with std::invalid_argument; anything else
// (a crash, a sanitizer report, a leak, another exception, a huge allocation) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "schedules/schedule_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipesim::Schedule schedule;
    try {
        schedule = pipesim::parse_schedule_json(text, "fuzz.json");
    } catch (const std::invalid_argument&) {
        return 0;
    }
    const std::string written = pipesim::schedule_to_json(schedule);
    if (!(pipesim::parse_schedule_json(written, "again.json") == schedule)) std::abort();
    return 0;
}
