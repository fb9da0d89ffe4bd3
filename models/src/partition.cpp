#include "models/partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace pipesim::models {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// The DP over "first i layers in j parts". Part j (0-based) may end at layer i only if the
// fixed counts allow it; `cost` includes the first/last extras.
class Splitter {
  public:
    Splitter(std::span<const double> layer_costs, int parts, double first_extra, double last_extra,
             const PartitionOptions& options)
        : n_(static_cast<int>(layer_costs.size())),
          k_(parts),
          first_extra_(first_extra),
          last_extra_(last_extra),
          options_(options),
          prefix_(layer_costs.size() + 1, 0.0) {
        for (std::size_t i = 0; i < layer_costs.size(); ++i)
            prefix_[i + 1] = prefix_[i] + layer_costs[i];
    }

    double cost(int part, int begin, int end) const {
        return prefix_[end] - prefix_[begin] + (part == 0 ? first_extra_ : 0.0) +
               (part == k_ - 1 ? last_extra_ : 0.0);
    }

    // A part holds at least one layer, except the first or last part when its count is fixed
    // to 0 (a stage of only the embedding or only the head).
    bool allowed(int part, int begin, int end) const {
        const int count = end - begin;
        const int first = part == 0 ? options_.first_stage_layers : -1;
        const int last = part == k_ - 1 ? options_.last_stage_layers : -1;
        if (first >= 0 && count != first) return false;
        if (last >= 0 && count != last) return false;
        return count >= 1 || (count == 0 && (first == 0 || last == 0));
    }

    // Smallest possible bottleneck (infinity if no split satisfies the constraints).
    double min_bottleneck() const {
        std::vector<double> prev(n_ + 1, infinity), next(n_ + 1, infinity);
        prev[0] = 0;
        for (int j = 0; j < k_; ++j) {
            std::fill(next.begin(), next.end(), infinity);
            for (int end = 0; end <= n_; ++end)
                for (int begin = 0; begin <= end; ++begin)
                    if (prev[begin] < infinity && allowed(j, begin, end))
                        next[end] = std::min(next[end], std::max(prev[begin], cost(j, begin, end)));
            std::swap(prev, next);
        }
        return prev[n_];
    }

    // Among splits whose parts all cost ≤ cap, the one with the least sum of squared costs.
    std::vector<int> most_even(double cap) const {
        const auto width = static_cast<std::size_t>(n_ + 1);
        std::vector<double> best((k_ + 1) * width, infinity);
        std::vector<int> from((k_ + 1) * width, -1);
        best[0] = 0;
        for (int j = 0; j < k_; ++j)
            for (int end = 0; end <= n_; ++end)
                for (int begin = 0; begin <= end; ++begin) {
                    const double before = best[j * width + begin];
                    if (before == infinity || !allowed(j, begin, end)) continue;
                    const double c = cost(j, begin, end);
                    if (c > cap) continue;
                    const double total = before + c * c;
                    if (total < best[(j + 1) * width + end]) {
                        best[(j + 1) * width + end] = total;
                        from[(j + 1) * width + end] = begin;
                    }
                }
        std::vector<int> counts(k_);
        for (int j = k_, end = n_; j > 0; --j) {
            const int begin = from[j * width + end];
            counts[j - 1] = end - begin;
            end = begin;
        }
        return counts;
    }

  private:
    int n_, k_;
    double first_extra_, last_extra_;
    PartitionOptions options_;
    std::vector<double> prefix_;
};

}  // namespace

std::vector<int> partition_layers(std::span<const double> layer_costs, int parts,
                                  double first_extra, double last_extra,
                                  const PartitionOptions& options) {
    const int n = static_cast<int>(layer_costs.size());
    if (parts < 1) throw std::invalid_argument(fmt::format("cannot split into {} stages", parts));
    // Only the ends may be empty, and only when their count is fixed to 0.
    const int empty_ends =
        (options.first_stage_layers == 0 ? 1 : 0) + (options.last_stage_layers == 0 ? 1 : 0);
    if (parts == 1 && empty_ends > 0)
        throw std::invalid_argument("a single stage cannot have 0 layers");
    if (parts - empty_ends > n)
        throw std::invalid_argument(fmt::format(
            "cannot split {} layers into {} stages: every stage needs at least one layer{}", n,
            parts, empty_ends > 0 ? " (but the ends fixed to 0)" : ""));
    for (double c : layer_costs)
        if (!(c >= 0) || !std::isfinite(c))
            throw std::invalid_argument("layer costs must be finite and ≥ 0");
    if (!(first_extra >= 0) || !(last_extra >= 0))
        throw std::invalid_argument("first/last stage extra costs must be ≥ 0");
    for (int fixed : {options.first_stage_layers, options.last_stage_layers})
        if (fixed < -1)
            throw std::invalid_argument(
                fmt::format("a fixed first/last stage layer count must be ≥ 0, got {}", fixed));

    // The split does not depend on the unit: costs scaled to at most 1, so that the sums of
    // squares most_even() compares stay finite whatever the unit (1e177 s per layer, from a
    // tiny --efficiency, once overflowed and put every layer on the last stage).
    double largest = std::max(first_extra, last_extra);
    for (double c : layer_costs)
        largest = std::max(largest, c);
    const double scale = largest > 0 ? largest : 1.0;
    std::vector<double> scaled(layer_costs.begin(), layer_costs.end());
    for (double& c : scaled)
        c /= scale;
    const Splitter splitter(scaled, parts, first_extra / scale, last_extra / scale, options);
    const double bottleneck = splitter.min_bottleneck();
    if (bottleneck == infinity)
        throw std::invalid_argument(fmt::format(
            "cannot split {} layers into {} stages with {} layers on the first stage and {} on "
            "the last",
            n, parts,
            options.first_stage_layers < 0 ? std::string("any number of")
                                           : std::to_string(options.first_stage_layers),
            options.last_stage_layers < 0 ? std::string("any number")
                                          : std::to_string(options.last_stage_layers)));
    // A relative tolerance so that sums in another order still pass the cap.
    return splitter.most_even(bottleneck * (1 + 1e-12) + 1e-300);
}

double partition_bottleneck(std::span<const double> layer_costs, std::span<const int> counts,
                            double first_extra, double last_extra) {
    double worst = 0;
    std::size_t layer = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) {
        double c = (j == 0 ? first_extra : 0.0) + (j + 1 == counts.size() ? last_extra : 0.0);
        for (int i = 0; i < counts[j]; ++i)
            c += layer_costs[layer++];
        worst = std::max(worst, c);
    }
    return worst;
}

}  // namespace pipesim::models
