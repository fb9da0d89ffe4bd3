#include "run_data.hpp"

#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/child_run.hpp"
#include "analysis/result_json.hpp"
#include "html_output.hpp"
#include "schedules/schedule_json.hpp"
#include "sim/simgrid/simulate.hpp"
#include "timeline_bytes.hpp"
#include "viz/timeline_file.hpp"

namespace pipesim::python {

namespace {

// Sections of the child's answer: each "LENGTH\n" and that many bytes.
void append_section(std::string& out, std::string_view text) {
    out += fmt::format("{}\n", text.size());
    out += text;
}

std::string_view next_section(std::string_view& in) {
    const auto newline = in.find('\n');
    if (newline == std::string_view::npos) throw std::runtime_error("simulation: truncated answer");
    const std::size_t size = std::stoul(std::string(in.substr(0, newline)));
    if (size > in.size() - newline - 1) throw std::runtime_error("simulation: truncated answer");
    const std::string_view section = in.substr(newline + 1, size);
    in.remove_prefix(newline + 1 + size);
    return section;
}

}  // namespace

RunData run_data(analysis::Analysis&& result, const analysis::PipelineSpec& spec) {
    std::string json = analysis::json_text(analysis::analysis_json(result, spec));
    RunData data;
    data.json = std::move(json);
    data.schedule = std::move(result.schedule);
    data.timeline = std::move(result.timeline);
    data.memory = std::move(result.memory);
    data.memory_in_bytes = result.model.has_value();
    data.iteration_time = result.iteration_time;
    data.post_validation = result.post_validation;
    return data;
}

RunData simulate_in_child(analysis::Pipeline pipeline, const analysis::SimGridEngine& engine,
                          bool (*interrupted)(), const std::string& html_call, std::string* html) {
    simgrid::load_engine();  // in this process: later runs' children share it
    // The child's answer: the JSON, the schedule JSON, the saved timeline and the HTML report
    // (empty when not asked for), in sections.
    const std::string answer = analysis::run_in_child(
        [&] {
            const analysis::PipelineSpec spec = pipeline.spec;
            analysis::Analysis result = analysis::run_with_baseline(std::move(pipeline), engine);
            const std::string report = html_call.empty()
                                           ? std::string()
                                           : cli::single_html("simulate", html_call, spec, result);
            const RunData data = run_data(std::move(result), spec);
            std::string out;
            append_section(out, data.json);
            append_section(out, schedule_to_json(data.schedule));
            append_section(out, timeline_bytes(data.timeline, data.memory));
            append_section(out, report);
            return out;
        },
        interrupted ? std::function<bool()>(interrupted) : std::function<bool()>());
    std::string_view in(answer);
    std::string json(next_section(in));
    const std::string_view schedule = next_section(in);
    const std::string_view timeline = next_section(in);
    if (html) *html = next_section(in);
    return run_from_texts(std::move(json), schedule, std::string(timeline),
                          /*timeline_is_bytes=*/true);
}

RunData run_from_texts(std::string json, std::string_view schedule, std::string timeline,
                       bool timeline_is_bytes) {
    RunData data;
    // The picture's facts, from the result as analysis_json() wrote them.
    const auto result = nlohmann::json::parse(json);
    data.memory_in_bytes = result.contains("model");
    data.post_validation = result.value("post_validation", false);
    data.iteration_time = result.value(data.post_validation ? "period" : "iteration_time", 0.0);
    data.json = std::move(json);
    data.schedule = parse_schedule_json(schedule, "the run's schedule");
    if (timeline_is_bytes) {
        timeline_from_bytes(timeline, "the run's timeline", data.timeline, data.memory);
        return data;
    }
    viz::SavedTimeline saved = viz::parse_timeline_json(std::move(timeline), "the run's timeline");
    if (!saved.memory) throw std::invalid_argument("the run's timeline: no memory model");
    data.timeline = std::move(saved.timeline);
    data.memory = std::move(*saved.memory);
    return data;
}

}  // namespace pipesim::python
