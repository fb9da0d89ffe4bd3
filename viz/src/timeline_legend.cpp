#include "timeline_legend.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "style.hpp"

namespace pipesim::viz::detail {

namespace {

constexpr double swatch_width = 16;
constexpr double swatch_height = 10;
constexpr double text_gap = 4;
constexpr double entry_gap = 16;
constexpr double line_height = 16;
constexpr double legend_font = 9;
constexpr const char* legend_text = "#333333";

double entry_width(const LegendEntry& e) {
    return swatch_width + text_gap + XdotCanvas::text_width(legend_font, e.text);
}

// Where each entry's swatch starts, relative to the legend's top left, lines wrapped at width.
std::vector<Point> flow(const std::vector<LegendEntry>& entries, double width) {
    std::vector<Point> at;
    double x = 0, line = 0;
    for (const LegendEntry& e : entries) {
        if (x > 0 && x + entry_width(e) > width) {
            x = 0;
            ++line;
        }
        at.push_back({x, line * line_height});
        x += entry_width(e) + entry_gap;
    }
    return at;
}

const char* pass_meaning(Pass pass) {
    switch (pass) {
        case Pass::F:
            return "F forward";
        case Pass::B:
            return "B input gradient";
        case Pass::W:
            return "W weight gradient";
        case Pass::BW:
            return "BW full backward";
    }
    return "";
}

}  // namespace

bool reverse_direction(const Timeline& t, int microbatch) {
    const auto mb = static_cast<std::size_t>(microbatch);
    if (mb >= t.microbatch_stages.size()) return false;
    const StageRange r = t.microbatch_stages[mb];
    const auto device = [&](int stage) {
        return stage >= 0 && static_cast<std::size_t>(stage) < t.stage_device.size()
                   ? t.stage_device[static_cast<std::size_t>(stage)]
                   : 0;
    };
    return device(r.first) > device(r.last);
}

std::vector<ShownCollective> shown_data_parallel(const Timeline& t) {
    // Shorter than this part of the run, a stretch is a sliver at a box's edge: a reduction
    // the last backwards hide whole drew a legend entry for nothing on the picture.
    constexpr double visible = 2e-3;
    const double least = visible * t.last_end();
    std::vector<ShownCollective> shown;
    // Per device, the union of its ops' spans (a saved timeline's ops need not be in order).
    std::vector<std::vector<std::pair<double, double>>> busy(t.device_ops.size());
    std::vector<bool> merged(t.device_ops.size(), false);
    for (const Transfer& x : t.transfers) {
        if (x.kind != TransferKind::data_parallel || x.src_device < 0 ||
            x.src_device >= static_cast<int>(t.device_ops.size()) || !(x.end > x.start))
            continue;
        const auto d = static_cast<std::size_t>(x.src_device);
        auto& spans = busy[d];
        if (!merged[d]) {
            for (const TimedOp& o : t.device_ops[d])
                spans.emplace_back(o.start, o.end);
            std::sort(spans.begin(), spans.end());
            std::vector<std::pair<double, double>> joined;
            for (const auto& span : spans)
                if (!joined.empty() && span.first <= joined.back().second)
                    joined.back().second = std::max(joined.back().second, span.second);
                else
                    joined.push_back(span);
            spans = std::move(joined);
            merged[d] = true;
        }
        const auto keep = [&](double from, double to) {
            if (to - from > least) shown.push_back({x.src_device, from, to});
        };
        // The first busy span that ends after the collective starts, then the gaps to its end.
        auto span = std::upper_bound(
            spans.begin(), spans.end(), x.start,
            [](double at, const std::pair<double, double>& s) { return at < s.second; });
        double covered_to = x.start;
        for (; span != spans.end() && span->first < x.end; ++span) {
            keep(covered_to, span->first);
            covered_to = std::max(covered_to, span->second);
        }
        keep(covered_to, x.end);
    }
    return shown;
}

std::vector<LegendEntry> legend_entries(const Timeline& t, bool critical_path,
                                        int lifespan_microbatch, bool transfers,
                                        bool data_parallel) {
    bool has[pass_count] = {};
    bool reverse = false, forward = false;
    for (const auto& ops : t.device_ops)
        for (const TimedOp& op : ops) {
            has[static_cast<int>(op.op.pass)] = true;
            (reverse_direction(t, op.op.microbatch) ? reverse : forward) = true;
        }
    std::vector<LegendEntry> out;
    for (int p = 0; p < pass_count; ++p)
        if (has[p])
            out.push_back({{std::string(pass_colour(static_cast<Pass>(p), 0))},
                           pass_meaning(static_cast<Pass>(p))});
    if (t.chunks > 1)
        for (int chunk = 0; chunk < t.chunks; ++chunk) {
            LegendEntry e{{}, fmt::format("chunk {}", chunk)};
            for (int p = 0; p < pass_count; ++p)
                if (has[p]) e.fills.emplace_back(pass_colour(static_cast<Pass>(p), chunk));
            out.push_back(std::move(e));
        }
    if (reverse) {
        const int last = t.devices - 1;
        if (forward) out.push_back({{"#ffffff"}, fmt::format("d0 → d{} (solid)", last)});
        out.push_back({{"#ffffff"}, fmt::format("d{} → d0 (dashed)", last), "#222222", 1, true});
    }
    if (has_fb_pairs(t.fb_pairs))
        out.push_back({{"#ffffff"}, "F&B pair (one border)", "#000000", 2});
    if (critical_path) out.push_back({{"#ffffff"}, "critical path", "#d62728", 2});
    const auto has_kind = [&](auto wanted) {
        return std::any_of(t.transfers.begin(), t.transfers.end(), wanted);
    };
    if (transfers && has_kind([](const Transfer& x) {
            return x.kind == TransferKind::pipeline && x.src_device != x.dst_device;
        })) {
        LegendEntry arrow{{}, "transfer between devices (sent → received)", transfer_colour, 1};
        arrow.arrow = true;
        out.push_back(std::move(arrow));
    }
    if (data_parallel)
        out.push_back({{data_parallel_colour},
                       "data-parallel gradient reduction, parameter all-gather (where no pass "
                       "hides it)",
                       data_parallel_colour});
    if (lifespan_microbatch >= 0)
        out.push_back(
            {{"#9cc6ce"},  // lifespan_overlay.cpp's fill on white
             fmt::format("lifespan of microbatch {} (F start to W end)", lifespan_microbatch),
             "#0b7285",
             1});
    return out;
}

double legend_height(const std::vector<LegendEntry>& entries, double width) {
    if (entries.empty()) return 0;
    return flow(entries, width).back().y + line_height;
}

void draw_legend(XdotCanvas& c, const std::vector<LegendEntry>& entries, Point top_left,
                 double width) {
    const std::vector<Point> at = flow(entries, width);
    c.font(legend_font);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const LegendEntry& e = entries[i];
        const double left = top_left.x + at[i].x;
        const double top = top_left.y - at[i].y - (line_height - swatch_height) / 2;
        if (e.arrow) {
            const double y = top - swatch_height / 2, tip = left + swatch_width;
            c.pen(e.outline);
            c.fill(e.outline);
            c.line({left, y}, {tip - 3, y});
            c.polygon({{tip - 4, y - 2}, {tip, y}, {tip - 4, y + 2}});
            c.pen(legend_text);
            c.text({left + swatch_width + text_gap, top - swatch_height + 1.5}, -1, e.text);
            continue;
        }
        const double part =
            swatch_width / static_cast<double>(std::max<std::size_t>(1, e.fills.size()));
        for (std::size_t k = 0; k < e.fills.size(); ++k) {
            const double x = left + part * static_cast<double>(k);
            c.pen(e.fills[k]);
            c.fill(e.fills[k]);
            c.polygon({{x, top},
                       {x + part, top},
                       {x + part, top - swatch_height},
                       {x, top - swatch_height}});
        }
        c.pen(e.outline);
        if (e.dashed) c.style("dashed");
        if (e.outline_width != 1) c.style(fmt::format("setlinewidth({})", e.outline_width));
        c.polyline({{left, top},
                    {left + swatch_width, top},
                    {left + swatch_width, top - swatch_height},
                    {left, top - swatch_height},
                    {left, top}});
        c.style("solid");
        c.style("setlinewidth(1)");
        c.pen(legend_text);
        c.text({left + swatch_width + text_gap, top - swatch_height + 1.5}, -1, e.text);
    }
}

}  // namespace pipesim::viz::detail
