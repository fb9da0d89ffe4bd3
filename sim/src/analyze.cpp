#include "sim/analyze.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace pipesim {

StageCosts stage_costs_from_triples(const std::vector<std::vector<double>>& triples, int devices,
                                    int chunks) {
    const auto stages = static_cast<std::size_t>(devices * chunks);
    for (std::size_t i = 0; i < triples.size(); ++i)
        if (triples[i].size() != 3)
            throw std::invalid_argument(fmt::format(
                "costs entry {} has {} numbers, expected three (F,B,W)", i, triples[i].size()));
    if (triples.size() == 1)
        return uniform_stage_costs(devices, chunks, triples[0][0], triples[0][1], triples[0][2]);
    if (triples.size() != stages)
        throw std::invalid_argument(
            fmt::format("costs list {} triples; give one (a full stage) or p·v = {} (one per "
                        "virtual stage)",
                        triples.size(), stages));
    StageCosts costs;
    for (const auto& t : triples) {
        costs.forward.push_back(t[0]);
        costs.backward_input.push_back(t[1]);
        costs.backward_weight.push_back(t[2]);
    }
    check_stage_costs(costs, static_cast<int>(stages));
    return costs;
}

namespace {

// The largest share of a stage's activations held from B until W.
double largest_w_share(const MemoryModel& memory) {
    double share = 0;
    for (std::size_t s = 0; s < memory.activation.size(); ++s)
        if (memory.activation[s] > 0)
            share = std::max(share, memory.held_for_w[s] / memory.activation[s]);
    return std::min(share, 1.0);
}

}  // namespace

Schedule generate_planned(const AnalyzeOptions& options) {
    Schedule schedule = generate_schedule(options.schedule, options.generator);
    const ScheduleGenerator* generator = find_generator(options.schedule);
    if (!generator || !generator->plans_with_costs || !options.generator.planning.empty())
        return schedule;
    StageCosts costs;
    double w_share = options.mem_w_ratio;
    if (options.model) {
        const models::PipelinePlan plan = plan_model(*options.model, schedule).plan;
        costs = stage_costs_from_plan(plan);
        w_share = largest_w_share(memory_model_from_plan(plan));
    } else {
        costs = stage_costs_from_triples(options.costs, schedule.devices, schedule.chunks);
    }
    GeneratorOptions planned = options.generator;
    planned.planning = PlanningCosts{std::move(costs), options.comm_latency, w_share};
    return generate_schedule(options.schedule, planned);
}

Analysis analyze(const AnalyzeOptions& options) {
    return analyze_schedule(generate_planned(options), options);
}

Analysis analyze_schedule(Schedule schedule, const AnalyzeOptions& options) {
    Analysis result;
    result.schedule = std::move(schedule);
    const int p = result.schedule.devices;
    const int v = result.schedule.chunks;
    if (options.model) result.model = plan_model(*options.model, result.schedule);
    result.costs = result.model ? stage_costs_from_plan(result.model->plan)
                                : stage_costs_from_triples(options.costs, p, v);
    ReplayOptions replay_options;
    replay_options.comm_latency = options.comm_latency;
    if (result.model) replay_options.message_bytes = result.model->plan.message_bytes;
    result.timeline = replay(result.schedule, result.costs, replay_options);
    if (result.model) result.timeline.time_unit = "s";
    result.memory = result.model ? memory_model_from_plan(result.model->plan)
                                 : unit_memory_model(p, v, options.mem_w_ratio);
    result.metrics = compute_metrics(result.timeline, result.memory);
    if (result.model) summarize_model(*result.model, result.schedule, result.metrics);
    return result;
}

}  // namespace pipesim
