#pragma once
// Seconds per pass: FLOPs over an achieved rate (analytic) or measured times (calibrated).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu.hpp"
#include "models/layer_costs.hpp"
#include "models/transformer.hpp"

namespace pipesim::models {

/// Durations in seconds of F, B (with any recomputation) and W on one GPU.
struct PassTimes {
    double forward = 0;
    double backward_input = 0;
    double backward_weight = 0;
    double total() const { return forward + backward_input + backward_weight; }
};

/// Turns one microbatch's work into seconds on one GPU (after the TP split). An interface so
/// tests can use a fake and calibration can replace the analytic rates.
class CostModel {
  public:
    virtual ~CostModel() = default;
    /// One transformer layer.
    virtual PassTimes layer(const TransformerConfig& config, const Workload& workload) const = 0;
    /// The LM head and loss (last stage).
    virtual PassTimes head(const TransformerConfig& config, const Workload& workload) const = 0;
    /// The embedding lookup (first stage); 0 unless the model times memory-bound work.
    virtual PassTimes embedding(const TransformerConfig& /*config*/,
                                const Workload& /*workload*/) const {
        return {};
    }
    /// The GPU whose peak defines MFU.
    virtual const GpuSpec& gpu() const = 0;
};

/// The least share of a peak rate a model takes (an efficiency, a GPU file's rate shares):
/// far below any GPU's, and it keeps derived times finite (a pass's FLOPs, at most about 1e18,
/// at 1 GFLOP/s and 1e-6 of it take 1e15 s; an efficiency of 1e-308 once gave inf and NaN).
inline constexpr double least_efficiency = 1e-6;

/// time = FLOPs / t / (peak × efficiency), one efficiency per pass: the single-efficiency
/// model `--efficiency E` selects and calibration files fall back to (the default is
/// OperatorCostModel, models/roofline.hpp).
class AnalyticCostModel : public CostModel {
  public:
    /// Efficiencies must be in (0, 1]; throws std::invalid_argument otherwise.
    AnalyticCostModel(GpuSpec gpu, double efficiency);
    AnalyticCostModel(GpuSpec gpu, double forward_eff, double backward_input_eff,
                      double backward_weight_eff);
    PassTimes layer(const TransformerConfig& config, const Workload& workload) const override;
    PassTimes head(const TransformerConfig& config, const Workload& workload) const override;
    const GpuSpec& gpu() const override { return gpu_; }
    /// Seconds for `flops` of pass kind F (0), B (1) or W (2) on one GPU.
    double seconds(double flops, int pass) const;

  private:
    GpuSpec gpu_;
    double efficiency_[3];
};

/// One measured layer shape from a calibration file (format: docs/calibration-format.md).
struct CalibrationEntry {
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0;
    int ffn_hidden = 0;
    Mlp mlp = Mlp::gelu;
    int seq_len = 0;
    int microbatch = 0;
    int tp = 1;
    PassTimes times;  ///< seconds for one layer on one GPU, no recomputation
    /// The attention kernel the times were measured with; none (files that do not say): any.
    std::optional<AttentionKernel> attention;
};

/// A calibration file: measured per-layer times on one GPU model.
struct Calibration {
    std::string gpu;     ///< a name from gpu_specs()
    std::string device;  ///< what the driver called the device (informational)
    std::vector<CalibrationEntry> layers;
    std::string source;  ///< the file it was read from, for messages ("" when built in code)
};

/// Largest values a calibration file may hold (docs/calibration-format.md, "Limits"); layer
/// shapes share ModelLimits.
struct CalibrationLimits {
    static constexpr std::size_t max_file_bytes = std::size_t{8} << 20;  ///< 8 MiB
    static constexpr std::size_t max_entries = 10'000;                   ///< elements of `layers`
    static constexpr int max_microbatch = 1 << 16;
    static constexpr int max_tp = 1 << 10;
    static constexpr double max_seconds = 3600;  ///< one layer's pass
    static constexpr int max_depth = 8;  ///< nesting of arrays and objects (the file needs 5)
};

/// Parses a calibration JSON document. `source` names it in messages. Throws
/// std::invalid_argument (a pipesim::fileio::ParseError, "SOURCE:LINE:COLUMN: ...") for syntax
/// errors, repeated keys, too deep nesting, missing or mistyped fields, values beyond
/// the limits, unknown GPUs, non-positive times, or an empty `layers` list. Values from the
/// file appear only as short excerpts with control bytes escaped.
Calibration parse_calibration(std::string_view text, const std::string& source);
/// Reads (at most CalibrationLimits::max_file_bytes) and parses a calibration file. Throws
/// std::invalid_argument "PATH: cannot read: REASON" if it cannot be read.
Calibration load_calibration(const std::string& path);

/// Measured times where the file has the exact shape (hidden, heads, kv_heads, ffn, mlp,
/// seq, microbatch, tp) and, if the entry names one, the workload's attention kernel; elsewhere the
/// analytic model with the per-pass efficiency measured in the file (median over its entries of
/// FLOPs / (time × peak)). Recomputation adds the measured (or estimated) forward work to B. The
/// head always uses the analytic estimate at the measured per-pass efficiencies.
class CalibratedCostModel : public CostModel {
  public:
    /// Throws std::invalid_argument if the calibration's GPU is not `gpu` or it has no layers.
    CalibratedCostModel(GpuSpec gpu, Calibration calibration);
    PassTimes layer(const TransformerConfig& config, const Workload& workload) const override;
    PassTimes head(const TransformerConfig& config, const Workload& workload) const override;
    const GpuSpec& gpu() const override { return fallback_.gpu(); }
    /// Whether an entry of the file has this layer's exact shape (its times are then used
    /// as measured; otherwise the fallback's efficiencies).
    bool measured(const TransformerConfig& config, const Workload& workload) const;
    /// The fallback analytic model (efficiencies measured from the file).
    const AnalyticCostModel& fallback() const { return fallback_; }

  private:
    Calibration calibration_;
    AnalyticCostModel fallback_;
};

}  // namespace pipesim::models
