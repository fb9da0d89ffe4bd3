#pragma once
// Where a step's time goes, device by device: the kernels (compute-bound GEMMs, fused
// attention, memory-bound kernels), the communication inside the passes, the pipeline's idle
// time, the data-parallel communication left exposed and the optimizer step. docs/models.md,
// "Where the step goes".

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/layer_kernels.hpp"
#include "analysis/run.hpp"

namespace pipesim::analysis {

/// What holds a kernel: a GEMM (or the unfused attention's batched GEMMs) that reaches its
/// compute roofline, the fused attention kernel, or a kernel HBM holds (a GEMM too small for
/// its compute roofline counts here).
enum class KernelShare { gemm, attention, memory };
inline constexpr std::size_t kernel_share_count = 3;

/// The share `kernel` belongs to.
KernelShare kernel_share(const LayerKernel& kernel);

/// "compute-bound GEMMs", "fused attention" or "memory-bound kernels".
const char* kernel_share_label(KernelShare share);

/// One device's step time, split. The parts add up to the step time (ModelAnalysis::step_time).
struct DeviceTime {
    /// Kernel seconds per share (operator-level model only; all 0 otherwise), recomputed
    /// forward kernels included.
    std::array<double, kernel_share_count> shares{};
    double kernels = 0;  ///< all kernels: the passes' computation (any cost model)
    /// Of `kernels`, forward kernels re-run before B (operator-level model only; 0 otherwise).
    double recompute = 0;
    /// Busy time beyond the kernels: tensor-parallel collectives and ring attention's K/V
    /// transfers left exposed inside the passes (the SimGrid engine's simulated ones).
    double communication = 0;
    /// Idle inside the pipeline: the makespan (with post-validation, the step's period less
    /// the device's own reduction and optimizer step) not spent in its passes.
    double pipeline_idle = 0;
    /// Data-parallel communication after the device's last pass: the gradient reduction and
    /// the parameter all-gather where no pass hides them (the iteration time less the makespan;
    /// with post-validation the device's own).
    double data_parallel = 0;
    /// The optimizer step (the slowest device's, which every device waits for; with
    /// post-validation the device's own).
    double optimizer = 0;

    double total() const {
        return kernels + communication + pipeline_idle + data_parallel + optimizer;
    }
};

struct TimeBudget {
    double step_time = 0;             ///< ModelAnalysis::step_time: every device's total
    bool kernel_shares = false;       ///< DeviceTime::shares filled (operator-level model)
    std::vector<DeviceTime> devices;  ///< per pipeline device (one GPU of its TP group)
    DeviceTime all;                   ///< summed over the devices
};

/// The budget of a run with a model (`a.model` set and summarized by run()): each op a device
/// ran is charged its stage's kernel seconds for its pass (BW: B and W); the device's busy time
/// beyond them is communication. Throws std::invalid_argument without a model.
TimeBudget time_budget(const Analysis& a);

/// One part of all devices' time (TimeBudget::all) as a share of p × the step time, by its
/// JSON key.
struct StepShare {
    std::string key;
    double share = 0;
};

/// The parts of `time` as shares of `whole` seconds, in order: gemm, attention, memory_bound
/// (with `kernel_shares`) or kernels, then communication, pipeline_idle, data_parallel and
/// optimizer.
std::vector<StepShare> step_shares(const DeviceTime& time, double whole, bool kernel_shares);

/// All devices' parts (TimeBudget::all) as shares of p × the step time, adding up to 1.
std::vector<StepShare> step_shares(const TimeBudget& budget);

/// A part's name in tables, by its JSON key ("gemm": "GEMMs", "pipeline_idle": "pipeline
/// idle", ...); the key itself for one it does not know.
std::string step_share_label(std::string_view key);

/// The `time_budget` JSON object: step_time, then per device and for all of them the parts in
/// seconds (gemm, attention and memory_bound only with the operator-level model).
nlohmann::ordered_json time_budget_json(const TimeBudget& budget);

}  // namespace pipesim::analysis
