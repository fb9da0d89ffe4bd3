#include "schedules/schedule_json.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fileio/json_document.hpp"
#include "schedule_file_common.hpp"
#include "schedules/placement.hpp"

namespace pipesim {

namespace {

constexpr std::string_view format_tag = "pipesim-schedule";
constexpr int format_version = 1;
constexpr std::size_t max_name_bytes = 256;
constexpr std::string_view op_shape =
    "an op like F3:1 (pass F, B, W or BW, microbatch, ':', stage)";

// ASCII whitespace as C's isspace() has it: space, tab, line feed, vertical tab, form feed,
// carriage return.
bool is_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}
// Reads the placement: "looped", "v-shape" or one device number per virtual stage.
// Reads one device's op string "F0:0 F1:0 B0:0 ..." into ops, recording where each starts
// in the string (its position is worked out only for a message).
// The ops a device's op string lists: its runs of characters other than white space.
std::size_t count_tokens(std::string_view text) {
    std::size_t tokens = 0;
    bool inside = false;
    for (const char c : text) {
        const bool space = is_space(c);
        tokens += !space && !inside;
        inside = !space;
    }
    return tokens;
}

void read_device_ops(const fileio::JsonDocument& doc, const std::string& pointer,
                     Schedule& schedule, std::size_t& total_ops, std::size_t max_ops,
                     std::vector<Op>& ops, std::vector<std::size_t>& offsets) {
    const std::string& text = doc.string(pointer, doc.text().size());
    // Lists of their final size: grown op by op, they held up to twice that.
    const std::size_t listed = std::min(count_tokens(text), max_ops);
    ops.reserve(listed);
    offsets.reserve(listed);
    auto fail = [&](std::size_t at, const std::string& problem) {
        throw fileio::ParseError(doc.file(), doc.position_in_string(pointer, at), problem);
    };
    // A decimal below `limit` at i, in the op `token` that starts at `token_start`; -1 if
    // there is no digit.
    auto read_number = [&](std::size_t& i, long long limit, std::string_view what,
                           std::string_view token, std::size_t token_start) -> int {
        const std::size_t start = i;
        const long long value = detail::read_decimal(text, i, limit);
        if (value == detail::too_big) {
            std::size_t digits_end = start;
            while (digits_end < text.size() && text[digits_end] >= '0' && text[digits_end] <= '9')
                ++digits_end;
            fail(token_start,
                 fmt::format("{}: {} {} is outside 0..{}", fileio::quote_excerpt(token), what,
                             fileio::quote_excerpt(text.substr(start, digits_end - start), 24),
                             limit - 1));
        }
        return static_cast<int>(value);
    };
    std::size_t i = 0;
    while (true) {
        while (i < text.size() && is_space(text[i]))
            ++i;
        if (i == text.size()) break;
        const std::size_t start = i;
        std::size_t end = i;
        while (end < text.size() && !is_space(text[end]))
            ++end;
        const std::string_view token(text.data() + start, end - start);
        Op op;
        const std::size_t pass_len = token.rfind("BW", 0) == 0 ? 2 : 1;
        if (!parse_pass(token.substr(0, pass_len), op.pass))
            fail(start, fmt::format("expected {}, got {}", op_shape, fileio::quote_excerpt(token)));
        i = start + pass_len;
        const int mb = read_number(i, schedule.microbatches, "microbatch", token, start);
        if (mb < 0 || i >= end || text[i] != ':')
            fail(start, fmt::format("expected {}, got {}", op_shape, fileio::quote_excerpt(token)));
        ++i;
        const int stage = read_number(i, schedule.stages(), "stage", token, start);
        if (stage < 0 || i != end)
            fail(start, fmt::format("expected {}, got {}", op_shape, fileio::quote_excerpt(token)));
        op.microbatch = mb;
        op.stage = stage;
        if (++total_ops > max_ops)
            fail(start, fmt::format("more than {} ops in the file, the limit", max_ops));
        ops.push_back(op);
        offsets.push_back(start);
    }
}

// Reads "microbatch_stages": one [first, last] pair of stages per microbatch.
std::vector<StageRange> read_microbatch_stages(const fileio::JsonDocument& doc,
                                               const Schedule& schedule) {
    const std::string pointer = "/microbatch_stages";
    const auto m = static_cast<std::size_t>(schedule.microbatches);
    const auto& ranges = doc.array(pointer, m);
    if (ranges.size() != m)
        throw doc.error_at(pointer, fmt::format("microbatch_stages: expected {} [first, last] "
                                                "pairs, one per microbatch, got {}",
                                                m, ranges.size()));
    std::vector<StageRange> result;
    result.reserve(m);
    const std::int64_t last_stage = schedule.stages() - 1;
    for (std::size_t mb = 0; mb < m; ++mb) {
        const std::string at = fileio::json_pointer_child(pointer, mb);
        if (doc.array(at, 2).size() != 2)
            throw doc.error_at(at, "expected a pair [first, last] of stages");
        const auto first =
            doc.integer(fileio::json_pointer_child(at, std::size_t{0}), 0, last_stage);
        const auto last =
            doc.integer(fileio::json_pointer_child(at, std::size_t{1}), first, last_stage);
        result.push_back({static_cast<int>(first), static_cast<int>(last)});
    }
    return result;
}

}  // namespace

namespace {

// Reads "fb_pairs": per device, the positions of its F&B pairs' F (Schedule::fb_pairs).
std::vector<std::vector<int>> read_fb_pairs(const fileio::JsonDocument& doc,
                                            const std::vector<std::vector<Op>>& device_ops) {
    const std::string pointer = "/fb_pairs";
    const std::size_t devices = device_ops.size();
    if (doc.array(pointer, devices).size() != devices)
        throw doc.error_at(pointer, fmt::format("fb_pairs: expected {} lists of positions, one "
                                                "per device, got {}",
                                                devices, doc.root()["fb_pairs"].size()));
    std::vector<std::vector<int>> pairs(devices);
    for (std::size_t d = 0; d < devices; ++d) {
        const std::string at = fileio::json_pointer_child(pointer, d);
        const std::size_t ops = device_ops[d].size();
        const std::size_t count = doc.array(at, ops).size();
        for (std::size_t k = 0; k < count; ++k)
            pairs[d].push_back(
                static_cast<int>(doc.integer(fileio::json_pointer_child(at, k), 0,
                                             static_cast<std::int64_t>(ops > 0 ? ops - 1 : 0))));
    }
    return pairs;
}

// "fb_pairs" as the writer lays it out: one line of positions per device.
std::string fb_pairs_json(const std::vector<std::vector<int>>& pairs) {
    std::string out = "  \"fb_pairs\": [";
    for (std::size_t d = 0; d < pairs.size(); ++d)
        out += fmt::format("{}\n    [{}]", d ? "," : "", fmt::join(pairs[d], ", "));
    return out + "\n  ]";
}

}  // namespace

Schedule parse_schedule_json(std::string_view text, const std::string& file,
                             const std::string& default_name, const ScheduleFileLimits& limits) {
    const fileio::JsonDocument doc =
        detail::open_json_file(text, file, limits.max_bytes, format_tag, format_version);
    doc.object("", {"format", "version", "name", "devices", "microbatches", "chunks", "placement",
                    "microbatch_stages", "device_ops", "fb_pairs"});
    Schedule schedule;
    schedule.name = doc.has("/name") ? doc.name("/name", max_name_bytes) : default_name;
    schedule.devices = static_cast<int>(doc.integer("/devices", 1, limits.max_devices));
    schedule.microbatches =
        static_cast<int>(doc.integer("/microbatches", 1, limits.max_microbatches));
    schedule.chunks = static_cast<int>(doc.integer("/chunks", 1, limits.max_chunks));
    schedule.stage_device = detail::read_placement(doc, schedule.devices, schedule.chunks);
    if (doc.has("/microbatch_stages"))
        schedule.microbatch_stages = read_microbatch_stages(doc, schedule);

    const auto devices = static_cast<std::size_t>(schedule.devices);
    if (doc.array("/device_ops", devices).size() != devices)
        throw doc.error_at("/device_ops",
                           fmt::format("device_ops: expected {} op strings, one per device, got {}",
                                       devices, doc.root()["device_ops"].size()));
    schedule.device_ops.resize(devices);
    detail::OpPositions positions;
    positions.offsets.resize(devices);
    positions.locate = [&doc](std::size_t d, std::size_t offset) {
        return doc.position_in_string(fileio::json_pointer_child("/device_ops", d), offset);
    };
    // What the ops will take, before they are read: the device strings' tokens counted.
    std::size_t listed = 0;
    for (const auto& device : doc.root()["device_ops"])
        if (device.is_string()) listed += count_tokens(device.get_ref<const std::string&>());
    detail::check_read_memory(file, std::min(listed, limits.max_ops), 1.0);
    std::size_t total_ops = 0;
    for (std::size_t d = 0; d < devices; ++d)
        read_device_ops(doc, fileio::json_pointer_child("/device_ops", d), schedule, total_ops,
                        limits.max_ops, schedule.device_ops[d], positions.offsets[d]);
    if (doc.has("/fb_pairs")) schedule.fb_pairs = read_fb_pairs(doc, schedule.device_ops);
    detail::check_op_budget(schedule, total_ops, file);
    detail::validate_parsed(schedule, positions, file);
    return schedule;
}

std::string schedule_to_json(const Schedule& schedule) {
    nlohmann::ordered_json j;
    j["format"] = format_tag;
    j["version"] = format_version;
    j["name"] = schedule.name;
    j["devices"] = schedule.devices;
    j["microbatches"] = schedule.microbatches;
    j["chunks"] = schedule.chunks;
    const PlacementKind kind = classify_placement(schedule.stage_device, schedule.devices);
    if (kind == PlacementKind::custom)
        j["placement"] = schedule.stage_device;
    else
        j["placement"] = placement_name(kind);
    if (!schedule.microbatch_stages.empty()) {
        nlohmann::ordered_json ranges = nlohmann::ordered_json::array();
        for (const StageRange& r : schedule.microbatch_stages)
            ranges.push_back(nlohmann::ordered_json::array({r.first, r.last}));
        j["microbatch_stages"] = std::move(ranges);
    }
    nlohmann::ordered_json device_ops = nlohmann::ordered_json::array();
    for (const auto& ops : schedule.device_ops) {
        std::string line;
        for (const Op& op : ops)
            line += fmt::format("{}{}{}:{}", line.empty() ? "" : " ", pass_name(op.pass),
                                op.microbatch, op.stage);
        device_ops.push_back(std::move(line));
    }
    j["device_ops"] = std::move(device_ops);
    // Custom placements are short lists of small numbers: keep them on one line.
    // A name from a file name may not be UTF-8: write U+FFFD rather than fail.
    std::string out = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    if (kind == PlacementKind::custom) {
        const std::string multi = nlohmann::ordered_json(schedule.stage_device).dump(2);
        std::string indented;
        for (char c : multi)
            indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
        const auto at = out.find(indented);
        if (at != std::string::npos)
            out.replace(at, indented.size(), nlohmann::ordered_json(schedule.stage_device).dump());
    }
    if (!schedule.microbatch_stages.empty()) {
        for (const StageRange& r : schedule.microbatch_stages) {
            const std::string multi = fmt::format("[\n      {},\n      {}\n    ]", r.first, r.last);
            const auto at = out.find(multi);
            if (at != std::string::npos)
                out.replace(at, multi.size(), fmt::format("[{}, {}]", r.first, r.last));
        }
    }
    if (has_fb_pairs(schedule.fb_pairs)) {
        // The pairs close the object, one line of positions per device.
        const auto close = out.rfind('}');
        out = out.substr(0, out.rfind(']', close) + 1) + ",\n" + fb_pairs_json(schedule.fb_pairs) +
              "\n}";
    }
    return out + "\n";
}

}  // namespace pipesim
