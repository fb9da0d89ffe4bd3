#pragma once
// One analysis: generate a named schedule, replay it with costs, compute the metrics.

#include <optional>
#include <string>
#include <vector>

#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "schedules/schedule.hpp"
#include "schedules/timeline.hpp"
#include "schedules/costs.hpp"
#include "sim/model_costs.hpp"
#include "sim/replay.hpp"

namespace pipesim {

/// What `pipesim analyze` asks for. Defaults: F = B = W = 1 per full stage, no latency,
/// activations held until W (M_W = M_B).
struct AnalyzeOptions {
    std::string schedule;
    GeneratorOptions generator;
    /// Either one triple (F, B, W of a full stage, split evenly over the v chunks) or one
    /// triple per virtual stage (used as given). Each triple is {F, B, W}.
    std::vector<std::vector<double>> costs = {{1.0, 1.0, 1.0}};
    double comm_latency = 0;
    double mem_w_ratio = 1.0;
    /// With a model, costs (seconds) and activation memory (bytes) come from models/ and
    /// `costs` and `mem_w_ratio` are ignored; comm_latency is then in seconds.
    std::optional<ModelRunOptions> model;
};

struct Analysis {
    Schedule schedule;
    StageCosts costs;
    /// Activation memory per stage: the model's (bytes) or the unit model's.
    MemoryModel memory;
    Timeline timeline;
    Metrics metrics;
    std::optional<ModelAnalysis> model;  ///< set when AnalyzeOptions::model is
};

/// Generates the schedule `options` names. A generator that plans with pass times (zb-1p,
/// zb-2p) gets the costs the analysis uses (the model's or `costs`) and `comm_latency`: the
/// schedule is generated once to know its shape, the costs are derived for that shape, and
/// it is generated again with them (the shape does not depend on the times).
Schedule generate_planned(const AnalyzeOptions& options);

/// Runs the analysis. Throws std::invalid_argument (with one clear line) for any bad option.
Analysis analyze(const AnalyzeOptions& options);

/// Runs the analysis of a given schedule (e.g. read from a file) instead of a generated one;
/// `options.schedule` and `options.generator` are ignored. Throws InvalidSchedule if the
/// schedule is invalid, std::invalid_argument for costs that do not fit it.
Analysis analyze_schedule(Schedule schedule, const AnalyzeOptions& options);

/// Builds the per-stage costs an AnalyzeOptions::costs list describes for a p×v pipeline.
StageCosts stage_costs_from_triples(const std::vector<std::vector<double>>& triples, int devices,
                                    int chunks);

}  // namespace pipesim
