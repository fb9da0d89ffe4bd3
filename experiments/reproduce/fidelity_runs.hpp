#pragma once
// The fidelity report's data and runs: Megatron-LM's published GPT runs (Narayanan et al.,
// SC'21, Table 1) as pipeline specs, timed predictions with either engine, and the error
// statistics the report quotes.

#include <array>
#include <string>
#include <vector>

#include "analysis/run.hpp"

namespace pipesim::reproduce::fidelity {

/// One row of SC'21 Table 1 (GPT, s = 2048, V = 51200, full recomputation, no SP, DGX A100
/// 80 GB nodes): model shape, parallel layout, batch and the published TFLOP/s per GPU.
struct Sc21Row {
    const char* label;
    const char* model;  ///< experiments/fidelity/models/<model>.json
    int layers, hidden, tp, pp, mb, batch, nodes, chunks;
    double tflops;  ///< published, per GPU (their eq. 3, recomputation included)
    /// Megatron-LM's examples/sc21/run_table_1.sh: DDP=torch (PyTorch DDP, whose buckets are
    /// all-reduced during the last backward) for the rows without pipelining, DDP=local (one
    /// all-reduce after the whole pipeline) for the others.
    bool torch_ddp;

    int gpus() const { return nodes * 8; }
    int dp() const { return gpus() / (tp * pp); }
    int microbatches() const { return batch / (mb * dp()); }
};

inline constexpr std::array<Sc21Row, 10> sc21 = {{
    {"1.7B", "sc21-1.7b", 24, 2304, 1, 1, 16, 512, 4, 1, 137, true},
    {"3.6B", "sc21-3.6b", 30, 3072, 2, 1, 16, 512, 8, 1, 138, true},
    {"7.5B", "sc21-7.5b", 36, 4096, 4, 1, 16, 512, 16, 1, 142, true},
    {"18B", "sc21-18b", 40, 6144, 8, 1, 8, 1024, 32, 1, 135, true},
    {"39B", "sc21-39b", 48, 8192, 8, 2, 4, 1536, 64, 1, 138, false},
    {"76B", "sc21-76b", 60, 10240, 8, 4, 2, 1792, 128, 3, 140, false},
    {"145B", "sc21-145b", 80, 12288, 8, 8, 2, 2304, 192, 2, 148, false},
    {"310B", "sc21-310b", 96, 16384, 8, 16, 1, 2160, 240, 2, 155, false},
    {"530B", "sc21-530b", 105, 20480, 8, 35, 1, 2520, 315, 3, 163, false},
    {"1T", "sc21-1t", 128, 25600, 8, 64, 1, 3072, 384, 1, 163, false},
}};

/// FLOPs of one iteration as SC'21 counts them (eq. 3, with recomputation):
/// 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)).
double sc21_iteration_flops(const Sc21Row& row);

/// Model FLOPs of one iteration as Korthikanti et al. (MLSys 2023, §6.3) count them for their
/// MFU, without recomputation: 72·B·s·l·h²·(1 + s/(6h) + V/(12lh)).
double model_iteration_flops(const Sc21Row& row);

/// The one mapping of every row: 1F1B (interleaved with the row's chunks when > 1), the
/// layers split evenly over the p·v stages (as Megatron-LM does), full recomputation, no
/// sequence parallelism, the unfused attention of 2021, on `gpu`.
analysis::PipelineSpec sc21_spec(const Sc21Row& row, const std::string& models_dir,
                                 const std::string& gpu = "a100-80gb");

/// A timed prediction: the step time (iteration and optimizer step, seconds) and peak memory.
struct Prediction {
    bool ran = false;
    std::string note;       ///< why it did not run
    double step_time = 0;   ///< seconds
    double samples = 0;     ///< samples per second over all GPUs
    double peak_bytes = 0;  ///< the largest device's weights, optimizer state and activations
    double wall = 0;        ///< seconds the prediction took
    /// Shares of all devices' step time (analysis::time_budget()): compute-bound GEMMs, fused
    /// attention, memory-bound kernels, and the rest (communication, idle, data-parallel
    /// communication, optimizer step); analytic predictions on the operator-level model only.
    std::array<double, 4> step_shares{};
};

/// The analytic replay of `spec`; with dp > 1 the gradient reduction overlapped with the last
/// backward or after the pipeline; with `post_validation` the step is the period of repeated
/// iterations without a pipeline-wide synchronization (AnalyticEngine::post_validation); with
/// `overlap_param_gather` a sharded optimizer's parameter all-gather runs beside the first
/// forward (AnalyticEngine::overlap_param_gather).
Prediction predict_analytic(const analysis::PipelineSpec& spec, bool overlap_grad_reduce = true,
                            bool post_validation = false, bool overlap_param_gather = false);

/// The SimGrid model of `spec` on `cluster`, in a child process (SimGrid allows one engine per
/// process) stopped after `limit_s` seconds; the gradient reduction overlapped with the last
/// backward or after the pipeline; `post_validation` as predict_analytic's.
Prediction predict_simgrid(const analysis::PipelineSpec& spec, const std::string& cluster,
                           int limit_s, bool overlap_grad_reduce = true,
                           bool post_validation = false);

/// A diagnostic, not a fitted rate: the GEMM ceiling (GpuSpec::gemm_efficiency of `spec`'s GPU,
/// every other rate as it is) at which the analytic replay's samples per second over all GPUs
/// equal `target`. Found by bisection over [0.2, 1] with a GPU file written to the temporary
/// directory; 0 when even 0.2 is faster than `target`, 1 when even 1 is slower.
double implied_gemm_ceiling(analysis::PipelineSpec spec, double target,
                            bool overlap_grad_reduce = true, bool post_validation = false);

/// Signed relative errors' summary.
struct ErrorStats {
    double mean_abs = 0;
    double max_abs = 0;
    double spearman = 0;  ///< rank correlation of predicted and published
    double pearson = 0;   ///< of the signed errors against the published values
};

/// Statistics of predicted against published (same length, at least two).
ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& published);

}  // namespace pipesim::reproduce::fidelity
