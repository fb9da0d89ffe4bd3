#pragma once
// Schedule generators, registered by name in one table.

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/costs.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

/// What a cost-aware generator (zb-1p, zb-2p) plans with: one F, B and W time per virtual
/// stage, the latency of every dependency between devices (same time unit), and the share of
/// a microbatch's activations held from its B until its W (M_W / M_B, 0..1). No times: unit
/// times and no latency. Other generators ignore them.
struct PlanningCosts {
    StageCosts times;
    double comm_latency = 0;
    double w_memory_share = 1;

    bool empty() const { return times.forward.empty(); }
};

/// `planning` with its times and latency scaled by one power of two that brings the largest
/// into [1, 2). The planners compare times with absolute tolerances, which at pass times of
/// 10⁻¹² once chose other schedules than at 1 (zb-v's bubble 55.56 % against 7.25 %); they
/// are given these. Order, not time, is what they return, so the scale does not show.
PlanningCosts scale_invariant(PlanningCosts planning);

/// The power of two scale_invariant() multiplies by when `largest` is the largest time (1
/// for none above 0).
double planning_scale(double largest);

/// What a generator is asked for. `chunks` 0 means the generator's default; `group_size` 0
/// means the generator's default (interleaved 1F1B: p microbatches per group).
struct GeneratorOptions {
    int devices = 0;
    int microbatches = 0;
    int chunks = 0;
    int group_size = 0;
    PlanningCosts planning = {};
};

/// A registered schedule generator.
struct ScheduleGenerator {
    std::string_view name;         ///< lower case with dashes, e.g. "zb-h1"
    std::string_view description;  ///< one line for `pipesim list`
    int default_chunks;            ///< v when the user gives none
    int min_chunks;                ///< smallest v it accepts
    int max_chunks;                ///< largest v it accepts (0: no limit)
    bool takes_group_size;         ///< whether GeneratorOptions::group_size means anything
    /// Builds the schedule. Preconditions (checked by generate_schedule): p, m ≥ 1,
    /// chunks within [min_chunks, max_chunks].
    Schedule (*generate)(const GeneratorOptions& options);
    /// Whether the order depends on GeneratorOptions::planning (the pass times). Such a
    /// generator's schedule has p·v virtual stages that every microbatch passes through, so
    /// the times can be derived before it is generated.
    bool plans_with_costs = false;
    /// The most ops per microbatch and virtual stage: 3 where backwards may be split (F, B,
    /// W), 2 where every backward is fused (F, BW), less where a microbatch passes through
    /// only some stages (DualPipe: half of them). What the op cap and memory estimates count.
    double ops_per_microbatch_stage = 3;
    /// Whether generate() itself checked what it returns for these options, as
    /// generate_schedule would (the V schedules time every candidate they plan with the
    /// dependency walk validation does, but not their unit order alone): then it is not
    /// validated again. Null: never.
    bool (*validates_itself)(const GeneratorOptions& options) = nullptr;
    /// For options whose schedule cannot run (a deadlock): the rule of the generator's these
    /// options break, in words a user can act on, or "" where it knows none. Null: none.
    std::string (*shape_problem)(const GeneratorOptions& options) = nullptr;
    /// Whether generate() times a schedule of the same size beside the one it returns: the
    /// building block laid out for every microbatch (schedule_from_block), or the candidates
    /// ZB-1P and ZB-2P compare (the shortest so far while the next is built and timed). It
    /// then holds a timeline and a second order, which the memory estimate counts.
    bool times_a_second_schedule = false;
};

/// All generators, in the order `pipesim list` shows them.
std::span<const ScheduleGenerator> schedule_generators();

/// The generator called `name`, or nullptr.
const ScheduleGenerator* find_generator(std::string_view name);

/// The most ops a schedule may have: generate_schedule() and a repeated building block refuse
/// more (a larger run would not fit in memory nor finish in reasonable time).
inline constexpr double max_schedule_ops = 2e8;

/// The most ops `generator` makes for p·v·m = `devices`·`chunks`·`microbatches`.
inline double max_op_count(const ScheduleGenerator& generator, int devices, int chunks,
                           int microbatches) {
    return generator.ops_per_microbatch_stage * devices * chunks * microbatches;
}

/// How much of validate() generate_schedule() makes on the schedule it built.
enum class GeneratedCheck {
    all,  ///< validate(): structure, then the order and deadlock checks of a dependency walk
    /// validate_structure() only: for a caller whose own walk over the schedule (the analytic
    /// replay's) makes the order and deadlock checks; it reports a schedule that cannot run
    /// with unrunnable_schedule(), as generate_schedule() would have.
    structure,
};

/// generate_schedule()'s checks of the options, before anything is made: throws as it would
/// for an unknown name, bad p/m/v/group size or too many ops. Returns the options with the
/// schedule's default v filled in. For a caller that sizes the run first (its memory), so
/// that an m out of range is named as such, not as a run too large.
GeneratorOptions checked_generator_options(std::string_view name, const GeneratorOptions& options);

/// Checks the options, generates and validates. Throws std::invalid_argument with one clear
/// line for an unknown name (listing the known ones), bad p/m/v/group size, more than 2·10⁸
/// ops (max_op_count), or a combination the schedule cannot run (e.g. a deadlock for that
/// m), naming the schedule and the problem.
Schedule generate_schedule(std::string_view name, const GeneratorOptions& options,
                           GeneratedCheck check = GeneratedCheck::all);

/// The error generate_schedule(name, options) throws for a schedule that cannot run:
/// `problem` is validate()'s message. Precondition: `name` is a registered generator.
std::invalid_argument unrunnable_schedule(std::string_view name, const GeneratorOptions& options,
                                          const std::string& problem);

}  // namespace pipesim
