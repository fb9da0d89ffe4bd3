// libFuzzer target: model JSON (docs/model-format.md). Any input must either parse into a
// model whose parameter count is finite and positive (ModelLimits keeps every derived count
// finite), or be rejected with ParseError; anything else is a bug. There is no model writer,
// so nothing to round-trip.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fileio/parse_error.hpp"
#include "models/model_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pipesim::models::TransformerConfig config;
    try {
        config = pipesim::models::parse_model_json(text, "fuzz.json");
    } catch (const pipesim::fileio::ParseError&) {
        return 0;
    }
    const double params = pipesim::models::total_params(config);
    if (!(std::isfinite(params) && params > 0)) std::abort();
    return 0;
}
