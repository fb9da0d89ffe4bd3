#include "viz/timeline_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "json_text.hpp"
#include "schedules/block.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/op_dependencies.hpp"
#include "schedules/registry.hpp"
#include "schedules/validate.hpp"
#include "viz/chrome_trace.hpp"

namespace pipesim::viz {

using detail::json_number;
using detail::json_string;
using Value = fileio::JsonDocument::Value;

namespace {

constexpr std::string_view format_tag = "pipesim-timeline";
constexpr int format_version = 1;
// Times, bytes and activations: far above what a run gives (pass times of at most the 1e30
// the command line takes, summed over at most 5·10⁷ ops: a bound of 1e30 refused the saved
// timelines of runs the command line took), far enough below the largest double that sums and
// scales of them stay finite (1.7e308 once made an infinite picture and a trace that could
// not be written).
constexpr double max_time = 1e100;

constexpr std::array<TransferKind, 4> transfer_kinds = {
    TransferKind::pipeline, TransferKind::tensor_parallel, TransferKind::data_parallel,
    TransferKind::context_parallel};

// The transfer kind written as `name`, or nothing.
std::optional<TransferKind> transfer_kind_named(std::string_view name) {
    const auto* found = std::find_if(transfer_kinds.begin(), transfer_kinds.end(),
                                     [&](TransferKind k) { return transfer_kind_name(k) == name; });
    if (found == transfer_kinds.end()) return std::nullopt;
    return *found;
}

std::string op_fields(const Op& op) {
    return fmt::format(R"("pass": "{}", "mb": {}, "stage": {})", pass_name(op.pass), op.microbatch,
                       op.stage);
}

std::string number_array(const std::vector<double>& values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        out += (i ? ", " : "") + json_number(values[i]);
    return out + "]";
}

// ---- reading ------------------------------------------------------------------------------

// Reads the document through JsonDocument's typed getters, which name the file, line, column
// and field of whatever is wrong. Ops are the bulk of a file: they are checked directly on
// the parsed values and only go through the getters (to throw their message) when wrong.
class Reader {
  public:
    Reader(const fileio::JsonDocument& doc, const TimelineFileLimits& limits)
        : doc_(doc), limits_(limits) {}

    SavedTimeline read() {
        check_format();
        doc_.require_format(format_tag, format_version);
        doc_.object("", {"format", "version", "schedule", "devices", "microbatches", "chunks",
                         "time_unit", "stage_device", "microbatch_stages", "memory", "device_ops",
                         "transfers", "fb_pairs"});
        SavedTimeline saved;
        Timeline& t = saved.timeline;
        t.schedule = doc_.text("/schedule", 256);  // the picture's title prints it
        t.devices = static_cast<int>(doc_.integer("/devices", 1, limits_.max_devices));
        t.microbatches =
            static_cast<int>(doc_.integer("/microbatches", 1, limits_.max_microbatches));
        t.chunks = static_cast<int>(doc_.integer("/chunks", 1, limits_.max_chunks));
        t.time_unit = doc_.string("/time_unit", 16);
        if (!known_time_unit(t.time_unit))
            throw doc_.error_at("/time_unit",
                                fmt::format("time_unit: expected {}, got {}", known_time_units(),
                                            fileio::quote_excerpt(t.time_unit)));
        const auto stages = static_cast<std::size_t>(t.stages());
        doc_.array("/stage_device", stages);
        if (doc_.root()["stage_device"].size() != stages)
            throw doc_.error_at(
                "/stage_device",
                fmt::format("stage_device: expected {} devices (one per virtual "
                            "stage, p·v = {}·{}), got {}",
                            stages, t.devices, t.chunks, doc_.root()["stage_device"].size()));
        for (std::size_t s = 0; s < stages; ++s)
            t.stage_device.push_back(static_cast<int>(
                doc_.integer(fileio::json_pointer_child("/stage_device", s), 0, t.devices - 1)));
        if (doc_.has("/microbatch_stages")) t.microbatch_stages = read_microbatch_stages(t);
        if (doc_.has("/memory")) {
            saved.memory = read_memory(stages);
            saved.memory_in_bytes = read_memory_unit();
        }
        check_run_size(t);
        read_device_ops(t);
        // No run takes no time (analyze refuses passes that all take none): the picture of one
        // had a memory scale that contradicted the peak its title gave. Nor has none of its
        // ops (drawn as an empty run, "makespan 0", where ops of no length were refused).
        const bool has_ops = std::any_of(t.device_ops.begin(), t.device_ops.end(),
                                         [](const auto& ops) { return !ops.empty(); });
        if (!has_ops)
            throw doc_.error_at("/device_ops",
                                "device_ops: no device holds an op: a timeline without ops has "
                                "nothing to show");
        if (t.last_end() == 0)
            throw doc_.error_at("/device_ops",
                                "device_ops: every op starts and ends at 0: a run that takes no "
                                "time has nothing to show");
        if (doc_.has("/transfers")) read_transfers(t);
        if (doc_.has("/fb_pairs")) read_fb_pairs(t);
        check_run(saved);
        return saved;
    }

  private:
    // The checks of check_run() take a byte or more per (microbatch, stage) the header
    // declares, whatever ops the file holds: 256 devices and 2^24 microbatches with one op took
    // 4.2 GB and 18 s. A shape whose whole run exceeds what analyze runs is refused here.
    void check_run_size(const Timeline& t) const {
        double ops = 0;  // an F and a backward per microbatch on each stage it passes
        if (t.microbatch_stages.empty())
            ops = 2.0 * t.stages() * t.microbatches;
        else
            for (const StageRange& r : t.microbatch_stages)
                ops += 2.0 * (r.last - r.first + 1);
        if (ops > max_schedule_ops)
            throw doc_.error_at(
                "/microbatches",
                fmt::format("microbatches: a whole run of p·v·m = {}·{}·{} has at least {:.3g} "
                            "ops, more than the {:.0e} pipesim runs",
                            t.devices, t.chunks, t.microbatches, ops, max_schedule_ops));
    }

    void check_format() const {
        const Value& root = doc_.root();
        const std::string wanted =
            fmt::format("not a saved pipesim timeline (expected \"format\": \"{}\")", format_tag);
        if (!root.is_object() || !root.contains("format"))
            throw NotATimeline(doc_.file(), doc_.position_of(""), wanted);
        if (root["format"] != format_tag)
            throw NotATimeline(doc_.file(), doc_.position_of("/format"), wanted);
    }

    // One [first, last] pair of virtual stages per microbatch, as in the schedule format.
    std::vector<StageRange> read_microbatch_stages(const Timeline& t) const {
        const std::string pointer = "/microbatch_stages";
        const auto m = static_cast<std::size_t>(t.microbatches);
        const Value& ranges = doc_.array(pointer, m);
        if (ranges.size() != m)
            throw doc_.error_at(pointer, fmt::format("microbatch_stages: expected {} [first, "
                                                     "last] pairs, one per microbatch, got {}",
                                                     m, ranges.size()));
        std::vector<StageRange> result;
        result.reserve(m);
        const std::int64_t last_stage = t.stages() - 1;
        for (std::size_t mb = 0; mb < m; ++mb) {
            const std::string at = fileio::json_pointer_child(pointer, mb);
            if (doc_.array(at, 2).size() != 2)
                throw doc_.error_at(at, fmt::format("{}: expected a pair [first, last] of stages",
                                                    fileio::JsonDocument::display_name(at)));
            const auto first =
                doc_.integer(fileio::json_pointer_child(at, std::size_t{0}), 0, last_stage);
            const auto last =
                doc_.integer(fileio::json_pointer_child(at, std::size_t{1}), first, last_stage);
            result.push_back({static_cast<int>(first), static_cast<int>(last)});
        }
        return result;
    }

    // Whether the memory object's optional "unit" is "bytes" (else activation units).
    bool read_memory_unit() const {
        if (!doc_.has("/memory/unit")) return false;
        const std::string& unit = doc_.string("/memory/unit", 16);
        if (unit != "bytes" && unit != "units")
            throw doc_.error_at("/memory/unit",
                                fmt::format("memory.unit: expected \"bytes\" or \"units\", got {}",
                                            fileio::quote_excerpt(unit)));
        return unit == "bytes";
    }

    MemoryModel read_memory(std::size_t stages) const {
        doc_.object("/memory", {"unit", "activation", "held_for_w"});
        MemoryModel memory;
        for (auto [key, out] : {std::pair{"activation", &memory.activation},
                                std::pair{"held_for_w", &memory.held_for_w}}) {
            const std::string pointer = fileio::json_pointer_child("/memory", key);
            if (doc_.array(pointer, stages).size() != stages)
                throw doc_.error_at(pointer,
                                    fmt::format("{}: expected {} numbers (one per "
                                                "virtual stage), got {}",
                                                fileio::JsonDocument::display_name(pointer), stages,
                                                doc_.at(pointer, "").size()));
            for (std::size_t s = 0; s < stages; ++s)
                out->push_back(doc_.number(fileio::json_pointer_child(pointer, s), 0, max_time));
        }
        for (std::size_t s = 0; s < stages; ++s)
            if (memory.held_for_w[s] > memory.activation[s])
                throw doc_.error_at(
                    fileio::json_pointer_child("/memory/held_for_w", s),
                    fmt::format("memory.held_for_w[{}]: expected at most the stage's activation "
                                "({}), got {}",
                                s, memory.activation[s], memory.held_for_w[s]));
        return memory;
    }

    // The op at `pointer` (an object with pass, mb, stage and, if `timed`, start and end).
    Op read_op(const Value& v, const std::string& pointer, const Timeline& t, bool timed) const {
        Op op;
        const bool fast = v.is_object() && v.size() == (timed ? 5u : 3u) && plain_op(v, t, op);
        if (fast) return op;
        // Something is wrong (or unusual): let the getters find it and say so.
        if (timed)
            doc_.object(pointer, {"pass", "mb", "stage", "start", "end"});
        else
            doc_.object(pointer, {"pass", "mb", "stage"});
        const std::string pass = doc_.string(fileio::json_pointer_child(pointer, "pass"), 2);
        if (!parse_pass(pass, op.pass))
            throw doc_.error_at(
                fileio::json_pointer_child(pointer, "pass"),
                fmt::format("{}: expected F, B, W or BW, got \"{}\"",
                            fileio::JsonDocument::display_name(pointer + "/pass"), pass));
        op.microbatch = static_cast<std::int32_t>(
            doc_.integer(fileio::json_pointer_child(pointer, "mb"), 0, t.microbatches - 1));
        op.stage = static_cast<std::int32_t>(
            doc_.integer(fileio::json_pointer_child(pointer, "stage"), 0, t.stages() - 1));
        return op;
    }

    static bool plain_op(const Value& v, const Timeline& t, Op& op) {
        const auto pass = v.find("pass");
        const auto mb = v.find("mb");
        const auto stage = v.find("stage");
        if (pass == v.end() || mb == v.end() || stage == v.end() || !pass->is_string() ||
            !mb->is_number_integer() || !stage->is_number_integer())
            return false;
        if (!parse_pass(pass->get_ref<const std::string&>(), op.pass)) return false;
        const auto m = mb->get<std::int64_t>();
        const auto s = stage->get<std::int64_t>();
        if (m < 0 || m >= t.microbatches || s < 0 || s >= t.stages()) return false;
        op.microbatch = static_cast<std::int32_t>(m);
        op.stage = static_cast<std::int32_t>(s);
        return true;
    }

    // A time within bounds at `key` of op `v`, or nothing.
    static std::optional<double> plain_time(const Value& v, const char* key) {
        const auto it = v.find(key);
        if (it == v.end() || !it->is_number()) return std::nullopt;
        const double value = it->get<double>();
        if (!(value >= 0 && value <= max_time)) return std::nullopt;
        return value;
    }

    // A device op with exactly its five fields, each as it should be, its end not before its
    // start (its device and order are checked by the caller).
    static bool plain_timed_op(const Value& v, const Timeline& t, TimedOp& timed) {
        if (!v.is_object() || v.size() != 5u || !plain_op(v, t, timed.op)) return false;
        const auto start = plain_time(v, "start"), end = plain_time(v, "end");
        if (!start || !end || *end < *start) return false;
        timed.start = *start;
        timed.end = *end;
        return true;
    }

    // A transfer whose fields are all present, of their types and in range, its producer and
    // consumer plain ops: read without the getters (the transfers are half a file's bytes).
    static bool plain_transfer(const Value& v, const Timeline& t, Transfer& x) {
        if (!v.is_object() || v.size() < 7u || v.size() > 8u) return false;
        const auto integer = [&](const char* key, std::int64_t last, int& out) {
            const auto it = v.find(key);
            if (it == v.end() || !it->is_number_integer()) return false;
            const auto value = it->get<std::int64_t>();
            if (value < 0 || value > last) return false;
            out = static_cast<int>(value);
            return true;
        };
        const auto op = [&](const char* key, Op& out) {
            const auto it = v.find(key);
            return it != v.end() && it->is_object() && it->size() == 3u && plain_op(*it, t, out);
        };
        if (!integer("src", t.devices - 1, x.src_device) ||
            !integer("dst", t.devices - 1, x.dst_device) || !op("producer", x.producer) ||
            !op("consumer", x.consumer))
            return false;
        const auto bytes = plain_time(v, "bytes"), start = plain_time(v, "start"),
                   end = plain_time(v, "end");
        if (!bytes || !start || !end || *end < *start) return false;
        x.bytes = *bytes;
        x.start = *start;
        x.end = *end;
        if (v.size() == 7u) return true;  // no kind: a pipeline transfer
        const auto kind = v.find("kind");
        if (kind == v.end() || !kind->is_string()) return false;
        const auto found = transfer_kind_named(kind->get_ref<const std::string&>());
        if (!found) return false;
        x.kind = *found;
        return true;
    }

    double time(const Value& v, const std::string& pointer, const char* key) const {
        if (const auto value = plain_time(v, key)) return *value;
        doc_.object(pointer, {"pass", "mb", "stage", "start", "end"});  // a misspelt key?
        return doc_.number(fileio::json_pointer_child(pointer, key), 0, max_time);
    }

    // Per device, the positions of its F&B pairs' F: each an F followed by a backward.
    void read_fb_pairs(Timeline& t) const {
        const Value& lists = doc_.array("/fb_pairs", t.device_ops.size());
        if (lists.size() != t.device_ops.size())
            throw doc_.error_at("/fb_pairs", fmt::format("fb_pairs: expected {} lists (one per "
                                                         "device), got {}",
                                                         t.device_ops.size(), lists.size()));
        t.fb_pairs.resize(lists.size());
        for (std::size_t d = 0; d < lists.size(); ++d) {
            const std::string at = fileio::json_pointer_child("/fb_pairs", d);
            const auto& ops = t.device_ops[d];
            const std::size_t count = doc_.array(at, ops.size()).size();
            for (std::size_t k = 0; k < count; ++k) {
                const std::string item = fileio::json_pointer_child(at, k);
                const auto i = static_cast<std::size_t>(
                    doc_.integer(item, 0, static_cast<std::int64_t>(ops.size()) - 2));
                if (ops[i].op.pass != Pass::F || ops[i + 1].op.pass == Pass::F ||
                    ops[i + 1].op.pass == Pass::W)
                    throw doc_.error_at(item, "an F&B pair is an F followed by a B or BW");
                t.fb_pairs[d].push_back(static_cast<int>(i));
            }
        }
    }

    void read_device_ops(Timeline& t) const {
        const Value& lists = doc_.array("/device_ops", static_cast<std::size_t>(t.devices));
        if (lists.size() != static_cast<std::size_t>(t.devices))
            throw doc_.error_at("/device_ops",
                                fmt::format("device_ops: expected {} op lists (one per device), "
                                            "got {}",
                                            t.devices, lists.size()));
        t.device_ops.resize(lists.size());
        for (std::size_t d = 0; d < lists.size(); ++d) {
            const std::string list_pointer = fileio::json_pointer_child("/device_ops", d);
            const Value& ops = doc_.array(list_pointer, std::numeric_limits<std::size_t>::max());
            auto& out = t.device_ops[d];
            out.reserve(ops.size());
            for (std::size_t i = 0; i < ops.size(); ++i) {
                const Value& v = ops[i];
                TimedOp timed;
                // The bulk of a file: plain ops are read without building their pointer, which
                // only a message needs (it took a third of the time of reading a timeline).
                if (plain_timed_op(v, t, timed)) {
                    if (t.stage_device[timed.op.stage] == static_cast<int>(d) &&
                        (out.empty() || timed.start >= out.back().end)) {
                        out.push_back(timed);
                        continue;
                    }
                }
                const std::string pointer = fileio::json_pointer_child(list_pointer, i);
                timed.op = read_op(v, pointer, t, true);
                const std::string name = fileio::JsonDocument::display_name(pointer);
                if (t.stage_device[timed.op.stage] != static_cast<int>(d))
                    throw doc_.error_at(pointer,
                                        fmt::format("{}: {} is listed on device {}, but stage {} "
                                                    "is on device {}",
                                                    name, to_string(timed.op), d, timed.op.stage,
                                                    t.stage_device[timed.op.stage]));
                timed.start = time(v, pointer, "start");
                timed.end = time(v, pointer, "end");
                if (timed.end < timed.start)
                    throw doc_.error_at(
                        fileio::json_pointer_child(pointer, "end"),
                        fmt::format("{}.end: {} ends at {}, before it starts at {}", name,
                                    to_string(timed.op), timed.end, timed.start));
                if (!out.empty() && timed.start < out.back().end)
                    throw doc_.error_at(fileio::json_pointer_child(pointer, "start"),
                                        fmt::format("{}.start: {} starts at {}, before the "
                                                    "previous op on device {} ({}) ends at {}",
                                                    name, to_string(timed.op), timed.start, d,
                                                    to_string(out.back().op), out.back().end));
                out.push_back(timed);
            }
        }
    }

    // Whether the transfer's consumer waits for its producer (the dependency rule of
    // op_dependencies.hpp, with the producer's backward taken as it is written, B or BW).
    static bool carries_an_input(const Timeline& t, const Transfer& x) {
        const StageRange route =
            t.microbatch_stages.empty()
                ? StageRange{0, t.stages() - 1}
                : t.microbatch_stages[static_cast<std::size_t>(x.consumer.microbatch)];
        if (x.consumer.stage < route.first || x.consumer.stage > route.last) return false;
        const OpLinks inputs =
            predecessors(x.consumer, route, [&](int) { return x.producer.pass != Pass::BW; });
        return std::find(inputs.begin(), inputs.end(), x.producer) != inputs.end();
    }

    // The checks below that need no message: a pipeline transfer carries an input of its
    // consumer between the devices that run the two stages; a collective stays on one device.
    static bool consistent_transfer(const Timeline& t, const Transfer& x) {
        if (x.kind != TransferKind::pipeline) return x.src_device == x.dst_device;
        return carries_an_input(t, x) &&
               x.src_device == t.stage_device[static_cast<std::size_t>(x.producer.stage)] &&
               x.dst_device == t.stage_device[static_cast<std::size_t>(x.consumer.stage)];
    }

    void read_transfers(Timeline& t) const {
        const Value& list = doc_.array("/transfers", limits_.max_transfers);
        t.transfers.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            Transfer x;
            if (plain_transfer(list[i], t, x) && consistent_transfer(t, x)) {
                t.transfers.push_back(x);
                continue;
            }
            // Something is wrong (or unusual): let the getters and checks find it and say so.
            x = Transfer{};
            const std::string p = fileio::json_pointer_child("/transfers", i);
            doc_.object(p, {"src", "dst", "producer", "consumer", "bytes", "start", "end", "kind"});
            x.src_device = static_cast<int>(doc_.integer(p + "/src", 0, t.devices - 1));
            x.dst_device = static_cast<int>(doc_.integer(p + "/dst", 0, t.devices - 1));
            x.producer = read_op(doc_.at(p + "/producer", "an op"), p + "/producer", t, false);
            x.consumer = read_op(doc_.at(p + "/consumer", "an op"), p + "/consumer", t, false);
            // The kind first: the checks below depend on it (an unknown kind was reported as a
            // collective between two devices).
            if (doc_.has(p + "/kind")) {
                const std::string kind = doc_.string(p + "/kind", 32);
                const auto found = transfer_kind_named(kind);
                if (!found)
                    throw doc_.error_at(
                        p + "/kind",
                        fmt::format("{}: expected pipeline, tensor-parallel, data-parallel or "
                                    "context-parallel, got \"{}\"",
                                    fileio::JsonDocument::display_name(p + "/kind"), kind));
                x.kind = *found;
            }
            const bool pipeline = x.kind == TransferKind::pipeline;
            const int from = t.stage_device[static_cast<std::size_t>(x.producer.stage)];
            const int to = t.stage_device[static_cast<std::size_t>(x.consumer.stage)];
            if (pipeline && !carries_an_input(t, x))
                throw doc_.error_at(
                    p, fmt::format("{}: a pipeline transfer carries {}'s output to {}, which does "
                                   "not take it as an input",
                                   fileio::JsonDocument::display_name(p), to_string(x.producer),
                                   to_string(x.consumer)));
            if (!pipeline && x.src_device != x.dst_device)
                throw doc_.error_at(
                    p,
                    fmt::format("{}: a collective runs among one device's GPUs, so src and dst "
                                "are one device, got {} and {}",
                                fileio::JsonDocument::display_name(p), x.src_device, x.dst_device));
            if (pipeline && (x.src_device != from || x.dst_device != to))
                throw doc_.error_at(
                    p, fmt::format("{}: a pipeline transfer from {} to {} goes from device {} to "
                                   "device {}, which run their stages, not from {} to {}",
                                   fileio::JsonDocument::display_name(p), to_string(x.producer),
                                   to_string(x.consumer), from, to, x.src_device, x.dst_device));
            x.bytes = doc_.number(p + "/bytes", 0, max_time);
            x.start = doc_.number(p + "/start", 0, max_time);
            x.end = doc_.number(p + "/end", x.start, max_time);
            t.transfers.push_back(x);
        }
    }

    // Whether the ops are a whole run of the timeline's schedule and their times follow its
    // dependencies; the transfers' times their ops'. Only warns: a measured timeline with
    // ops missing can still be drawn, and its figures are then those of the ops it holds.
    void check_run(SavedTimeline& saved) const {
        const Timeline& t = saved.timeline;
        const std::string& file = doc_.file();
        Schedule s = schedule_from_timeline(t, t.schedule);
        s.fb_pairs = t.fb_pairs;
        const double makespan = t.last_end();
        if (const auto issue = validate_structure(s)) {
            saved.warnings.push_back(fmt::format(
                "{}: not a whole run of p={} m={} v={}: {}; the picture and its figures are of "
                "the ops the file holds",
                file, t.devices, t.microbatches, t.chunks, issue->message));
            return;
        }
        // Rounding of times written as the shortest decimal is far below this; a measured
        // timeline's event clock resolves a microsecond of a run of many.
        const double slack = 1e-6 * makespan;
        std::vector<double> end(dense_op_count(t.microbatches, t.stages()), -1);
        std::vector<double> start(end.size(), -1);
        std::string late;  // the first op that starts before an input of it ends
        std::size_t late_count = 0;
        DependencyWalker walker(s);
        const auto issue = walker.run([&](int device, int position, const Op& op,
                                          const Predecessors& preds) {
            const TimedOp& timed =
                t.device_ops[static_cast<std::size_t>(device)][static_cast<std::size_t>(position)];
            for (int k = 0; k < preds.count; ++k) {
                const double input_end =
                    end[dense_op_index(preds.op[static_cast<std::size_t>(k)], t.stages())];
                if (timed.start >= input_end - slack) continue;
                if (late_count++ == 0)
                    late = fmt::format(
                        "device_ops[{}][{}] {} starts at {}, before its input {} "
                        "ends at {} on device {}",
                        device, position, to_string(op), timed.start,
                        to_string(preds.op[static_cast<std::size_t>(k)]), input_end,
                        preds.device[static_cast<std::size_t>(k)]);
            }
            end[dense_op_index(op, t.stages())] = timed.end;
            start[dense_op_index(op, t.stages())] = timed.start;
        });
        if (issue) {
            saved.warnings.push_back(
                fmt::format("{}: its ops' order cannot run: {}; the picture shows them as they are",
                            file, issue->message));
            return;
        }
        if (late_count > 0)
            saved.warnings.push_back(fmt::format(
                "{}: {}{}: the times do not follow the schedule's dependencies", file, late,
                late_count > 1 ? fmt::format(" (and {} more such inputs)", late_count - 1) : ""));
        for (std::size_t i = 0; i < t.transfers.size(); ++i) {
            const Transfer& x = t.transfers[i];
            if (x.kind != TransferKind::pipeline) continue;
            const double producer_end = end[dense_op_index(x.producer, t.stages())];
            const double consumer_start = start[dense_op_index(x.consumer, t.stages())];
            std::string problem;
            if (producer_end < 0 || consumer_start < 0)
                problem =
                    fmt::format("carries {} to {}, {} of which the file does not hold",
                                to_string(x.producer), to_string(x.consumer),
                                producer_end < 0 ? to_string(x.producer) : to_string(x.consumer));
            else if (x.start < producer_end - slack)
                problem = fmt::format("starts at {}, before {}, its producer, ends at {}", x.start,
                                      to_string(x.producer), producer_end);
            else if (x.end > consumer_start + slack)
                problem = fmt::format("ends at {}, after {}, its consumer, starts at {}", x.end,
                                      to_string(x.consumer), consumer_start);
            if (!problem.empty()) {
                saved.warnings.push_back(fmt::format("{}: transfers[{}] {}", file, i, problem));
                break;
            }
        }
    }

    const fileio::JsonDocument& doc_;
    const TimelineFileLimits& limits_;
};

}  // namespace

void write_timeline_json(const Timeline& t, const MemoryModel* memory, bool memory_in_bytes,
                         const fileio::TextSink& sink) {
    // Handed on in pieces of about a megabyte: a saved timeline of millions of ops is never
    // held in memory as one string.
    constexpr std::size_t piece = 1 << 20;
    std::string out;
    out.reserve(piece + 4096);
    auto flush_full = [&] {
        if (out.size() < piece) return;
        sink(out);
        out.clear();
    };
    out +=
        fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n", format_tag, format_version);
    out += fmt::format("  \"schedule\": {},\n", json_string(t.schedule));
    out += fmt::format("  \"devices\": {},\n  \"microbatches\": {},\n  \"chunks\": {},\n",
                       t.devices, t.microbatches, t.chunks);
    out += fmt::format("  \"time_unit\": {},\n", json_string(t.time_unit));
    out += fmt::format("  \"stage_device\": [{}],\n", fmt::join(t.stage_device, ", "));
    if (!t.microbatch_stages.empty()) {
        out += "  \"microbatch_stages\": [";
        for (std::size_t mb = 0; mb < t.microbatch_stages.size(); ++mb)
            out += fmt::format("{}[{}, {}]", mb ? ", " : "", t.microbatch_stages[mb].first,
                               t.microbatch_stages[mb].last);
        out += "],\n";
    }
    if (memory)
        out += fmt::format("  \"memory\": {{{}\"activation\": {}, \"held_for_w\": {}}},\n",
                           memory_in_bytes ? "\"unit\": \"bytes\", " : "",
                           number_array(memory->activation), number_array(memory->held_for_w));
    out += "  \"device_ops\": [";
    for (std::size_t d = 0; d < t.device_ops.size(); ++d) {
        out += d ? ",\n    [" : "\n    [";
        const auto& ops = t.device_ops[d];
        for (std::size_t i = 0; i < ops.size(); ++i) {
            out += fmt::format("{}\n      {{{}, \"start\": {}, \"end\": {}}}", i ? "," : "",
                               op_fields(ops[i].op), json_number(ops[i].start),
                               json_number(ops[i].end));
            flush_full();
        }
        out += ops.empty() ? "]" : "\n    ]";
    }
    out += t.device_ops.empty() ? "],\n" : "\n  ],\n";
    out += "  \"transfers\": [";
    for (std::size_t i = 0; i < t.transfers.size(); ++i) {
        const Transfer& x = t.transfers[i];
        out += fmt::format(
            "{}\n    {{\"src\": {}, \"dst\": {}, \"producer\": {{{}}}, \"consumer\": {{{}}}, "
            "\"bytes\": {}, \"start\": {}, \"end\": {}{}}}",
            i ? "," : "", x.src_device, x.dst_device, op_fields(x.producer), op_fields(x.consumer),
            json_number(x.bytes), json_number(x.start), json_number(x.end),
            x.kind == TransferKind::pipeline
                ? std::string()
                : fmt::format(", \"kind\": \"{}\"", transfer_kind_name(x.kind)));
        flush_full();
    }
    out += t.transfers.empty() ? "]" : "\n  ]";
    bool any_pair = false;
    for (const auto& pairs : t.fb_pairs)
        any_pair = any_pair || !pairs.empty();
    if (any_pair) {
        out += ",\n  \"fb_pairs\": [";
        for (std::size_t d = 0; d < t.fb_pairs.size(); ++d)
            out += fmt::format("{}\n    [{}]", d ? "," : "", fmt::join(t.fb_pairs[d], ", "));
        out += "\n  ]";
    }
    out += "\n}\n";
    sink(out);
}

std::string timeline_json(const Timeline& t, const MemoryModel* memory, bool memory_in_bytes) {
    std::string text;
    write_timeline_json(t, memory, memory_in_bytes, [&](std::string_view piece) { text += piece; });
    return text;
}

namespace {

// SAX events of a timeline's top-level keys up to "device_ops", where it stops the parse.
class HeaderReader : public nlohmann::json_sax<nlohmann::json> {
  public:
    bool timeline = false, has_ranges = false, reached_ops = false, ranges_ok = true;
    double devices = 0, microbatches = 0, chunks = 0;
    std::vector<double> range_ends;  // microbatch_stages flattened: first, last, first, ...

    bool null() override { return in_ranges() ? ranges_ok = false, true : true; }
    bool boolean(bool) override { return in_ranges() ? ranges_ok = false, true : true; }
    bool number_integer(number_integer_t value) override {
        return number(static_cast<double>(value));
    }
    bool number_unsigned(number_unsigned_t value) override {
        return number(static_cast<double>(value));
    }
    bool number_float(number_float_t, const string_t&) override {
        return in_ranges() ? ranges_ok = false, true : true;
    }
    bool string(string_t& value) override {
        if (depth_ == 1 && key_ == "format") timeline = value == "pipesim-timeline";
        if (in_ranges()) ranges_ok = false;
        return true;
    }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
        if (in_ranges()) ranges_ok = false;
        return ++depth_, true;
    }
    bool end_object() override { return --depth_, true; }
    bool start_array(std::size_t) override {
        if (++depth_ == 3 && in_ranges()) pair_numbers_ = 0;
        return true;
    }
    bool end_array() override {
        if (depth_ == 3 && in_ranges() && pair_numbers_ != 2) ranges_ok = false;
        return --depth_, true;
    }
    bool key(string_t& key) override {
        if (depth_ != 1) return true;
        key_ = key;
        if (key == "microbatch_stages") has_ranges = true;
        reached_ops = key == "device_ops";
        return !reached_ops;  // stop: the header is read
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

  private:
    // Inside microbatch_stages' [first, last] pairs.
    bool in_ranges() const { return key_ == "microbatch_stages" && depth_ >= 2; }
    bool number(double value) {
        if (depth_ == 1 && key_ == "devices") devices = value;
        if (depth_ == 1 && key_ == "microbatches") microbatches = value;
        if (depth_ == 1 && key_ == "chunks") chunks = value;
        if (in_ranges()) {
            if (depth_ == 3) {
                range_ends.push_back(value);
                ++pair_numbers_;
            } else {
                ranges_ok = false;
            }
        }
        return true;
    }

    int depth_ = 0, pair_numbers_ = 0;
    std::string key_;
};

}  // namespace

std::optional<double> timeline_min_ops(std::string_view text) {
    HeaderReader header;
    nlohmann::json::sax_parse(text, &header, nlohmann::json::input_format_t::json, false);
    if (!header.reached_ops || !header.timeline || !(header.devices >= 1) ||
        !(header.microbatches >= 1) || !(header.chunks >= 1))
        return std::nullopt;
    if (!header.has_ranges) return 2 * header.devices * header.chunks * header.microbatches;
    // Each microbatch runs an F and a backward on every stage of its [first, last] range.
    const auto& ends = header.range_ends;
    if (!header.ranges_ok || static_cast<double>(ends.size()) != 2 * header.microbatches)
        return std::nullopt;
    double least = 0;
    for (std::size_t i = 0; i < ends.size(); i += 2) {
        if (!(ends[i] >= 0 && ends[i] <= ends[i + 1])) return std::nullopt;
        least += 2 * (ends[i + 1] - ends[i] + 1);
    }
    return least;
}

SavedTimeline parse_timeline_json(std::string text, std::string source,
                                  const TimelineFileLimits& limits) {
    const fileio::JsonDocument doc(std::move(source), std::move(text));
    return Reader(doc, limits).read();
}

SavedTimeline read_timeline_file(const std::string& path, const TimelineFileLimits& limits) {
    return parse_timeline_json(fileio::read_text_file(path, limits.max_bytes), path, limits);
}

void save_timeline_file(const std::string& path, const Timeline& timeline,
                        const MemoryModel* memory, bool memory_in_bytes) {
    fileio::write_file_atomically(path, [&](const fileio::TextSink& sink) {
        write_timeline_json(timeline, memory, memory_in_bytes, sink);
    });
}

}  // namespace pipesim::viz
