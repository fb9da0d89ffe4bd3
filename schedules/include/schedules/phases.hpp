#pragma once
// The phases of a long analysis, named as they start: the command line shows them on a
// terminal, and the Python module checks for Ctrl-C between them (what the reporter throws
// ends the analysis, which keeps nothing half-built). The generators report their own steps
// too (each of the Zero Bubble heuristic's choices, say), so that no phase runs for long.

#include <functional>
#include <string_view>

namespace pipesim {

/// Called with each phase's name as it starts ("generating zb-1p p·v·m = 4096·1·4096",
/// "timing the 1F1B baseline", "replaying zb-1p (50331648 ops)", ...).
using PhaseReporter = std::function<void(std::string_view phase)>;

/// Reports phases of the analyses this thread runs to `reporter` while it lives (then to the
/// one before it).
class ReportPhases {
  public:
    explicit ReportPhases(PhaseReporter reporter);
    ~ReportPhases();
    ReportPhases(const ReportPhases&) = delete;
    ReportPhases& operator=(const ReportPhases&) = delete;

  private:
    PhaseReporter previous_;
};

/// Tells this thread's reporter, if any, that `phase` starts.
void report_phase(std::string_view phase);

/// Whether this thread has a reporter (to skip composing a phase's name no one reads).
bool reporting_phases();

}  // namespace pipesim
