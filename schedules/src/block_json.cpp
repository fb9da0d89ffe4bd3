// Building-block files.
#include "schedules/block_json.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "schedules/placement.hpp"

namespace pipesim {

namespace {

constexpr std::string_view format_tag = "pipesim-block";
constexpr int format_version = 1;
constexpr std::size_t max_name_bytes = 256;

std::vector<int> read_placement(const JsonDocument& doc, int devices, int chunks) {
    const std::string pointer = "/placement";
    const auto& value = doc.at(pointer, "\"looped\", \"v-shape\" or an array of device numbers");
    if (value.is_string()) {
        const std::string& name = value.get_ref<const std::string&>();
        if (name == placement_name(PlacementKind::looped)) return looped_placement(devices, chunks);
        if (name == placement_name(PlacementKind::vshape)) {
            if (chunks % 2 != 0)
                throw doc.error_at(pointer, fmt::format("placement: v-shape needs an even number "
                                                        "of chunks, got chunks = {}",
                                                        chunks));
            return vshape_placement(devices, chunks);
        }
    }
    const auto stages = static_cast<std::size_t>(devices) * static_cast<std::size_t>(chunks);
    if (!value.is_array() || doc.array(pointer, stages).size() != stages)
        throw doc.error_at(pointer, fmt::format("placement: expected \"looped\", \"v-shape\" or "
                                                "an array of devices·chunks = {} device numbers, "
                                                "got {}",
                                                stages, quote_excerpt(value.dump(), 40)));
    std::vector<int> placement(stages);
    for (std::size_t s = 0; s < stages; ++s)
        placement[s] =
            static_cast<int>(doc.integer(json_pointer_child(pointer, s), 0, devices - 1));
    return placement;
}

SlotLengths read_lengths(const JsonDocument& doc, int max_slots) {
    SlotLengths lengths;
    if (!doc.has("/lengths")) return lengths;
    doc.object("/lengths", {"F", "B", "W"});
    auto get = [&](const char* key, int& out) {
        const std::string pointer = json_pointer_child("/lengths", key);
        if (doc.has(pointer)) out = static_cast<int>(doc.integer(pointer, 1, max_slots));
    };
    get("F", lengths.f);
    get("B", lengths.b);
    get("W", lengths.w);
    return lengths;
}

BlockPass read_pass(const JsonDocument& doc, const std::string& pointer, const BuildingBlock& b,
                    const BlockFileLimits& limits) {
    doc.object(pointer, {"pass", "stage", "start", "microbatch"});
    BlockPass pass;
    const std::string pass_pointer = json_pointer_child(pointer, "pass");
    const std::string& name = doc.string(pass_pointer, 8);
    if (!parse_pass(name, pass.pass))
        throw doc.error_at(pass_pointer, fmt::format("{}: expected \"F\", \"B\", \"W\" or \"BW\", "
                                                     "got {}",
                                                     JsonDocument::display_name(pass_pointer),
                                                     quote_excerpt(name)));
    pass.stage =
        static_cast<int>(doc.integer(json_pointer_child(pointer, "stage"), 0, b.stages() - 1));
    pass.start =
        static_cast<int>(doc.integer(json_pointer_child(pointer, "start"), 0, limits.max_slots));
    const std::string mb_pointer = json_pointer_child(pointer, "microbatch");
    if (doc.has(mb_pointer))
        pass.microbatch = static_cast<int>(doc.integer(mb_pointer, 0, b.group - 1));
    return pass;
}

// check_block's message names a pass like "F(mb 0, stage 3) at slot 5": find the first pass
// of the file it names to point at it.
std::string locate_pass(const BuildingBlock& b, const std::string& message) {
    for (std::size_t k = 0; k < b.passes.size(); ++k) {
        const BlockPass& p = b.passes[k];
        const std::string described = fmt::format(
            "{}(mb {}, stage {}) at slot {}", pass_name(p.pass), p.microbatch, p.stage, p.start);
        if (message.find(described) != std::string::npos) return json_pointer_child("/passes", k);
    }
    return "/passes";
}

}  // namespace

BuildingBlock parse_block_json(std::string_view text, const std::string& file,
                               const std::string& default_name, const BlockFileLimits& limits) {
    if (text.size() > limits.max_bytes)
        throw ParseError(file, TextPosition{},
                         fmt::format("file is {} bytes, more than the limit of {}", text.size(),
                                     limits.max_bytes));
    const JsonDocument doc(file, std::string(text));
    if (!doc.root().is_object())
        throw doc.error_at("", fmt::format("expected a JSON object with \"format\": \"{}\", got {}",
                                           format_tag, quote_excerpt(doc.root().dump())));
    if (doc.string("/format", 64) != format_tag)
        throw doc.error_at("/format", fmt::format("format: expected \"{}\", got {}", format_tag,
                                                  quote_excerpt(doc.root()["format"].dump())));
    doc.object("", {"format", "version", "name", "devices", "chunks", "placement", "lengths",
                    "interval", "group", "passes"});
    if (doc.integer("/version", 1, 1'000'000) != format_version)
        throw doc.error_at("/version", fmt::format("version {} is not supported: this pipesim "
                                                   "reads version {}",
                                                   doc.root()["version"].dump(), format_version));
    BuildingBlock b;
    b.name = doc.has("/name") ? doc.string("/name", max_name_bytes) : default_name;
    b.devices = static_cast<int>(doc.integer("/devices", 1, limits.max_devices));
    b.chunks =
        doc.has("/chunks") ? static_cast<int>(doc.integer("/chunks", 1, limits.max_chunks)) : 1;
    b.stage_device = doc.has("/placement") ? read_placement(doc, b.devices, b.chunks)
                                           : looped_placement(b.devices, b.chunks);
    b.lengths = read_lengths(doc, limits.max_slots);
    b.interval = static_cast<int>(doc.integer("/interval", 1, limits.max_slots));
    b.group = doc.has("/group") ? static_cast<int>(doc.integer("/group", 1, limits.max_group)) : 1;
    const auto& passes = doc.array("/passes", limits.max_passes);
    b.passes.reserve(passes.size());
    for (std::size_t k = 0; k < passes.size(); ++k)
        b.passes.push_back(read_pass(doc, json_pointer_child("/passes", k), b, limits));
    try {
        check_block(b);
    } catch (const InvalidBlock& e) {
        throw doc.error_at(locate_pass(b, e.what()), e.what());
    }
    return b;
}

BuildingBlock read_block_file(const std::string& path, const BlockFileLimits& limits) {
    return parse_block_json(read_text_file(path, limits.max_bytes), path, file_stem(path), limits);
}

std::string block_to_json(const BuildingBlock& block) {
    nlohmann::ordered_json j;
    j["format"] = format_tag;
    j["version"] = format_version;
    j["name"] = block.name;
    j["devices"] = block.devices;
    j["chunks"] = block.chunks;
    const PlacementKind kind = classify_placement(block.stage_device, block.devices);
    if (kind == PlacementKind::custom)
        j["placement"] = block.stage_device;
    else
        j["placement"] = placement_name(kind);
    j["lengths"] = {{"F", block.lengths.f}, {"B", block.lengths.b}, {"W", block.lengths.w}};
    j["interval"] = block.interval;
    if (block.group != 1) j["group"] = block.group;
    // One pass per line: a block is read and edited by hand.
    std::string out = j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out.pop_back();  // the closing brace
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    out += ",\n  \"passes\": [\n";
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
