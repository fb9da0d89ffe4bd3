#include "analysis/published.hpp"

#include <algorithm>
#include <numeric>

namespace pipesim::analysis {

namespace {

double mean(const std::vector<double>& v) {
    return v.empty() ? 0.0
                     : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

std::optional<PublishedBubble> published_bubble(const Analysis& a, const PipelineSpec& spec) {
    const Schedule& s = a.schedule;
    const bool dualpipe = s.name == "dualpipe";
    if (!dualpipe && s.name != "dualpipe-v") return std::nullopt;
    PublishedBubble r;
    r.pp = dualpipe ? s.devices : 2 * s.devices;
    const double f = mean(a.costs.forward);
    const double b = mean(a.costs.backward_input);
    const double w = mean(a.costs.backward_weight);
    // The replay's all-to-all per chunk and the share of it a pair hides (ReplayOptions).
    const double all_to_all = spec.all_to_all > 0 ? spec.all_to_all / s.microbatch_chunks() : 0;
    r.forward = f + all_to_all;
    r.backward = b + w + all_to_all;
    r.weight = w;
    r.pair = r.forward + r.backward -
             spec.fb_overlap * (std::min(all_to_all, b + w) + std::min(all_to_all, f));
    r.bubble = (r.pp / 2.0 - 1) * (r.pair + r.backward - 3 * r.weight);
    // 3W above F&B + B: the formula gives a negative idle time, so it does not apply.
    if (r.bubble < 0) return std::nullopt;
    return r;
}

}  // namespace pipesim::analysis
