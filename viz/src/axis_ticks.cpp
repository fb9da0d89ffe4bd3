#include "viz/axis_ticks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pipesim::viz {

double tick_step(double span, int ticks) {
    if (!(span > 0) || ticks < 1) return 1.0;
    const double widest = std::numeric_limits<double>::max();
    span = std::min(span, widest);
    const double raw = span / ticks;
    // Below the normal range 10^k loses its digits and underflows to 0 at 1e-324: no round
    // step exists there (raw itself is 0 when span is a few of the smallest doubles).
    if (!(raw >= std::numeric_limits<double>::min())) return raw > 0 ? raw : span;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    for (double mantissa : {1.0, 2.0, 5.0, 10.0}) {
        const double step = mantissa * power;
        if (step >= raw && step <= widest) return step;
    }
    return raw;  // the next power of ten overflows
}

std::vector<double> axis_ticks(double lo, double hi, int ticks) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return {};
    if (lo == hi) return {lo};
    ticks = std::max(ticks, 1);
    const double span = hi - lo;  // may overflow to infinity; tick_step takes that
    const double step = tick_step(span, ticks);
    const double first = std::ceil(lo / step);
    const std::size_t most = 2 * static_cast<std::size_t>(ticks) + 2;
    std::vector<double> out;
    // By index, not by adding steps: a sum can stop growing (first beyond 2^53) or drift.
    for (std::size_t i = 0; i < most; ++i) {
        const double value = (first + static_cast<double>(i)) * step;
        if (!(value <= hi + step * 1e-9)) break;
        if (out.empty() || value > out.back()) out.push_back(value == 0 ? 0.0 : value);
    }
    return out;
}

}  // namespace pipesim::viz
