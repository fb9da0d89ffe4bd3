// libFuzzer target: calibration JSON (docs/calibration-format.md). Any input must either
// parse into a calibration with at least one layer, every time positive and finite, or be
// rejected with ParseError; anything else is a bug. There is no writer in models/ to
// round-trip through.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fileio/parse_error.hpp"
#include "models/cost_model.hpp"

namespace {

bool positive_finite(double x) {
    return std::isfinite(x) && x > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipesim::models::Calibration calibration;
    try {
        calibration = pipesim::models::parse_calibration(text, "fuzz.json");
    } catch (const pipesim::fileio::ParseError&) {
        return 0;
    }
    if (calibration.layers.empty()) std::abort();
    for (const pipesim::models::CalibrationEntry& e : calibration.layers)
        if (!positive_finite(e.times.forward) || !positive_finite(e.times.backward_input) ||
            !positive_finite(e.times.backward_weight))
            std::abort();
    return 0;
}
