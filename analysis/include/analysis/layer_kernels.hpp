#pragma once
// One transformer layer's kernels as the operator-level model times them (`pipesim analyze
// --kernels`): what a pass's time is made of, kernel by kernel, on one GPU.

#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model_plan.hpp"
#include "models/operators.hpp"
#include "models/roofline.hpp"

namespace pipesim::analysis {

/// One kernel and its time.
struct LayerKernel {
    models::Operator op;
    models::OperatorTime time;
};

/// One layer per microbatch on one GPU of its tensor-parallel group.
struct LayerKernels {
    std::vector<LayerKernel> kernels;  ///< in execution order within each pass
    /// The kernels' seconds per pass, the forward kernels that recomputation re-runs included
    /// in B (what the plan charges a layer, before communication).
    models::PassTimes kernel_seconds;
    double recomputed_seconds = 0;  ///< of those, the forward kernels re-run before B
    /// Tensor-parallel all-reduces: bytes and seconds of one, how many in F and in B (B's
    /// include the recomputed forward's), and the share hidden behind the GEMMs.
    double tp_bytes = 0;
    double tp_seconds = 0;
    int tp_forward = 0;
    int tp_backward = 0;
    double tp_overlap = 0;
    /// Context parallelism: the ring's K/V transfer time left exposed in F and B.
    models::PassTimes cp_exposed;
    /// The first stage's extra kernels (the embedding) and the last stage's (the final norm,
    /// the logits GEMMs and the loss), per microbatch on one GPU, in execution order.
    std::vector<LayerKernel> embedding;
    std::vector<LayerKernel> head;
    models::PassTimes embedding_seconds;  ///< their seconds per pass
    models::PassTimes head_seconds;
};

/// The kernels of `model`'s layers. Throws std::invalid_argument unless the model's times
/// come from the operator-level model (not a calibration file or one efficiency).
LayerKernels layer_kernels(const ModelAnalysis& model);

/// The `analyze --kernels --json` list: per kernel its pass (F, B, W), name, kind (gemm,
/// attention, memory), GEMM shape, flops, bytes, bound (compute or memory), the efficiency
/// of that bound and seconds; then the per-pass totals and the collectives; then the
/// embedding's and the head's kernels, listed alike.
nlohmann::ordered_json layer_kernels_json(const LayerKernels& kernels);

}  // namespace pipesim::analysis
