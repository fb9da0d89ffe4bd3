// Interleaved 1F1B (Narayanan et al., SC21), in Megatron-LM's order.
//
// Microbatches are taken in groups of G (default p). Within a group the forward order is
// chunk-major: chunk 0 of every microbatch of the group, then chunk 1, ...; the last group
// takes all remaining microbatches. Backwards follow the same order with chunks reversed.
// Device r runs min(2(p−1−r) + (v−1)·G, m·v) warm-up forwards, then alternates one forward
// and one fused backward, then drains. With m a multiple of p and G = p the bubble is
// (p−1)(F+B+W)/v for uniform stages and no communication.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "generators.hpp"
#include "schedules/placement.hpp"

namespace pipesim::detail {

namespace {

// (microbatch, chunk) in the order a device runs its forwards.
std::vector<std::pair<int, int>> forward_order(int microbatches, int chunks, int group) {
    std::vector<std::pair<int, int>> order;
    order.reserve(static_cast<std::size_t>(microbatches * chunks));
    for (int first = 0; first < microbatches; first += group) {
        const int last = (first + group >= microbatches) ? microbatches : first + group;
        for (int chunk = 0; chunk < chunks; ++chunk)
            for (int mb = first; mb < last; ++mb)
                order.emplace_back(mb, chunk);
        if (last == microbatches) break;
    }
    return order;
}

}  // namespace

Schedule generate_interleaved_1f1b(const GeneratorOptions& o) {
    const int p = o.devices;
    const int m = o.microbatches;
    const int v = o.chunks;
    const int group = o.group_size > 0 ? o.group_size : p;
    Schedule s = make_empty_schedule("interleaved-1f1b", p, m, v, looped_placement(p, v));
    const auto order = forward_order(m, v, group);
    const int total = m * v;
    for (int r = 0; r < p; ++r) {
        auto& ops = s.device_ops[r];
        ops.reserve(static_cast<std::size_t>(2 * total));
        auto forward = [&](int k) {
            const auto [mb, chunk] = order[k];
            ops.push_back({Pass::F, mb, chunk * p + r});
        };
        auto backward = [&](int k) {
            const auto [mb, chunk] = order[k];
            ops.push_back({Pass::BW, mb, (v - 1 - chunk) * p + r});
        };
        const int warmup = std::min(2 * (p - 1 - r) + (v - 1) * group, total);
        for (int k = 0; k < warmup; ++k)
            forward(k);
        for (int k = 0; k < total; ++k) {
            if (warmup + k < total) forward(warmup + k);
            backward(k);
        }
    }
    return s;
}

// Groups smaller than p, and a last group smaller than the others, can leave this order
// deadlocked (p = 5: m = 7, 12, 17, …; p = 4 with groups of 2 from m = 4 on); m a multiple
// of a group size of at least p never does (Megatron-LM takes a group size from p to m, and a
// last group of none or at least p).
std::string interleaved_1f1b_shape_problem(const GeneratorOptions& o) {
    const int p = o.devices, m = o.microbatches;
    const int group = o.group_size > 0 ? o.group_size : p;
    if (group < p)
        return fmt::format(
            "microbatch groups of {}, fewer than p = {}, leave Megatron-LM's "
            "order deadlocked here: use --group-size {} or more",
            group, p, p);
    if (m % group != 0) {
        const int below = m / group * group, above = below + group;
        return fmt::format(
            "the last microbatch group holds {} of a group's {} (m = {} is not a "
            "multiple of the group size), which leaves Megatron-LM's order "
            "deadlocked here: use m = {}",
            m % group, group, m,
            below > 0 ? fmt::format("{} or {}", below, above) : fmt::format("{}", above));
    }
    return "";
}

}  // namespace pipesim::detail
