#include "schedules/validate.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "schedules/dependency_order.hpp"

namespace pipesim {

std::vector<std::uint8_t> split_backward_flags(const Schedule& schedule) {
    std::vector<std::uint8_t> split(static_cast<std::size_t>(schedule.microbatches) *
                                        static_cast<std::size_t>(schedule.stages()),
                                    0);
    for (const auto& ops : schedule.device_ops)
        for (const Op& op : ops)
            if (op.pass == Pass::B) split[output_slot(op, schedule.stages()) / 2] = 1;
    return split;
}

namespace {

// The cycle of a deadlock: from device `first`, each stuck device's wait ("device d at
// position k (op) waits for X on device e") leads to the next, until a device repeats (the
// cycle closes there) or the wait leads off the stuck devices. `wait_of(d)` gives a device's
// wait and the device it waits on, or nothing; `stuck(d)`: whether d has ops left.
struct WaitCycle {
    std::vector<std::string> steps;  // in the order followed
    std::vector<int> step_device;    // the waiting device of each step
    std::size_t start = 0;           // the first step inside the cycle
    int closing_device = -1;         // the repeated device, −1 when none repeats
};

template <class WaitOf, class Stuck>
WaitCycle follow_waits(int devices, int first, WaitOf&& wait_of, Stuck&& stuck) {
    WaitCycle cycle;
    std::vector<int> seen_at(static_cast<std::size_t>(devices), -1);
    int d = first;
    while (seen_at[static_cast<std::size_t>(d)] < 0) {
        seen_at[static_cast<std::size_t>(d)] = static_cast<int>(cycle.steps.size());
        std::optional<std::pair<std::string, int>> wait = wait_of(d);
        if (!wait || wait->second == d) break;
        cycle.step_device.push_back(d);
        cycle.steps.push_back(std::move(wait->first));
        d = wait->second;
        if (!stuck(d)) break;
    }
    if (seen_at[static_cast<std::size_t>(d)] >= 0) {
        cycle.start = static_cast<std::size_t>(seen_at[static_cast<std::size_t>(d)]);
        cycle.closing_device = d;
    }
    return cycle;
}

// "deadlock: " and the cycle's steps, "; "-separated.
std::string cycle_message(const WaitCycle& cycle) {
    std::string message = "deadlock: ";
    for (std::size_t i = cycle.start; i < cycle.steps.size(); ++i) {
        if (i > cycle.start) message += "; ";
        message += cycle.steps[i];
    }
    if (cycle.steps.size() - cycle.start > 1) message += ", which closes the cycle";
    return message;
}

}  // namespace

DependencyWalker::DependencyWalker(const Schedule& schedule)
    : schedule_(schedule),
      stages_(schedule.stages()),
      routed_(!schedule.microbatch_stages.empty()),
      split_(split_backward_flags(schedule)),
      done_(output_slot_count(schedule.microbatches, schedule.stages()), 0),
      waiter_(done_.size(), -1),
      cursor_(static_cast<std::size_t>(schedule.devices), 0) {
    ready_.reserve(static_cast<std::size_t>(schedule.devices) * 2);
}

ValidationIssue DependencyWalker::same_device_issue(int device, int position, const Op& op,
                                                    const Op& pred) const {
    return ValidationIssue{device, position,
                           fmt::format("device {} position {}: {} needs {}, which device {} runs "
                                       "later in its order",
                                       device, position, to_string(op), to_string(pred), device)};
}

ValidationIssue DependencyWalker::deadlock_issue() const {
    const auto stuck = [&](int d) {
        return cursor_[static_cast<std::size_t>(d)] <
               schedule_.device_ops[static_cast<std::size_t>(d)].size();
    };
    int first_stuck = 0;
    while (!stuck(first_stuck))
        ++first_stuck;
    const WaitCycle cycle = follow_waits(
        schedule_.devices, first_stuck,
        [&](int d) -> std::optional<std::pair<std::string, int>> {
            const std::size_t position = cursor_[static_cast<std::size_t>(d)];
            const Op& op = schedule_.device_ops[static_cast<std::size_t>(d)][position];
            const Predecessors preds = predecessors_of(op);
            int k = 0;
            while (k < preds.count && done_[preds.slot[k]])
                ++k;
            if (k == preds.count) return std::nullopt;  // cannot happen: a stuck device waits
            return std::pair{
                fmt::format("device {} at position {} ({}) waits for {} on device {}", d, position,
                            to_string(op), to_string(preds.op[k]), preds.device[k]),
                preds.device[k]};
        },
        stuck);
    const int cycle_device = cycle.closing_device >= 0 ? cycle.closing_device : first_stuck;
    return ValidationIssue{cycle_device,
                           static_cast<int>(cursor_[static_cast<std::size_t>(cycle_device)]),
                           cycle_message(cycle)};
}

namespace {

std::optional<ValidationIssue> check_shape(const Schedule& s) {
    if (s.devices < 1)
        return ValidationIssue{-1, -1, fmt::format("devices must be ≥ 1, got {}", s.devices)};
    if (s.microbatches < 1)
        return ValidationIssue{-1, -1,
                               fmt::format("microbatches must be ≥ 1, got {}", s.microbatches)};
    if (s.chunks < 1)
        return ValidationIssue{-1, -1, fmt::format("chunks must be ≥ 1, got {}", s.chunks)};
    if (s.device_ops.size() != static_cast<std::size_t>(s.devices))
        return ValidationIssue{-1, -1,
                               fmt::format("schedule has {} device op lists for {} devices",
                                           s.device_ops.size(), s.devices)};
    if (s.stage_device.size() != static_cast<std::size_t>(s.stages()))
        return ValidationIssue{-1, -1,
                               fmt::format("placement lists {} stages, expected p·v = {}",
                                           s.stage_device.size(), s.stages())};
    if (!s.microbatch_stages.empty()) {
        if (s.microbatch_stages.size() != static_cast<std::size_t>(s.microbatches))
            return ValidationIssue{
                -1, -1,
                fmt::format("microbatch_stages lists {} microbatches, expected {}",
                            s.microbatch_stages.size(), s.microbatches)};
        for (int mb = 0; mb < s.microbatches; ++mb) {
            const StageRange r = s.microbatch_stages[static_cast<std::size_t>(mb)];
            if (r.first < 0 || r.last >= s.stages() || r.first > r.last)
                return ValidationIssue{
                    -1, -1,
                    fmt::format("microbatch {} passes through stages {}..{}, outside 0..{} or "
                                "empty",
                                mb, r.first, r.last, s.stages() - 1)};
        }
        // Each microbatch passes through one whole copy of the model (DualPipe: stages 0..p−1
        // or p..2p−1), and every stage is in some range. A file that sent two microbatches
        // through stage 0 alone of p = 2 was analysed as a run with no bubble, 1.5 times
        // 1F1B's speed, while device 1 idled throughout.
        const StageRange first = s.microbatch_stages.front();
        std::vector<int> entering(static_cast<std::size_t>(s.stages()) + 1, 0);
        for (int mb = 0; mb < s.microbatches; ++mb) {
            const StageRange r = s.microbatch_stages[static_cast<std::size_t>(mb)];
            if (r.last - r.first != first.last - first.first)
                return ValidationIssue{
                    -1, -1,
                    fmt::format("microbatch {} passes through stages {}..{} and microbatch 0 "
                                "through {}..{}: each microbatch passes through one whole copy "
                                "of the model, as many stages",
                                mb, r.first, r.last, first.first, first.last)};
            ++entering[static_cast<std::size_t>(r.first)];
            --entering[static_cast<std::size_t>(r.last) + 1];
        }
        int passing = 0;
        for (int stage = 0; stage < s.stages(); ++stage) {
            passing += entering[static_cast<std::size_t>(stage)];
            if (passing == 0)
                return ValidationIssue{
                    -1, -1,
                    fmt::format("no microbatch passes through stage {}: each stage holds part of "
                                "a model copy that microbatches pass through",
                                stage)};
        }
    }
    std::vector<int> stages_on(static_cast<std::size_t>(s.devices), 0);
    for (int stage = 0; stage < s.stages(); ++stage) {
        const int d = s.stage_device[stage];
        if (d < 0 || d >= s.devices)
            return ValidationIssue{-1, -1,
                                   fmt::format("stage {} is placed on device {}, outside 0..{}",
                                               stage, d, s.devices - 1)};
        ++stages_on[d];
    }
    for (int d = 0; d < s.devices; ++d)
        if (stages_on[d] != s.chunks)
            return ValidationIssue{d, -1,
                                   fmt::format("device {} holds {} stages, expected {} (chunks)", d,
                                               stages_on[d], s.chunks)};
    return std::nullopt;
}

// Bit of `pass` in a (microbatch, stage)'s mask of scheduled passes.
std::uint8_t pass_bit(Pass pass) {
    return static_cast<std::uint8_t>(1u << static_cast<int>(pass));
}

// Position of `op` in device `device`'s list (error path only).
int position_of(const Schedule& s, int device, const Op& op) {
    const auto& ops = s.device_ops[device];
    for (std::size_t i = 0; i < ops.size(); ++i)
        if (ops[i] == op) return static_cast<int>(i);
    return -1;
}

// Index of (microbatch, stage) in the masks of scheduled passes: stage-major, so that a
// device's ops, which run through its stages' microbatches in order, touch few cache lines.
std::size_t mask_index(const Schedule& s, int microbatch, int stage) {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(s.microbatches) +
           static_cast<std::size_t>(microbatch);
}

// The problem with device d's op at `pos`, one of: out of range, outside its microbatch's
// stages, on the wrong device, repeated (the error path of check_ops).
ValidationIssue op_issue(const Schedule& s, int d, std::size_t pos) {
    const Op& op = s.device_ops[d][pos];
    const int position = static_cast<int>(pos);
    const int stages = s.stages();
    if (op.microbatch < 0 || op.microbatch >= s.microbatches)
        return ValidationIssue{d, position,
                               fmt::format("device {} position {}: {} has microbatch "
                                           "outside 0..{}",
                                           d, position, to_string(op), s.microbatches - 1)};
    if (op.stage < 0 || op.stage >= stages)
        return ValidationIssue{d, position,
                               fmt::format("device {} position {}: {} has stage outside 0..{}", d,
                                           position, to_string(op), stages - 1)};
    if (static_cast<int>(op.pass) >= pass_count)
        return ValidationIssue{d, position,
                               fmt::format("device {} position {}: unknown pass", d, position)};
    if (const StageRange r = s.stages_of(op.microbatch); op.stage < r.first || op.stage > r.last)
        return ValidationIssue{
            d, position,
            fmt::format("device {} position {}: {} is outside microbatch {}'s "
                        "stages {}..{}",
                        d, position, to_string(op), op.microbatch, r.first, r.last)};
    if (s.stage_device[op.stage] != d)
        return ValidationIssue{
            d, position,
            fmt::format("device {} position {}: {} belongs on device {}, which holds stage {}", d,
                        position, to_string(op), s.stage_device[op.stage], op.stage)};
    return ValidationIssue{d, position,
                           fmt::format("device {} position {}: {} appears twice (first at "
                                       "position {})",
                                       d, position, to_string(op), position_of(s, d, op))};
}

// Every op in range, on its stage's device, and not repeated. Fills `passes`: per
// (microbatch, stage) (mask_index), a mask of the passes scheduled.
std::optional<ValidationIssue> check_ops(const Schedule& s, std::vector<std::uint8_t>& passes) {
    const int stages = s.stages();
    const StageRange* ranges = s.microbatch_stages.empty() ? nullptr : s.microbatch_stages.data();
    const int* stage_device = s.stage_device.data();
    std::uint8_t* mask = passes.data();
    for (int d = 0; d < s.devices; ++d) {
        const auto& ops = s.device_ops[d];
        for (std::size_t pos = 0; pos < ops.size(); ++pos) {
            const Op op = ops[pos];
            // Unsigned compares: a negative microbatch or stage is out of range too.
            bool fine =
                static_cast<unsigned>(op.microbatch) < static_cast<unsigned>(s.microbatches) &&
                static_cast<unsigned>(op.stage) < static_cast<unsigned>(stages) &&
                static_cast<int>(op.pass) < pass_count;
            if (fine && ranges)
                fine = op.stage >= ranges[op.microbatch].first &&
                       op.stage <= ranges[op.microbatch].last;
            fine = fine && stage_device[op.stage] == d;
            std::uint8_t* m = fine ? &mask[mask_index(s, op.microbatch, op.stage)] : nullptr;
            if (!fine || (*m & pass_bit(op.pass))) return op_issue(s, d, pos);
            *m |= pass_bit(op.pass);
        }
    }
    return std::nullopt;
}

// Whether `mask` is a complete (microbatch, stage): one F and either one BW or B and W.
bool complete_mask(std::uint8_t mask) {
    const std::uint8_t f = pass_bit(Pass::F);
    return mask == (f | pass_bit(Pass::BW)) || mask == (f | pass_bit(Pass::B) | pass_bit(Pass::W));
}

// Each (microbatch, stage) has one F and either one BW or both B and W.
std::optional<ValidationIssue> check_complete(const Schedule& s,
                                              const std::vector<std::uint8_t>& passes) {
    // The common case first: every mask in the microbatches' ranges complete.
    bool all_complete = true;
    if (s.microbatch_stages.empty()) {
        for (const std::uint8_t mask : passes)
            all_complete = all_complete && complete_mask(mask);
    } else {
        for (int mb = 0; mb < s.microbatches && all_complete; ++mb) {
            const StageRange range = s.stages_of(mb);
            for (int stage = range.first; stage <= range.last; ++stage)
                all_complete = all_complete && complete_mask(passes[mask_index(s, mb, stage)]);
        }
    }
    if (all_complete) return std::nullopt;
    // The first incomplete one, microbatch by microbatch.
    for (int mb = 0; mb < s.microbatches; ++mb) {
        const StageRange range = s.stages_of(mb);
        for (int stage = range.first; stage <= range.last; ++stage) {
            const std::uint8_t mask = passes[mask_index(s, mb, stage)];
            auto has = [&](Pass pass) { return (mask & pass_bit(pass)) != 0; };
            const int d = s.stage_device[stage];
            auto missing = [&](Pass pass) {
                return ValidationIssue{d, -1,
                                       fmt::format("{} is missing (it belongs on device {})",
                                                   to_string(Op{pass, mb, stage}), d)};
            };
            if (!has(Pass::F)) return missing(Pass::F);
            const bool fused = has(Pass::BW);
            const bool split_b = has(Pass::B);
            const bool split_w = has(Pass::W);
            if (fused && (split_b || split_w))
                return ValidationIssue{
                    d, position_of(s, d, Op{split_b ? Pass::B : Pass::W, mb, stage}),
                    fmt::format("device {}: microbatch {} stage {} has both BW and {}: use either "
                                "the fused backward or B and W",
                                d, mb, stage, split_b ? "B" : "W")};
            if (!fused && !split_b && !split_w) return missing(Pass::BW);
            if (!fused && !split_b) return missing(Pass::B);
            if (!fused && !split_w) return missing(Pass::W);
        }
    }
    return std::nullopt;
}

// Pairs: one list per device, increasing, disjoint, each an F then a B or BW of another
// microbatch.
std::optional<ValidationIssue> check_fb_pairs(const Schedule& s) {
    if (s.fb_pairs.empty()) return std::nullopt;
    if (s.fb_pairs.size() != static_cast<std::size_t>(s.devices))
        return ValidationIssue{
            -1, -1,
            fmt::format("fb_pairs lists {} devices, expected {}", s.fb_pairs.size(), s.devices)};
    for (int d = 0; d < s.devices; ++d) {
        const auto& ops = s.device_ops[d];
        int previous = -2;
        for (const int k : s.fb_pairs[d]) {
            if (k < previous + 2 || k < 0 || static_cast<std::size_t>(k) + 1 >= ops.size())
                return ValidationIssue{
                    d, k,
                    fmt::format("device {}: F&B pair at position {} is out of order, overlaps "
                                "the previous pair or lies past the device's {} ops",
                                d, k, ops.size())};
            const Op& f = ops[static_cast<std::size_t>(k)];
            const Op& b = ops[static_cast<std::size_t>(k) + 1];
            if (f.pass != Pass::F || (b.pass != Pass::B && b.pass != Pass::BW) ||
                f.microbatch == b.microbatch)
                return ValidationIssue{
                    d, k,
                    fmt::format("device {} position {}: an F&B pair is an F then a B or BW of "
                                "another microbatch, got {} {}",
                                d, k, to_string(f), to_string(b))};
            previous = k;
        }
    }
    return std::nullopt;
}

// The deadlock of a schedule whose ops run unpaired but not with its F&B pairs run as one op:
// the devices' wait, each stuck device's op or pair waiting for an input on another device, from
// a stuck pair round the cycle. Named at the pair, so that a file's reader points at its F.
// Runs only for a schedule validate() refuses, so it walks again, recording as it goes.
ValidationIssue pair_deadlock_issue(const Schedule& s) {
    const int stages = s.stages();
    std::vector<std::size_t> cursor(static_cast<std::size_t>(s.devices), 0);
    std::vector<std::uint8_t> done(output_slot_count(s.microbatches, stages), 0);
    const std::vector<double> no_time(static_cast<std::size_t>(stages) * pass_count, 0.0);
    asap_dataflow(s, no_time, 0.0,
                  [&](int d, const Op& op, const DataflowInput*, int, double, double) {
                      ++cursor[static_cast<std::size_t>(d)];
                      if (op.pass != Pass::W) done[output_slot(op, stages)] = 1;
                  });
    const std::vector<std::uint8_t> split = split_backward_flags(s);
    auto pair_at = [&](int d, std::size_t position) {
        const std::vector<int>& pairs = s.fb_pairs[static_cast<std::size_t>(d)];
        return std::binary_search(pairs.begin(), pairs.end(), static_cast<int>(position));
    };
    // What stuck device d waits for: its next op's (or pair's) first input not yet done.
    struct Wait {
        std::string what;
        Op input;
        int device = -1;
    };
    auto wait_of = [&](int d) {
        const std::vector<Op>& ops = s.device_ops[static_cast<std::size_t>(d)];
        const std::size_t k = cursor[static_cast<std::size_t>(d)];
        const bool paired = pair_at(d, k);
        Wait w;
        w.what = paired ? fmt::format("device {} at positions {} and {} (the F&B pair {} {})", d, k,
                                      k + 1, to_string(ops[k]), to_string(ops[k + 1]))
                        : fmt::format("device {} at position {} ({})", d, k, to_string(ops[k]));
        for (std::size_t i = k; i < k + (paired ? 2 : 1) && w.device < 0; ++i)
            for (const Op& input :
                 predecessors(ops[i], s.stages_of(ops[i].microbatch), [&](int stage) {
                     return split[output_slot(Op{Pass::F, ops[i].microbatch, stage}, stages) / 2];
                 }))
                if (!done[output_slot(input, stages)]) {
                    w.input = input;
                    w.device = s.stage_device[static_cast<std::size_t>(input.stage)];
                    break;
                }
        return w;
    };
    int first = -1;
    for (int d = 0; d < s.devices && first < 0; ++d)
        if (cursor[static_cast<std::size_t>(d)] <
                s.device_ops[static_cast<std::size_t>(d)].size() &&
            pair_at(d, cursor[static_cast<std::size_t>(d)]))
            first = d;
    if (first < 0)  // cannot happen: only a pair can block a schedule that runs unpaired
        return ValidationIssue{-1, -1, "deadlock: an F&B pair waits for its own device"};
    const WaitCycle cycle = follow_waits(
        s.devices, first,
        [&](int d) -> std::optional<std::pair<std::string, int>> {
            const Wait w = wait_of(d);
            if (w.device < 0) return std::nullopt;
            return std::pair{
                fmt::format("{} waits for {} on device {}", w.what, to_string(w.input), w.device),
                w.device};
        },
        [&](int d) {
            return cursor[static_cast<std::size_t>(d)] <
                   s.device_ops[static_cast<std::size_t>(d)].size();
        });
    // Named at a pair inside the cycle, the first device's when none is.
    int named = first;
    for (std::size_t i = cycle.steps.size(); i-- > cycle.start;)
        if (pair_at(cycle.step_device[i], cursor[static_cast<std::size_t>(cycle.step_device[i])]))
            named = cycle.step_device[i];
    std::string message = cycle_message(cycle);
    message += " (run unpaired, the ops would not wait: an F&B pair runs its two ops as one)";
    return ValidationIssue{named, static_cast<int>(cursor[static_cast<std::size_t>(named)]),
                           message};
}

}  // namespace

std::optional<ValidationIssue> validate_structure(const Schedule& schedule) {
    if (auto issue = check_shape(schedule)) return issue;
    std::vector<std::uint8_t> passes(static_cast<std::size_t>(schedule.microbatches) *
                                         static_cast<std::size_t>(schedule.stages()),
                                     0);
    if (auto issue = check_ops(schedule, passes)) return issue;
    if (auto issue = check_complete(schedule, passes)) return issue;
    return check_fb_pairs(schedule);
}

std::optional<ValidationIssue> validate(const Schedule& schedule) {
    if (auto issue = validate_structure(schedule)) return issue;
    // The fast walk decides; DependencyWalker, which keeps what it needs for the message,
    // runs only for a schedule that cannot run.
    const std::vector<double> no_time(static_cast<std::size_t>(schedule.stages()) * pass_count,
                                      0.0);
    if (asap_dataflow(schedule, no_time, 0.0,
                      [](int, const Op&, const DataflowInput*, int, double, double) {}))
        return std::nullopt;
    DependencyWalker walker(schedule);
    if (auto issue = walker.run([](int, int, const Op&, const Predecessors&) {})) return issue;
    // Each op can run on its own; only running F&B pairs as one op blocks.
    return pair_deadlock_issue(schedule);
}

void require_valid(const Schedule& schedule) {
    if (auto issue = validate(schedule))
        throw InvalidSchedule(
            fmt::format("schedule '{}' is invalid: {}", schedule.name, issue->message));
}

}  // namespace pipesim
