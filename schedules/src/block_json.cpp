// Building-block files.
#include "schedules/block_json.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "schedule_file_common.hpp"
#include "schedules/placement.hpp"

namespace pipesim {

namespace {

constexpr std::string_view format_tag = "pipesim-block";
constexpr int format_version = 1;
constexpr std::size_t max_name_bytes = 256;

SlotLengths read_lengths(const fileio::JsonDocument& doc, int max_slots) {
    SlotLengths lengths;
    if (!doc.has("/lengths")) return lengths;
    doc.object("/lengths", {"F", "B", "W"});
    auto get = [&](const char* key, int& out) {
        const std::string pointer = fileio::json_pointer_child("/lengths", key);
        if (doc.has(pointer)) out = static_cast<int>(doc.integer(pointer, 1, max_slots));
    };
    get("F", lengths.f);
    get("B", lengths.b);
    get("W", lengths.w);
    return lengths;
}

BlockPass read_pass(const fileio::JsonDocument& doc, const std::string& pointer,
                    const BuildingBlock& b, const BlockFileLimits& limits) {
    doc.object(pointer, {"pass", "stage", "start", "microbatch"});
    BlockPass pass;
    const std::string pass_pointer = fileio::json_pointer_child(pointer, "pass");
    const std::string& name = doc.string(pass_pointer, 8);
    if (!parse_pass(name, pass.pass))
        throw doc.error_at(pass_pointer,
                           fmt::format("{}: expected \"F\", \"B\", \"W\" or \"BW\", "
                                       "got {}",
                                       fileio::JsonDocument::display_name(pass_pointer),
                                       fileio::quote_excerpt(name)));
    pass.stage = static_cast<int>(
        doc.integer(fileio::json_pointer_child(pointer, "stage"), 0, b.stages() - 1));
    pass.start = static_cast<int>(
        doc.integer(fileio::json_pointer_child(pointer, "start"), 0, limits.max_slots));
    const std::string mb_pointer = fileio::json_pointer_child(pointer, "microbatch");
    if (doc.has(mb_pointer))
        pass.microbatch = static_cast<int>(doc.integer(mb_pointer, 0, b.group - 1));
    return pass;
}

}  // namespace

BuildingBlock parse_block_json(std::string_view text, const std::string& file,
                               const std::string& default_name, const BlockFileLimits& limits) {
    const fileio::JsonDocument doc =
        detail::open_json_file(text, file, limits.max_bytes, format_tag, format_version);
    doc.object("", {"format", "version", "name", "devices", "chunks", "placement", "lengths",
                    "interval", "group", "passes"});
    BuildingBlock b;
    b.name = doc.has("/name") ? doc.name("/name", max_name_bytes) : default_name;
    b.devices = static_cast<int>(doc.integer("/devices", 1, limits.max_devices));
    b.chunks =
        doc.has("/chunks") ? static_cast<int>(doc.integer("/chunks", 1, limits.max_chunks)) : 1;
    b.stage_device = doc.has("/placement") ? detail::read_placement(doc, b.devices, b.chunks)
                                           : looped_placement(b.devices, b.chunks);
    b.lengths = read_lengths(doc, limits.max_slots);
    b.interval = static_cast<int>(doc.integer("/interval", 1, limits.max_slots));
    b.group = doc.has("/group") ? static_cast<int>(doc.integer("/group", 1, limits.max_group)) : 1;
    const auto& passes = doc.array("/passes", limits.max_passes);
    b.passes.reserve(passes.size());
    for (std::size_t k = 0; k < passes.size(); ++k)
        b.passes.push_back(read_pass(doc, fileio::json_pointer_child("/passes", k), b, limits));
    try {
        check_block(b);
    } catch (const InvalidBlock& e) {
        const std::string pointer =
            e.pass() >= 0
                ? fileio::json_pointer_child("/passes", static_cast<std::size_t>(e.pass()))
                : std::string("/passes");
        throw doc.error_at(pointer, fileio::JsonDocument::display_name(pointer) + ": " + e.what());
    }
    return b;
}

BuildingBlock read_block_file(const std::string& path, const BlockFileLimits& limits) {
    return parse_block_json(fileio::read_text_file(path, limits.max_bytes), path,
                            fileio::file_stem(path), limits);
}

std::string block_to_json(const BuildingBlock& block) {
    // Written by hand rather than dumped: one pass per line, as a block is read and edited.
    const PlacementKind kind = classify_placement(block.stage_device, block.devices);
    const nlohmann::ordered_json placement = kind == PlacementKind::custom
                                                 ? nlohmann::ordered_json(block.stage_device)
                                                 : nlohmann::ordered_json(placement_name(kind));
    const auto dump = [](const nlohmann::ordered_json& j) {
        return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    };
    std::string out = fmt::format(
        "{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"name\": {},\n  \"devices\": {},\n"
        "  \"chunks\": {},\n  \"placement\": {},\n"
        "  \"lengths\": {{\"F\": {}, \"B\": {}, \"W\": {}}},\n  \"interval\": {},\n",
        format_tag, format_version, dump(block.name), block.devices, block.chunks, dump(placement),
        block.lengths.f, block.lengths.b, block.lengths.w, block.interval);
    if (block.group != 1) out += fmt::format("  \"group\": {},\n", block.group);
    out += "  \"passes\": [\n";
    for (std::size_t k = 0; k < block.passes.size(); ++k) {
        const BlockPass& p = block.passes[k];
        out += fmt::format("    {{\"pass\": \"{}\", \"stage\": {}, \"start\": {}",
                           pass_name(p.pass), p.stage, p.start);
        if (block.group != 1) out += fmt::format(", \"microbatch\": {}", p.microbatch);
        out += k + 1 < block.passes.size() ? "},\n" : "}\n";
    }
    return out + "  ]\n}\n";
}

}  // namespace pipesim
