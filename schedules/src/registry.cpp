#include "schedules/registry.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "fileio/parse_error.hpp"
#include "generators.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

// Sizes beyond these are almost surely typos, and would make dense per-op state huge.
constexpr int max_devices = 4096;
constexpr int max_microbatches = 1 << 20;
constexpr int max_chunks_any = 64;

constexpr std::array generators{
    ScheduleGenerator{"gpipe", "GPipe: all forwards, then all fused backwards (Huang et al., 2019)",
                      1, 1, 1, false, &detail::generate_gpipe, false, 2},
    ScheduleGenerator{"1f1b",
                      "1F1B: p−1−i warm-up forwards, then one forward one backward "
                      "(PipeDream-Flush)",
                      1, 1, 1, false, &detail::generate_1f1b, false, 2},
    ScheduleGenerator{"interleaved-1f1b",
                      "interleaved 1F1B: v looped chunks per device, Megatron-LM's order "
                      "(Narayanan et al., SC21); --group-size G microbatches per chunk round",
                      2, 2, max_chunks_any, true, &detail::generate_interleaved_1f1b, false, 2,
                      nullptr, &detail::interleaved_1f1b_shape_problem},
    ScheduleGenerator{"zb-h1",
                      "ZB-H1: split backward, W deferred; 1F1B's memory, bubble "
                      "(p−1)(F+B−W) for W ≤ F (Qi et al., ICLR 2024)",
                      1, 1, 1, false, &detail::generate_zb_h1},
    ScheduleGenerator{"zb-h2",
                      "ZB-H2: 2p−1 warm-up forwards, W at the tail; (2p−1) M_B, bubble "
                      "(p−1)(F+B−2W) for W ≤ F (Qi et al., ICLR 2024)",
                      1, 1, 1, false, &detail::generate_zb_h2},
    ScheduleGenerator{"v-min",
                      "V-Min: V-shape building block, ≈1/3 of 1F1B's activation memory, "
                      "≈2/3 of its bubble with equal F, B, W (Qi et al., NeurIPS 2024)",
                      2, 2, 2, false, &detail::generate_v_min, true, 3, &detail::plans_with_costs,
                      nullptr, true},
    ScheduleGenerator{"v-half",
                      "V-Half: V-shape building block, ≈1/2 of 1F1B's activation memory "
                      "and, with equal F, B, W, bubble (Qi et al., NeurIPS 2024)",
                      2, 2, 2, false, &detail::generate_v_half, true, 3, &detail::plans_with_costs,
                      nullptr, true},
    ScheduleGenerator{"zb-1p",
                      "ZB-1P: Zero Bubble's automatic schedule under a p·M_B memory cap, "
                      "planned with the given F/B/W/comm times (Qi et al., ICLR 2024)",
                      1, 1, 1, false, &detail::generate_zb_1p, true, 3, nullptr, nullptr, true},
    ScheduleGenerator{"zb-2p",
                      "ZB-2P: Zero Bubble's automatic schedule under a 2p·M_B memory cap, "
                      "planned with the given times; zero bubble with F=B=W (ICLR 2024)",
                      1, 1, 1, false, &detail::generate_zb_2p, true, 3, nullptr, nullptr, true},
    ScheduleGenerator{"zb-v",
                      "ZB-V: V-shape, split backward, 1F1B's peak memory (p·M_B), zero "
                      "bubble with F=B=W (Qi et al., ICLR 2024, Sec. 6)",
                      2, 2, 2, false, &detail::generate_zb_v, true, 3, &detail::plans_with_costs},
    ScheduleGenerator{"v-zb",
                      "V-ZB: V-shape building block with 1F1B's memory and (almost) zero "
                      "bubble (Qi et al., NeurIPS 2024)",
                      2, 2, 2, false, &detail::generate_v_zb, true, 3, &detail::plans_with_costs,
                      nullptr, true},
    ScheduleGenerator{"dualpipe",
                      "DualPipe: DeepSeek's bidirectional pipeline, two model copies "
                      "fed from both ends (even p and m), overlapped F&B pairs (--overlap-fb)",
                      2, 2, 2, false, &detail::generate_dualpipe, false, 1.5},
    ScheduleGenerator{"dualpipe-v",
                      "DualPipeV: DeepSeek's cut-in-half DualPipe on a V-shape, "
                      "overlapped F&B pairs (--overlap-fb)",
                      2, 2, 2, false, &detail::generate_dualpipe_v},
};

std::string known_names() {
    std::string names;
    for (const auto& g : generators) {
        if (!names.empty()) names += ", ";
        names += g.name;
    }
    return names;
}

void check_planning_costs(std::string_view name, const GeneratorOptions& options) {
    const PlanningCosts& planning = options.planning;
    if (planning.empty() &&
        (planning.comm_latency != 0 || planning.w_memory_share != 1 ||
         !planning.times.backward_input.empty() || !planning.times.backward_weight.empty()))
        throw std::invalid_argument(
            fmt::format("{}: planning latency or memory share given without pass times", name));
    if (planning.empty()) return;
    const auto stages =
        static_cast<std::size_t>(options.devices) * static_cast<std::size_t>(options.chunks);
    const std::array<std::pair<const std::vector<double>*, const char*>, 3> passes{
        {{&planning.times.forward, "F"},
         {&planning.times.backward_input, "B"},
         {&planning.times.backward_weight, "W"}}};
    for (const auto& [times, pass] : passes) {
        if (times->size() != stages)
            throw std::invalid_argument(
                fmt::format("{}: planning costs give {} {} times for p·v = {} stages", name,
                            times->size(), pass, stages));
        for (std::size_t s = 0; s < stages; ++s)
            if (!std::isfinite((*times)[s]) || (*times)[s] < 0)
                throw std::invalid_argument(
                    fmt::format("{}: planning {} time of stage {} must be finite and ≥ 0, got {}",
                                name, pass, s, (*times)[s]));
    }
    if (!std::isfinite(planning.comm_latency) || planning.comm_latency < 0)
        throw std::invalid_argument(fmt::format(
            "{}: planning latency must be finite and ≥ 0, got {}", name, planning.comm_latency));
    if (!(planning.w_memory_share >= 0 && planning.w_memory_share <= 1))
        throw std::invalid_argument(
            fmt::format("{}: the share of activations held until W must be in 0..1, got {}", name,
                        planning.w_memory_share));
}

}  // namespace

double planning_scale(double largest) {
    // A power of two: scaling by it is exact, so that times of order one plan bit for bit as
    // before, and every other scale plans as they do.
    return largest > 0 && std::isfinite(largest) ? std::ldexp(1.0, -std::ilogb(largest)) : 1.0;
}

PlanningCosts scale_invariant(PlanningCosts planning) {
    double largest = planning.comm_latency;
    for (const std::vector<double>* times :
         {&planning.times.forward, &planning.times.backward_input, &planning.times.backward_weight})
        for (const double t : *times)
            largest = std::max(largest, t);
    const double scale = planning_scale(largest);
    for (std::vector<double>* times :
         {&planning.times.forward, &planning.times.backward_input, &planning.times.backward_weight})
        for (double& t : *times)
            t *= scale;
    planning.comm_latency *= scale;
    return planning;
}

std::span<const ScheduleGenerator> schedule_generators() {
    return generators;
}

const ScheduleGenerator* find_generator(std::string_view name) {
    for (const auto& g : generators)
        if (g.name == name) return &g;
    return nullptr;
}

GeneratorOptions checked_generator_options(std::string_view name, const GeneratorOptions& options) {
    const ScheduleGenerator* generator = find_generator(name);
    if (!generator)
        throw std::invalid_argument(fmt::format("unknown schedule {} (known: {})",
                                                fileio::quote_excerpt(name, 80), known_names()));
    if (options.devices < 1 || options.devices > max_devices)
        throw std::invalid_argument(
            fmt::format("{}: the number of devices p must be in 1..{}, got {}", name, max_devices,
                        options.devices));
    if (options.microbatches < 1 || options.microbatches > max_microbatches)
        throw std::invalid_argument(
            fmt::format("{}: the number of microbatches m must be in 1..{}, got {}", name,
                        max_microbatches, options.microbatches));
    GeneratorOptions resolved = options;
    if (resolved.chunks == 0) resolved.chunks = generator->default_chunks;
    const int max_chunks = generator->max_chunks == 0 ? max_chunks_any : generator->max_chunks;
    if (resolved.chunks < generator->min_chunks || resolved.chunks > max_chunks)
        throw std::invalid_argument(
            generator->min_chunks == max_chunks
                ? fmt::format("{} runs with v = {} chunk(s) per device, got v = {}", name,
                              generator->min_chunks, resolved.chunks)
                : fmt::format("{} takes v in {}..{} chunks per device, got v = {}", name,
                              generator->min_chunks, max_chunks, resolved.chunks));
    if (resolved.group_size != 0 && !generator->takes_group_size)
        throw std::invalid_argument(fmt::format("{} has no microbatch group size option", name));
    if (resolved.group_size < 0)
        throw std::invalid_argument(
            fmt::format("{}: the group size must be ≥ 1, got {}", name, resolved.group_size));
    const double ops =
        max_op_count(*generator, resolved.devices, resolved.chunks, resolved.microbatches);
    if (ops > max_schedule_ops)
        throw std::invalid_argument(fmt::format("{}: p·v·m = {}·{}·{} gives more than {:.0e} ops",
                                                name, resolved.devices, resolved.chunks,
                                                resolved.microbatches, max_schedule_ops));
    return resolved;
}

Schedule generate_schedule(std::string_view name, const GeneratorOptions& options,
                           GeneratedCheck check) {
    GeneratorOptions resolved = checked_generator_options(name, options);
    const ScheduleGenerator* generator = find_generator(name);
    check_planning_costs(name, resolved);
    resolved.planning = scale_invariant(std::move(resolved.planning));

    Schedule schedule = generator->generate(resolved);
    if (!generator->validates_itself || !generator->validates_itself(resolved)) {
        const auto issue =
            check == GeneratedCheck::all ? validate(schedule) : validate_structure(schedule);
        if (issue) throw unrunnable_schedule(name, resolved, issue->message);
    }
    return schedule;
}

std::invalid_argument unrunnable_schedule(std::string_view name, const GeneratorOptions& options,
                                          const std::string& problem) {
    const ScheduleGenerator* generator = find_generator(name);
    const int chunks =
        options.chunks == 0 && generator ? generator->default_chunks : options.chunks;
    const std::string rule =
        generator && generator->shape_problem ? generator->shape_problem(options) : "";
    return std::invalid_argument(fmt::format("{} cannot run with p={} m={} v={}: {}{}", name,
                                             options.devices, options.microbatches, chunks,
                                             rule.empty() ? "" : rule + "; ", problem));
}

}  // namespace pipesim
