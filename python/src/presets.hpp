#pragma once
// The presets the command line's `pipesim list` prints, for the package's models(), gpus()
// and clusters(): each model and GPU as the fields of its file format (docs/model-format.md,
// docs/gpu-format.md), so that a dict written out as JSON, with a name of one's own, is a
// file describing the same model or GPU.

#include <pybind11/pybind11.h>

namespace pipesim::python {

/// [(name, {model file field: value})] for every model preset, in `pipesim list`'s order.
pybind11::list model_presets();

/// [(name, {GPU file field: value})] for every GPU preset.
pybind11::list gpu_presets();

/// [(name, description)] for every cluster preset.
pybind11::list cluster_presets();

}  // namespace pipesim::python
