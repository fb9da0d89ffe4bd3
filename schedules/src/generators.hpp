#pragma once
// The generators registered in registry.cpp, one per file.

#include "schedules/registry.hpp"

namespace pipesim::detail {

Schedule generate_gpipe(const GeneratorOptions& options);
Schedule generate_1f1b(const GeneratorOptions& options);
Schedule generate_interleaved_1f1b(const GeneratorOptions& options);
/// What a shape that deadlocks breaks (registry.hpp, ScheduleGenerator::shape_problem).
std::string interleaved_1f1b_shape_problem(const GeneratorOptions& options);
Schedule generate_zb_h1(const GeneratorOptions& options);
Schedule generate_zb_h2(const GeneratorOptions& options);
/// Whether the V generators plan with `options`' costs (plan_v_schedule, v_plan.hpp): they are
/// given and the problem is not too large (otherwise they return their first unit order, and
/// building others is waste). When they plan they validate what they return.
bool plans_with_costs(const GeneratorOptions& options);

Schedule generate_v_min(const GeneratorOptions& options);
Schedule generate_v_half(const GeneratorOptions& options);
Schedule generate_zb_1p(const GeneratorOptions& options);
Schedule generate_zb_2p(const GeneratorOptions& options);
Schedule generate_zb_v(const GeneratorOptions& options);
Schedule generate_v_zb(const GeneratorOptions& options);
Schedule generate_dualpipe(const GeneratorOptions& options);
Schedule generate_dualpipe_v(const GeneratorOptions& options);

/// The V-ZB and ZB-V orders laid out for unit pass times (what v-zb and zb-v plan from);
/// ZB-V's with warm-ups for a peak of `peak` chunk activations per device (0: ZB-V's 2p):
/// device i runs min(i+1, peak/2) second-chunk forwards before its first backward and the
/// rest of the peak first-chunk ones.
Schedule v_zb_order(const GeneratorOptions& options);
Schedule zb_v_order(const GeneratorOptions& options, int peak = 0);

/// ZB-1P/ZB-2P: the shortest of the Zero Bubble automatic candidates, planned with
/// options.planning, under a cap of `cap_per_device`·p full-stage microbatches, named `name`.
Schedule generate_zb_capped(const GeneratorOptions& options, const char* name, int cap_per_device);

}  // namespace pipesim::detail
