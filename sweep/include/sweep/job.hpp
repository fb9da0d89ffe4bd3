#pragma once
// Running one sweep job in the calling process.

#include "analysis/run.hpp"
#include "analysis/spec.hpp"
#include "sweep/results.hpp"

namespace pipesim::sweep {

/// Runs `job` with its engine and classifies the outcome (see Status). Never throws for bad
/// configurations: they become infeasible rows; other exceptions become error rows.
/// A SimGrid job may run at most once per process (SimGrid allows one engine): the sweep
/// runner gives each job a fresh worker process.
Result run_job(const Job& job);

/// The pipeline a job describes (schedule, shape, costs or model, layout).
analysis::PipelineSpec pipeline_spec(const Job& job);

/// The engine a job runs on, recording neither transfers nor (analytic) ops, with its
/// gradient-reduction options and, for SimGrid, its cluster (whose layout is checked first:
/// throws std::invalid_argument when the job's GPUs do not fit).
analysis::Engine job_engine(const Job& job);

}  // namespace pipesim::sweep
