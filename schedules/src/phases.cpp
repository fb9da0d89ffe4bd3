#include "schedules/phases.hpp"

#include <utility>

namespace pipesim {

namespace {

// Per thread: a sweep's workers run analyses side by side, each unreported.
thread_local PhaseReporter current;

}  // namespace

ReportPhases::ReportPhases(PhaseReporter reporter) : previous_(std::move(current)) {
    current = std::move(reporter);
}

ReportPhases::~ReportPhases() {
    current = std::move(previous_);
}

void report_phase(std::string_view phase) {
    if (current) current(phase);
}

bool reporting_phases() {
    return static_cast<bool>(current);
}

}  // namespace pipesim
