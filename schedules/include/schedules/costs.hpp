#pragma once
// Per-stage pass durations: what the engines replay and what cost-aware generators plan with.

#include <vector>

namespace pipesim {

/// The F, B and W times of one stage (or of a full stage, to be split over its chunks).
struct PassCosts {
    double forward = 1;
    double backward_input = 1;
    double backward_weight = 1;

    bool operator==(const PassCosts&) const = default;
};

/// Durations of F, B and W for each virtual stage (BW = B + W). Any time unit, used as is.
struct StageCosts {
    std::vector<double> forward;
    std::vector<double> backward_input;
    std::vector<double> backward_weight;

    std::size_t stages() const { return forward.size(); }
    bool operator==(const StageCosts&) const = default;
};

/// One full stage's F, B, W (a device's share of the layers) split evenly over the `split`
/// chunks a microbatch passes through on a device (0: all v chunks): each of the p·v
/// virtual stages gets F/split, B/split, W/split. DualPipe's chunks are full stages of one
/// of two model copies (split 1; Schedule::microbatch_chunks). Throws
/// std::invalid_argument for negative or non-finite costs.
StageCosts uniform_stage_costs(int devices, int chunks, double f, double b, double w,
                               int split = 0);

/// Throws std::invalid_argument unless `costs` has `stages` entries in each vector and every
/// duration is finite and ≥ 0; the message names the stage and pass.
void check_stage_costs(const StageCosts& costs, int stages);

/// The duration table the timed walks index by stage·pass_count + pass (BW = B + W).
/// Precondition: the three vectors have one entry per stage.
std::vector<double> pass_durations(const StageCosts& costs);

}  // namespace pipesim
