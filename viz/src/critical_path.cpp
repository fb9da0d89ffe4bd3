#include <algorithm>
#include <limits>
#include <stdexcept>

#include "op_graph.hpp"
#include "schedules/block.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/schedule.hpp"
#include "schedules/validate.hpp"

namespace pipesim::viz {

namespace detail {

OpGraph build_op_graph(const Timeline& timeline) {
    const Schedule schedule = schedule_from_timeline(timeline, timeline.schedule);
    if (const auto issue = validate(schedule))
        throw std::invalid_argument(
            "the timeline's op order is not a valid schedule, so its dependencies are "
            "undefined: " +
            issue->message);
    OpGraph g;
    g.first.push_back(0);
    for (std::size_t d = 0; d < timeline.device_ops.size(); ++d) {
        const auto& ops = timeline.device_ops[d];
        for (std::size_t i = 0; i < ops.size(); ++i) {
            g.ref.push_back(OpRef{static_cast<int>(d), static_cast<int>(i)});
            g.op.push_back(&ops[i]);
        }
        g.first.push_back(g.ref.size());
    }
    const int stages = timeline.stages();
    g.inputs.assign(g.size(), {-1, -1});
    g.arrival.assign(g.size(), {0.0, 0.0});
    std::vector<std::int32_t> flat_of(dense_op_count(timeline.microbatches, stages), -1);
    DependencyWalker walker(schedule);
    const auto issue =
        walker.run([&](int device, int position, const Op& op, const Predecessors& preds) {
            const std::size_t i = g.flat(OpRef{device, position});
            flat_of[dense_op_index(op, stages)] = static_cast<std::int32_t>(i);
            for (int k = 0; k < preds.count; ++k) {
                const std::int32_t input = flat_of[dense_op_index(preds.op[k], stages)];
                g.inputs[i][k] = input;
                g.arrival[i][k] = g.op[static_cast<std::size_t>(input)]->end;
            }
        });
    if (issue) throw std::invalid_argument(issue->message);  // validate() would have caught it
    for (const Transfer& x : timeline.transfers) {
        if (x.kind != TransferKind::pipeline) continue;
        const std::int32_t consumer = flat_of[dense_op_index(x.consumer, stages)];
        const std::int32_t producer = flat_of[dense_op_index(x.producer, stages)];
        if (consumer < 0 || producer < 0) continue;
        for (int k = 0; k < 2; ++k)
            if (g.inputs[consumer][k] == producer)
                g.arrival[consumer][k] = std::max(g.arrival[consumer][k], x.end);
    }
    g.binding.assign(g.size(), -1);
    for (std::size_t i = 0; i < g.size(); ++i) {
        double latest = -std::numeric_limits<double>::infinity();
        const std::int32_t previous = g.previous(i);
        if (previous >= 0) {
            g.binding[i] = previous;
            latest = g.op[static_cast<std::size_t>(previous)]->end;
        }
        for (int k = 0; k < 2; ++k) {
            if (g.inputs[i][k] < 0 || g.arrival[i][k] < latest) continue;
            latest = g.arrival[i][k];
            g.binding[i] = g.inputs[i][k];
        }
    }
    return g;
}

std::vector<std::size_t> critical_chain(const OpGraph& g) {
    std::vector<std::size_t> chain;
    if (g.size() == 0) return chain;
    std::size_t last = 0;
    for (std::size_t i = 1; i < g.size(); ++i)
        if (g.op[i]->end > g.op[last]->end) last = i;
    for (std::int64_t i = static_cast<std::int64_t>(last); i >= 0;
         i = g.binding[static_cast<std::size_t>(i)])
        chain.push_back(static_cast<std::size_t>(i));
    std::reverse(chain.begin(), chain.end());
    return chain;
}

}  // namespace detail

CriticalPath critical_path(const Timeline& timeline) {
    const detail::OpGraph g = detail::build_op_graph(timeline);
    CriticalPath path;
    const auto chain = detail::critical_chain(g);
    for (std::size_t i : chain) {
        path.ops.push_back(g.ref[i]);
        path.busy += g.op[i]->end - g.op[i]->start;
    }
    if (!chain.empty())
        path.waiting = g.op[chain.back()]->end - g.op[chain.front()]->start - path.busy;
    return path;
}

}  // namespace pipesim::viz
