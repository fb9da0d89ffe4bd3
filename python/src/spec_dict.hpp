#pragma once
// The pipeline the Python layer describes as a dict of checked, plain values (see
// pipesim/_spec.py), turned into the library's PipelineSpec and SimGrid engine.

#include <pybind11/pybind11.h>

#include "analysis/run.hpp"

namespace pipesim::python {

/// Keys: schedule (str) or given (Schedule), p, m, v, group_size (ints, 0 = default),
/// costs (list of [F, B, W]), mem_w_ratio, comm, dp, tp, and model: None or a dict with
/// model, gpu, mb, seq, sequence_parallel, recompute, efficiency, calibration, dist_opt,
/// first_stage_layers, last_stage_layers. Throws std::invalid_argument for a bad
/// recompute name; pybind11::cast_error for a value of the wrong type.
analysis::PipelineSpec spec_from_dict(const pybind11::dict& d);

/// Keys: cluster (name or file), layout_order (str or None), message_bytes, grad_bytes,
/// overlap_grad_reduce, bw_scale, lat_scale, stragglers (list of [gpu, factor]), nccl_algo
/// (None or "ring", "tree", "auto"; std::invalid_argument otherwise). Loads the cluster
/// (throws std::invalid_argument as load_checked_cluster does).
analysis::SimGridEngine engine_from_dict(const pybind11::dict& d);

}  // namespace pipesim::python
