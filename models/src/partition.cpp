#include "models/partition.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace pipesim::models {

namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// The split: the least bottleneck by bisection (min_bottleneck), then a DP over "first i
// layers in j parts" pruned to the ends a part can have under it (most_even). Part j (0-based)
// may end at layer i only if the fixed counts allow it; `cost` includes the first/last extras.
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
        return span_cost(begin, end, part == 0, part == k_ - 1);
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

    // Smallest possible bottleneck (infinity if no split satisfies the constraints): the
    // smallest double at which a split fits, found by bisecting the bit patterns of the
    // non-negative doubles (ordered as the values are) with an O(n) test per step.
    double min_bottleneck() const {
        if (!fits(infinity)) return infinity;
        auto lo = std::bit_cast<std::uint64_t>(0.0);
        auto hi = std::bit_cast<std::uint64_t>(infinity);
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (fits(std::bit_cast<double>(mid)))
                hi = mid;
            else
                lo = mid + 1;
        }
        return std::bit_cast<double>(hi);
    }

    // Among splits whose parts all cost ≤ cap, the one with the least sum of squared costs: a
    // DP over (part, end) that visits only the ends part j can have — reachable from the left
    // by j + 1 parts under the cap and leaving what the later parts can cover — and for each
    // only the begins whose part stays under the cap. With a tight cap both ranges are narrow,
    // so layers² · parts (minutes for 10,000 layers) became about layers · parts.
    std::vector<int> most_even(double cap) const {
        const std::vector<std::pair<int, int>> ends = end_ranges(cap);
        std::vector<double> previous{0.0};  // the best sums of part j − 1's ends; before part 0,
        int previous_low = 0;               // one end at 0
        std::vector<std::vector<int>> from(static_cast<std::size_t>(k_));
        for (int j = 0; j < k_; ++j) {
            const auto [low, high] = ends[static_cast<std::size_t>(j)];
            const int previous_high = previous_low + static_cast<int>(previous.size()) - 1;
            std::vector<double> best(static_cast<std::size_t>(std::max(0, high - low + 1)),
                                     infinity);
            std::vector<int>& origin = from[static_cast<std::size_t>(j)];
            origin.assign(best.size(), -1);
            for (int end = low; end <= high; ++end)
                for (int begin = std::min(end, previous_high); begin >= previous_low; --begin) {
                    const double c = cost(j, begin, end);
                    if (c > cap) break;  // fewer layers never cost more
                    const double before = previous[static_cast<std::size_t>(begin - previous_low)];
                    if (before == infinity || !allowed(j, begin, end)) continue;
                    const double total = before + c * c;
                    auto& slot = best[static_cast<std::size_t>(end - low)];
                    if (total < slot) {
                        slot = total;
                        origin[static_cast<std::size_t>(end - low)] = begin;
                    }
                }
            previous = std::move(best);
            previous_low = low;
        }
        if (previous.size() != 1 || previous.front() == infinity)
            throw std::logic_error("partition: no split under the cap the bisection found");
        std::vector<int> counts(static_cast<std::size_t>(k_));
        for (int j = k_ - 1, end = n_; j >= 0; --j) {
            const int begin =
                from[static_cast<std::size_t>(j)]
                    [static_cast<std::size_t>(end - ends[static_cast<std::size_t>(j)].first)];
            counts[static_cast<std::size_t>(j)] = end - begin;
            end = begin;
        }
        return counts;
    }

  private:
    // The cost of [begin, end) as the first (or the last) of the parts it is placed among.
    double span_cost(int begin, int end, bool first, bool last) const {
        return prefix_[end] - prefix_[begin] + (first ? first_extra_ : 0.0) +
               (last ? last_extra_ : 0.0);
    }

    // Whether a split into k parts, each costing ≤ cap, exists. The fixed ends are placed;
    // with two or more free parts left, the last takes the longest suffix that fits (leaving a
    // layer), and the rest is split greedily from the left into the fewest parts. That count
    // is the least any split needs (a shorter prefix never needs more parts), and a split with
    // fewer parts than k can be cut further (no piece costs more than its part), as long as
    // every part can keep a layer.
    bool fits(double cap) const {
        if (k_ == 1) return allowed(0, 0, n_) && cost(0, 0, n_) <= cap;
        int begin = 0, end = n_, free_parts = k_;
        bool first_free = true, last_free = true;
        if (const int f = options_.first_stage_layers; f >= 0) {
            if (f > n_ || cost(0, 0, f) > cap) return false;
            begin = f;
            first_free = false;
            --free_parts;
        }
        if (const int l = options_.last_stage_layers; l >= 0) {
            if (l > n_ - begin || cost(k_ - 1, n_ - l, n_) > cap) return false;
            end = n_ - l;
            last_free = false;
            --free_parts;
        }
        if (free_parts == 0) return begin == end;
        if (end - begin < free_parts) return false;
        if (free_parts == 1) return span_cost(begin, end, first_free, last_free) <= cap;
        int last_begin = end - 1;
        if (span_cost(last_begin, end, false, last_free) > cap) return false;
        while (last_begin - 1 > begin && span_cost(last_begin - 1, end, false, last_free) <= cap)
            --last_begin;
        int parts = 1;
        for (int at = begin; at < last_begin; ++parts) {
            const bool first = first_free && at == begin;
            int stop = at + 1;
            if (span_cost(at, stop, first, false) > cap) return false;
            while (stop < last_begin && span_cost(at, stop + 1, first, false) <= cap)
                ++stop;
            at = stop;
        }
        return parts <= free_parts;
    }

    // For each part, the [lowest, highest] end it can have in a split under the cap: ends
    // reachable from the left (each earlier part at least its least layers, or as many as fit
    // under the cap) that leave the later parts their least layers and no more than they can
    // hold. The last part ends at n.
    std::vector<std::pair<int, int>> end_ranges(double cap) const {
        std::vector<std::pair<int, int>> ends(static_cast<std::size_t>(k_));
        const int first = options_.first_stage_layers;
        const int last = options_.last_stage_layers;
        // From the left: the least and the most layers the first j + 1 parts can hold.
        int lowest = 0, highest = 0;
        for (int j = 0; j < k_; ++j) {
            if (j == 0 && first >= 0) {
                lowest = highest = first;
            } else {
                lowest += j == k_ - 1 && last == 0 ? 0 : 1;
                int stop = highest;
                while (stop < n_ && cost(j, highest, stop + 1) <= cap)
                    ++stop;
                highest = stop;
            }
            ends[static_cast<std::size_t>(j)] = {lowest, highest};
        }
        // From the right: part j ends where part j + 1 begins; the later parts hold at least
        // one layer each (the last its fixed count) and at most as many as fit.
        int latest = n_, earliest = n_;
        for (int j = k_ - 1; j > 0; --j) {
            if (j == k_ - 1 && last >= 0) {
                latest = earliest = n_ - last;
            } else {
                latest -= 1;
                int start = earliest;
                while (start > 0 && cost(j, start - 1, earliest) <= cap)
                    --start;
                earliest = start;
            }
            auto& [low, high] = ends[static_cast<std::size_t>(j - 1)];
            low = std::max(low, earliest);
            high = std::min(high, latest);
        }
        ends.back() = {n_, n_};
        return ends;
    }

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
    // One stage is both the first and the last: it holds every layer.
    for (const int fixed : {options.first_stage_layers, options.last_stage_layers})
        if (parts == 1 && fixed > 0 && fixed != n)
            throw std::invalid_argument(
                fmt::format("a single stage holds all {} layers, not {}: fix the first and last "
                            "stages' layers with more than one stage",
                            n, fixed));
    if (parts - empty_ends > n)
        throw std::invalid_argument(fmt::format(
            "cannot split {} layers into {} stages: every stage needs at least one layer{}", n,
            parts, empty_ends > 0 ? " (but the ends fixed to 0)" : ""));
    for (double c : layer_costs)
        if (!(c >= 0) || !std::isfinite(c))
            throw std::invalid_argument(
                std::isinf(c) ? "a layer's time is beyond a double's range: the work is too "
                                "large for the rates given (--efficiency, a GPU file's rates)"
                              : "layer costs must be finite and ≥ 0");
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

std::vector<int> partition_layers_on_devices(std::span<const double> layer_costs,
                                             std::span<const int> stage_device, double first_extra,
                                             double last_extra, const PartitionOptions& options) {
    const int parts = static_cast<int>(stage_device.size());
    // What partition_layers refuses, it refuses here too (and with one group per device, or
    // no layers to place, its split is this one).
    std::vector<int> plain = partition_layers(layer_costs, parts, first_extra, last_extra, options);
    const int devices =
        stage_device.empty() ? 0 : *std::max_element(stage_device.begin(), stage_device.end()) + 1;
    if (devices >= parts || layer_costs.empty()) return plain;
    for (int d : stage_device)
        if (d < 0) throw std::invalid_argument("a group's device must be ≥ 0");
    for (double c : layer_costs)
        if (c != layer_costs.front())
            throw std::invalid_argument("a split by device needs layers of one cost");
    const int n = static_cast<int>(layer_costs.size());
    // Costs in units of one layer (a layer of no cost: every split loads the devices alike but
    // for the extras, and the even one is taken).
    const double layer = layer_costs.front() > 0 ? layer_costs.front() : 1.0;
    std::vector<double> extra(static_cast<std::size_t>(parts), 0.0);
    extra.front() += first_extra / layer;
    extra.back() += last_extra / layer;
    // Each group's fewest and most layers: a fixed end its count, every other group one or more.
    std::vector<int> least(static_cast<std::size_t>(parts), 1), most(least.size(), n);
    if (options.first_stage_layers >= 0) least.front() = most.front() = options.first_stage_layers;
    if (options.last_stage_layers >= 0) least.back() = most.back() = options.last_stage_layers;
    const auto at = [](auto& v, int i) -> auto& {
        return v[static_cast<std::size_t>(i)];
    };

    // The least possible load of the slowest device: layers added one at a time, each where the
    // device it loads stays lightest (water filling; optimal for a maximum of sums that each
    // grow by one layer's cost).
    std::vector<double> load(static_cast<std::size_t>(devices), 0.0);
    std::vector<int> room(static_cast<std::size_t>(devices), 0);
    int placed = 0;
    for (int j = 0; j < parts; ++j) {
        at(load, stage_device[j]) += at(least, j) + at(extra, j);
        at(room, stage_device[j]) += at(most, j) - at(least, j);
        placed += at(least, j);
    }
    std::vector<double> filled = load;
    std::vector<int> space = room;
    for (int left = n - placed; left > 0; --left) {
        int best = -1;
        for (int d = 0; d < devices; ++d)
            if (at(space, d) > 0 && (best < 0 || at(filled, d) < at(filled, best))) best = d;
        at(filled, best) += 1;
        --at(space, best);
    }
    const double slowest = *std::max_element(filled.begin(), filled.end());
    // Under that load, the groups: each layer to the group it leaves cheapest (then the one
    // whose device it leaves lightest), which minimizes the slowest group among the splits
    // whose devices stay within the load, and evens the rest.
    const double cap = slowest * (1 + 1e-12) + 1e-12;
    std::vector<int> counts = least;
    for (int left = n - placed; left > 0; --left) {
        int best = -1;
        double best_cost = 0, best_load = 0;
        for (int j = 0; j < parts; ++j) {
            const int d = stage_device[static_cast<std::size_t>(j)];
            if (at(counts, j) >= at(most, j) || at(load, d) + 1 > cap) continue;
            const double cost = at(counts, j) + 1 + at(extra, j);
            if (best < 0 || cost < best_cost || (cost == best_cost && at(load, d) < best_load)) {
                best = j;
                best_cost = cost;
                best_load = at(load, d);
            }
        }
        if (best < 0) throw std::logic_error("partition: no group under the devices' least load");
        ++at(counts, best);
        at(load, stage_device[static_cast<std::size_t>(best)]) += 1;
    }
    return counts;
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
