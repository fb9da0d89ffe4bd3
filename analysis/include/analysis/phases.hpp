#pragma once
// The phases of a long analysis (schedules/phases.hpp), under the analysis layer's names.

#include "schedules/phases.hpp"

namespace pipesim::analysis {

using pipesim::PhaseReporter;
using pipesim::report_phase;
using pipesim::ReportPhases;

}  // namespace pipesim::analysis
