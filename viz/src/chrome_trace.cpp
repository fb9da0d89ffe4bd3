#include "viz/chrome_trace.hpp"

#include <array>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "json_text.hpp"
#include "op_graph.hpp"
#include "style.hpp"

namespace pipesim::viz {

using detail::json_number;
using detail::json_string;

namespace {

struct TimeUnit {
    std::string_view name;
    double microseconds;
};

constexpr std::array<TimeUnit, 4> time_units = {
    {{"unit", 1e3}, {"s", 1e6}, {"ms", 1e3}, {"us", 1.0}}};

const TimeUnit* find_time_unit(std::string_view name) {
    for (const TimeUnit& unit : time_units)
        if (unit.name == name) return &unit;
    return nullptr;
}

}  // namespace

double microseconds_per_unit(std::string_view unit) {
    if (const TimeUnit* known = find_time_unit(unit)) return known->microseconds;
    throw std::invalid_argument(fmt::format("unknown time unit '{}' (a timeline's time_unit is {})",
                                            unit, known_time_units()));
}

bool known_time_unit(std::string_view time_unit) {
    return find_time_unit(time_unit) != nullptr;
}

std::string known_time_units() {
    std::string out;
    for (std::size_t i = 0; i < time_units.size(); ++i) {
        if (i > 0) out += i + 1 < time_units.size() ? ", " : " or ";
        out += fmt::format("\"{}\"", time_units[i].name);
    }
    return out;
}

std::string_view trace_colour(Pass pass) {
    // Catapult's reserved colour names nearest the picture's pass colours.
    switch (pass) {
        case Pass::F:
            return "thread_state_runnable";  // vista blue
        case Pass::B:
            return "thread_state_iowait";  // orange
        case Pass::W:
            return "thread_state_running";  // seafoam green
        case Pass::BW:
            return "thread_state_uninterruptible";  // light mauve
    }
    return "generic_work";
}

void write_chrome_trace(const Timeline& t, const MemoryModel* memory,
                        const ChromeTraceOptions& options, const fileio::TextSink& sink) {
    const double us = microseconds_per_unit(t.time_unit);
    // What can refuse comes before the first piece: the dependencies (an op order that is
    // not a valid schedule).
    const std::optional<detail::OpGraph> graph =
        options.flows ? std::optional<detail::OpGraph>(detail::build_op_graph(t)) : std::nullopt;
    // The text goes to `sink` a megabyte at a time: a trace of millions of ops held whole
    // took three times its size at its peak, as the string grew by doubling.
    constexpr std::size_t piece_bytes = std::size_t{1} << 20;
    std::string out;
    out.reserve(piece_bytes + 4096);
    out = "{\"displayTimeUnit\": \"ms\",\n";
    out += fmt::format(
        " \"otherData\": {{\"schedule\": {}, \"devices\": {}, \"microbatches\": {}, \"chunks\": "
        "{}, \"time_unit\": {}, \"microseconds_per_unit\": {}}},\n",
        json_string(t.schedule), t.devices, t.microbatches, t.chunks, json_string(t.time_unit),
        json_number(us));
    out += " \"traceEvents\": [\n";
    bool first = true;
    auto event = [&](const std::string& body) {
        out += first ? "  {" : ",\n  {";
        out += body;
        out += "}";
        first = false;
        if (out.size() >= piece_bytes) {
            sink(out);
            out.clear();
        }
    };
    for (int d = 0; d < t.devices; ++d) {
        event(fmt::format(
            R"("name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": "device {}"}})",
            d, d));
        event(fmt::format(
            R"("name": "process_sort_index", "ph": "M", "pid": {}, "tid": 0, "args": {{"sort_index": {}}})",
            d, d));
        event(fmt::format(
            R"("name": "thread_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": "compute"}})",
            d));
        event(fmt::format(
            R"("name": "thread_name", "ph": "M", "pid": {}, "tid": 1, "args": {{"name": "sends"}})",
            d));
        event(fmt::format(
            R"("name": "thread_name", "ph": "M", "pid": {}, "tid": 2, "args": {{"name": "collectives"}})",
            d));
    }
    // Durations as the difference of the microsecond times shown, so that a slice ends where
    // the next one on its thread starts: (end − start)·us rounded apart from start·us and
    // left slices overlapping by a rounding error.
    for (int d = 0; d < t.devices; ++d) {
        for (const TimedOp& op : t.device_ops[static_cast<std::size_t>(d)]) {
            event(fmt::format(
                R"("name": "{}", "cat": "{}", "ph": "X", "ts": {}, "dur": {}, "pid": {}, "tid": 0, "cname": "{}", )"
                R"("args": {{"pass": "{}", "microbatch": {}, "stage": {}, "chunk": {}, "start": {}, "end": {}}})",
                detail::short_name(op.op), pass_name(op.op.pass), json_number(op.start * us),
                json_number(op.end * us - op.start * us), d, trace_colour(op.op.pass),
                pass_name(op.op.pass), op.op.microbatch, op.op.stage,
                detail::chunk_of(t, op.op.stage), json_number(op.start), json_number(op.end)));
        }
    }
    for (const Transfer& x : t.transfers) {
        if (x.kind != TransferKind::pipeline) {
            // An op's collectives carry its name; a gradient reduction belongs to no op.
            const std::string name = x.kind == TransferKind::data_parallel
                                         ? std::string(transfer_kind_name(x.kind))
                                         : fmt::format("{} {}", transfer_kind_name(x.kind),
                                                       detail::short_name(x.producer));
            event(fmt::format(
                R"("name": "{}", "cat": "collective", "ph": "X", "ts": {}, "dur": {}, "pid": {}, "tid": 2, )"
                R"("args": {{"bytes": {}, "start": {}, "end": {}}})",
                name, json_number(x.start * us), json_number(x.end * us - x.start * us),
                x.src_device, json_number(x.bytes), json_number(x.start), json_number(x.end)));
            continue;
        }
        event(fmt::format(
            R"("name": "{} → d{}", "cat": "transfer", "ph": "X", "ts": {}, "dur": {}, "pid": {}, "tid": 1, )"
            R"("args": {{"from": "{}", "to": "{}", "dst": {}, "bytes": {}, "start": {}, "end": {}}})",
            detail::short_name(x.producer), x.dst_device, json_number(x.start * us),
            json_number(x.end * us - x.start * us), x.src_device, to_string(x.producer),
            to_string(x.consumer), x.dst_device, json_number(x.bytes), json_number(x.start),
            json_number(x.end)));
    }
    if (graph) {
        const detail::OpGraph& g = *graph;
        std::size_t id = 0;
        auto middle = [&](const TimedOp& op) { return json_number((op.start + op.end) / 2 * us); };
        for (std::size_t i = 0; i < g.size(); ++i)
            for (const std::int32_t input : g.inputs[i]) {
                if (input < 0) continue;
                const auto from = static_cast<std::size_t>(input);
                const std::string name = fmt::format("{} → {}", detail::short_name(g.op[from]->op),
                                                     detail::short_name(g.op[i]->op));
                ++id;
                event(fmt::format(
                    R"("name": "{}", "cat": "dependency", "ph": "s", "id": {}, "ts": {}, "pid": {}, "tid": 0)",
                    name, id, middle(*g.op[from]), g.ref[from].device));
                event(fmt::format(
                    R"("name": "{}", "cat": "dependency", "ph": "f", "bp": "e", "id": {}, "ts": {}, "pid": {}, "tid": 0)",
                    name, id, middle(*g.op[i]), g.ref[i].device));
            }
    }
    if (memory) {
        for (int d = 0; d < t.devices; ++d)
            for (const MemoryPoint& p : memory_over_time(t, *memory, d))
                event(fmt::format(
                    R"("name": "activation", "ph": "C", "ts": {}, "pid": {}, "args": {{"activation": {}}})",
                    json_number(p.time * us), d, json_number(p.activation)));
    }
    out += "\n ]\n}\n";
    sink(out);
}

std::string chrome_trace_json(const Timeline& t, const MemoryModel* memory,
                              const ChromeTraceOptions& options) {
    std::string text;
    write_chrome_trace(t, memory, options, [&](std::string_view piece) { text += piece; });
    return text;
}

double chrome_trace_bytes_per_op(const ChromeTraceOptions& options) {
    return options.flows ? 64.0 : 0.0;
}

}  // namespace pipesim::viz
