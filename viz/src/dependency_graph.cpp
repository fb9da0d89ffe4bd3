#include "viz/dependency_graph.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "op_graph.hpp"
#include "style.hpp"

namespace pipesim::viz {

namespace {

constexpr const char* critical_colour = "#d62728";
constexpr const char* idle_colour = "#ff7f0e";

std::string node_name(const detail::OpGraph& g, std::size_t i) {
    return fmt::format("d{}_{}", g.ref[i].device, g.ref[i].position);
}

}  // namespace

std::string dependency_graph_dot(const Timeline& t, const DependencyGraphOptions& options) {
    std::size_t ops = 0;
    for (const auto& list : t.device_ops)
        ops += list.size();
    if (ops > options.max_ops)
        throw std::invalid_argument(fmt::format(
            "the dependency graph has {} ops; it is drawn for up to {} (use fewer microbatches "
            "or devices)",
            ops, options.max_ops));
    const detail::OpGraph g = detail::build_op_graph(t);
    const auto chain = detail::critical_chain(g);
    std::vector<bool> critical(g.size(), false);
    for (std::size_t i : chain)
        critical[i] = true;
    double busy = 0;
    for (std::size_t i : chain)
        busy += g.op[i]->end - g.op[i]->start;

    std::string out = "digraph dependencies {\n";
    out += fmt::format(
        "  graph [layout=dot, rankdir=LR, nodesep=0.12, ranksep=0.25, bgcolor=white, "
        "fontname=\"Helvetica\", fontsize=13, labelloc=t,\n"
        "         label=\"{} p={} m={} v={}: dependencies. Red: critical path ({} ops, busy {} "
        "of {} {}). Orange: waits that leave a device idle. Dashed: device order.\"];\n",
        detail::dot_escape(t.schedule), t.devices, t.microbatches, t.chunks, chain.size(),
        detail::pretty(busy, 6),
        chain.empty() ? "0"
                      : detail::pretty(g.op[chain.back()]->end - g.op[chain.front()]->start, 6),
        detail::dot_escape(t.time_unit));
    out +=
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=9, "
        "height=0.3, margin=\"0.04,0.02\", penwidth=0.6];\n";
    out += "  edge [arrowsize=0.5, color=\"#777777\"];\n";
    for (std::size_t i = 0; i < g.size(); ++i) {
        const TimedOp& op = *g.op[i];
        out += fmt::format(
            "  {} [label=\"{}\\nd{}  {}–{}\", fillcolor=\"{}\", group=d{}, tooltip=\"{} on device "
            "{}: {} – {}\"{}];\n",
            node_name(g, i), detail::short_name(op.op), g.ref[i].device,
            detail::pretty(op.start, 5), detail::pretty(op.end, 5),
            detail::pass_colour(op.op.pass, detail::chunk_of(t, op.op.stage)), g.ref[i].device,
            to_string(op.op), g.ref[i].device, detail::pretty(op.start, 6),
            detail::pretty(op.end, 6),
            critical[i] ? fmt::format(", color=\"{}\", penwidth=2", critical_colour) : "");
    }
    auto on_path = [&](std::int32_t from, std::size_t to) {
        return critical[to] && g.binding[to] == from && from >= 0 &&
               critical[static_cast<std::size_t>(from)];
    };
    for (std::size_t i = 0; i < g.size(); ++i) {
        const std::int32_t previous = g.previous(i);
        if (previous >= 0)
            out += fmt::format("  {} -> {} [style=dashed, weight=8, {}];\n",
                               node_name(g, static_cast<std::size_t>(previous)), node_name(g, i),
                               on_path(previous, i)
                                   ? fmt::format("color=\"{}\", penwidth=2", critical_colour)
                                   : std::string("color=\"#bbbbbb\""));
        const double free_at =
            previous >= 0 ? g.op[static_cast<std::size_t>(previous)]->end : g.op[i]->start;
        for (int k = 0; k < 2; ++k) {
            const std::int32_t input = g.inputs[i][k];
            if (input < 0) continue;
            std::string style;
            if (on_path(input, i))
                style = fmt::format(" [color=\"{}\", penwidth=2", critical_colour);
            else if (g.binding[i] == input && g.op[i]->start > free_at)
                style = fmt::format(" [color=\"{}\", penwidth=1.5", idle_colour);
            if (g.binding[i] == input && g.op[i]->start > free_at)
                style += fmt::format("{}tooltip=\"device {} idle {} – {} waiting for {}\"",
                                     style.empty() ? " [" : ", ", g.ref[i].device,
                                     detail::pretty(free_at, 6), detail::pretty(g.op[i]->start, 6),
                                     to_string(g.op[static_cast<std::size_t>(input)]->op));
            if (!style.empty()) style += "]";
            out += fmt::format("  {} -> {}{};\n", node_name(g, static_cast<std::size_t>(input)),
                               node_name(g, i), style);
        }
    }
    out += "}\n";
    return out;
}

}  // namespace pipesim::viz
