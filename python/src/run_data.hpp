#pragma once
// What a Python result holds of one run: the `--json` object and the timeline with its
// memory model (for the picture and the op arrays), plus the schedule that ran.

#include <memory>
#include <mutex>
#include <string>

#include "analysis/run.hpp"

namespace pipesim::python {

/// What analyze() leaves for later: its spec and engine, run again with every op and
/// transfer recorded the first time a method needs them. analyze() itself times the
/// schedule without those records, as the command line does unless it draws or saves (the
/// records of 1F1B at p = 64, m = 100,000 took 5 of its 6 s, and a notebook comparing
/// configurations reads only the figures); the replay is exact, so the times are the same.
struct PendingRecords {
    analysis::PipelineSpec spec;
    analysis::AnalyticEngine engine;
    std::mutex mutex;   ///< held while the records are made
    bool made = false;  ///< RunData::timeline has them
};

struct RunData {
    std::string json;  ///< analysis_json(), dumped
    Schedule schedule;
    Timeline timeline;
    MemoryModel memory;
    /// For the picture (viz::TimelinePictureOptions): memory in bytes (a model gave it), and
    /// the iteration time (with post-validation, the period) the table gives.
    bool memory_in_bytes = false;
    double iteration_time = 0;
    bool post_validation = false;
    /// Non-null where the timeline's ops and transfers are made when first needed
    /// (module.cpp's recorded()); `timeline` then has the schedule's shape and no ops until
    /// `made`.
    std::shared_ptr<PendingRecords> pending;
};

/// The data of `result`, run from `spec`: its schedule, timeline and memory model are moved,
/// not copied (two copies of a large timeline would pass the run's memory check and then run
/// out of memory).
RunData run_data(analysis::Analysis&& result, const analysis::PipelineSpec& spec);

/// A run rebuilt from its texts: the result JSON, the schedule JSON and the timeline with its
/// memory model, as timeline_bytes() (what simulate_in_child's child sends, and what pickle
/// keeps) or, with `timeline_is_bytes` false, as a saved timeline's JSON.
RunData run_from_texts(std::string json, std::string_view schedule, std::string timeline,
                       bool timeline_is_bytes = false);

/// Runs a prepared pipeline on the SimGrid engine in a child process (SimGrid allows one
/// engine per process, a notebook runs many) and returns its data; with `html_call` not
/// empty the child also makes the run's HTML report (simulate --html's, `html_call` as its
/// command) into `html`. Throws
/// std::invalid_argument or std::runtime_error with the child's message, std::runtime_error
/// when the child dies or cannot be started. `interrupted` is polled while waiting; when it
/// returns true the child is killed and std::runtime_error("interrupted") thrown.
RunData simulate_in_child(analysis::Pipeline pipeline, const analysis::SimGridEngine& engine,
                          bool (*interrupted)(), const std::string& html_call = {},
                          std::string* html = nullptr);

}  // namespace pipesim::python
