#pragma once
// Splitting the layers of a model into contiguous pipeline stages.

#include <span>
#include <vector>

namespace pipesim::models {

/// Constraints on a split. A fixed count of -1 leaves that stage free; 0 makes the first
/// (last) stage hold only the embedding (the head), as Megatron-LM's padded layer split and
/// Llama 3's pipeline place them.
struct PartitionOptions {
    int first_stage_layers = -1;  ///< layers on the first stage (e.g. fewer: it has the embedding)
    int last_stage_layers = -1;   ///< layers on the last stage (e.g. fewer: it has the LM head)
    /// Every stage's layer count, given instead of planned (plan_pipeline checks it: one per
    /// stage, their sum the model's layers, at least one each but where the two above fix 0);
    /// for a caller that tries other arrangements of a planned split.
    std::vector<int> stage_layers = {};
};

/// Splits layers with costs `layer_costs` (in model order) into `parts` contiguous groups of
/// at least one layer (the first or last none when its count is fixed to 0), where group 0 also
/// pays `first_extra` and the last group `last_extra`, minimizing the largest group cost (exact: a
/// bisection over the doubles with an O(n) test). Among the optimal splits it returns the one with
/// the smallest sum of squared group costs (the most even one), by dynamic programming over the
/// ends each group can have under that bottleneck (about n·parts steps for equal layers, at most
/// parts·n²). Returns the layer count of each group.
///
/// Throws std::invalid_argument when it cannot be done: parts < 1, more non-empty parts than
/// layers, a single part fixed to 0, fixed counts that do not fit, or negative costs.
std::vector<int> partition_layers(std::span<const double> layer_costs, int parts,
                                  double first_extra, double last_extra,
                                  const PartitionOptions& options = {});

/// partition_layers() for groups that run on devices: group j on device `stage_device[j]`
/// (one entry per group; several groups on one device where a device holds several virtual
/// stages, as interleaved 1F1B and the V-shapes place them). A device runs each of its
/// groups once per microbatch, so its load is the sum of their costs, and the slowest device
/// bounds the iteration: the split minimizes the slowest device's load first, then the
/// slowest group, then the sum of squared group costs. With one group per device this is
/// partition_layers(). Needs every layer to cost the same (a transformer's layers do): layers
/// of different costs throw std::invalid_argument; otherwise throws as partition_layers().
std::vector<int> partition_layers_on_devices(std::span<const double> layer_costs,
                                             std::span<const int> stage_device, double first_extra,
                                             double last_extra,
                                             const PartitionOptions& options = {});

/// The largest group cost of a split (as partition_layers defines it).
double partition_bottleneck(std::span<const double> layer_costs, std::span<const int> counts,
                            double first_extra, double last_extra);

}  // namespace pipesim::models
