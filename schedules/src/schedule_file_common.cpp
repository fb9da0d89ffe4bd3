#include "schedule_file_common.hpp"

#include <fmt/format.h>

#include "fileio/json_document.hpp"
#include "fileio/memory_budget.hpp"
#include "schedules/placement.hpp"
#include "schedules/validate.hpp"

namespace pipesim::detail {

long long read_decimal(std::string_view s, std::size_t& i, long long limit) {
    const std::size_t start = i;
    long long value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value = value * 10 + (s[i] - '0');
        if (value >= limit) return too_big;
        ++i;
    }
    return i == start ? -1 : value;
}

void check_op_budget(const Schedule& schedule, std::size_t ops, const std::string& file) {
    const auto pairs = static_cast<std::size_t>(schedule.microbatches) *
                       static_cast<std::size_t>(schedule.stages());
    // Slack keeps validate()'s precise "X is missing" message for ordinary small files.
    constexpr std::size_t slack = std::size_t{1} << 16;
    if (pairs > ops + slack)
        throw fileio::ParseError(
            file, fileio::TextPosition{},
            fmt::format("the file lists {} ops, but {} microbatches × {} stages "
                        "need at least {} (an F and a backward each)",
                        ops, schedule.microbatches, schedule.stages(), 2 * pairs));
}

void check_read_memory(const std::string& file, std::size_t ops, double growth,
                       double other_bytes_per_op) {
    if (ops < std::size_t{1} << 20) return;
    constexpr double validation_bytes_per_op = 8;
    const double per_op = growth * static_cast<double>(sizeof(Op) + sizeof(std::size_t)) +
                          validation_bytes_per_op + other_bytes_per_op;
    fileio::check_memory(per_op * static_cast<double>(ops), fileio::memory_budget(),
                         fmt::format("reading {} (up to {} ops)", file, ops));
}

fileio::TextPosition OpPositions::at(std::size_t device, std::size_t index) const {
    if (device >= offsets.size() || index >= offsets[device].size() || !locate) return {};
    return locate(device, offsets[device][index]);
}

void validate_parsed(const Schedule& schedule, const OpPositions& positions,
                     const std::string& file, std::string_view pass_names) {
    const auto issue = validate(schedule);
    if (!issue) return;
    fileio::TextPosition where;
    if (issue->device >= 0 && issue->position >= 0)
        where = positions.at(static_cast<std::size_t>(issue->device),
                             static_cast<std::size_t>(issue->position));
    std::string message = "invalid schedule: " + issue->message;
    const bool names_a_backward = message.find("BW") != std::string::npos ||
                                  message.find("B(") != std::string::npos ||
                                  message.find(" B ") != std::string::npos;
    if (!pass_names.empty() && names_a_backward) message += fmt::format(" ({})", pass_names);
    throw fileio::ParseError(file, where, message);
}

std::size_t json_text_start(std::string_view text) {
    return text.find_first_not_of(" \t\r\n", text.starts_with("\xEF\xBB\xBF") ? 3 : 0);
}

fileio::JsonDocument open_json_file(std::string_view text, const std::string& file,
                                    std::size_t max_bytes, std::string_view format_tag,
                                    int version) {
    if (text.size() > max_bytes)
        throw fileio::ParseError(
            file, fileio::TextPosition{},
            fmt::format("file is {} bytes, more than the limit of {}", text.size(), max_bytes));
    // Anything but an object is refused before it is parsed: a JSON string or array near the
    // size limit took 42 s and 4.3 GB to parse only to be refused.
    if (const std::size_t first = json_text_start(text);
        first != std::string_view::npos && text[first] != '{')
        throw fileio::ParseError(
            file, fileio::position_at(text, first),
            fmt::format("expected a JSON object with \"format\": \"{}\", got {}", format_tag,
                        fileio::quote_excerpt(text.substr(first, 256))));
    fileio::JsonDocument doc(file, std::string(text));
    doc.require_format(format_tag, version);
    return doc;
}

std::vector<int> read_placement(const fileio::JsonDocument& doc, int devices, int chunks) {
    const std::string pointer = "/placement";
    const auto& value = doc.at(pointer, "\"looped\", \"v-shape\" or an array of device numbers");
    if (value.is_string()) {
        const std::string& name = value.get_ref<const std::string&>();
        if (name == placement_name(PlacementKind::looped)) return looped_placement(devices, chunks);
        if (name == placement_name(PlacementKind::vshape)) {
            if (chunks % 2 != 0)
                throw doc.error_at(pointer, fmt::format("v-shape placement needs an even number "
                                                        "of chunks, got chunks = {}",
                                                        chunks));
            return vshape_placement(devices, chunks);
        }
    }
    if (!value.is_array())
        throw doc.error_at(pointer,
                           fmt::format("placement: expected \"looped\", \"v-shape\" or an "
                                       "array of p·v = {} device numbers, got {}",
                                       devices * chunks, fileio::quote_excerpt(value.dump(), 40)));
    const auto stages = static_cast<std::size_t>(devices) * static_cast<std::size_t>(chunks);
    if (doc.array(pointer, stages).size() != stages)
        throw doc.error_at(pointer, fmt::format("placement: expected p·v = {} device numbers, one "
                                                "per virtual stage, got {}",
                                                stages, value.size()));
    std::vector<int> placement(stages);
    std::vector<int> held(static_cast<std::size_t>(devices), 0);
    for (std::size_t s = 0; s < stages; ++s) {
        placement[s] =
            static_cast<int>(doc.integer(fileio::json_pointer_child(pointer, s), 0, devices - 1));
        ++held[static_cast<std::size_t>(placement[s])];
    }
    // Every device holds v stages: said here, at the placement, not at the ops or passes
    // that the validation of the whole would name.
    for (int d = 0; d < devices; ++d)
        if (held[static_cast<std::size_t>(d)] != chunks)
            throw doc.error_at(pointer,
                               fmt::format("placement: device {} holds {} stages, expected {} "
                                           "(chunks)",
                                           d, held[static_cast<std::size_t>(d)], chunks));
    return placement;
}

}  // namespace pipesim::detail
