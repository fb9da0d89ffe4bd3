// libFuzzer target: PyTorch pipelining CSV. Any input must either import into a valid
// schedule whose compute-only export imports back to the same schedule, or be rejected with
// std::invalid_argument; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "schedules/pytorch_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipesim::PytorchCsvImport imported;
    try {
        imported = pipesim::parse_pytorch_csv(text, "fuzz.csv");
    } catch (const std::invalid_argument&) {
        return 0;
    }
    const std::string written = pipesim::schedule_to_pytorch_csv(imported.schedule);
    const pipesim::PytorchCsvImport again = pipesim::parse_pytorch_csv(written, "again.csv");
    if (!(again.schedule == imported.schedule) || again.placement != imported.placement)
        std::abort();
    return 0;
}
