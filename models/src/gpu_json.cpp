#include "models/gpu_json.hpp"
#include "models/cost_model.hpp"

#include <array>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "fileio/parse_error.hpp"
#include "models/presets.hpp"
#include "names.hpp"

namespace pipesim::models {

namespace {

constexpr std::size_t max_text_bytes = 256;

// A rate: a number in [min, max], or also 0 where 0 means "none" (`zero_ok`).
struct Rate {
    const char* field;
    double GpuSpec::*target;
    double min, max;
    bool zero_ok;
};

// The operator-level model needs every rate without zero_ok; a file without a `base` gives
// them all. The bounds are far outside any GPU's and keep derived times finite (see
// least_efficiency), where a peak of 1e-300 (once accepted) made every time infinite and the
// run fail far from this file.
constexpr double least_share = least_efficiency;
constexpr std::array<Rate, 18> rates = {{
    {"peak_bf16_flops", &GpuSpec::peak_bf16_flops, 1e9, 1e18, false},
    {"memory_bytes", &GpuSpec::memory_bytes, 1e6, 1e15, false},
    {"hbm_bandwidth", &GpuSpec::hbm_bandwidth, 1e6, 1e15, false},
    {"gemm_efficiency", &GpuSpec::gemm_efficiency, least_share, 1, false},
    {"memory_efficiency", &GpuSpec::memory_efficiency, least_share, 1, false},
    {"scores_memory_efficiency", &GpuSpec::scores_memory_efficiency, least_share, 1, true},
    {"norm_forward_memory_efficiency", &GpuSpec::norm_forward_memory_efficiency, least_share, 1,
     true},
    {"norm_backward_memory_efficiency", &GpuSpec::norm_backward_memory_efficiency, least_share, 1,
     true},
    {"nonpersistent_norm_forward_memory_efficiency",
     &GpuSpec::nonpersistent_norm_forward_memory_efficiency, least_share, 1, true},
    {"nonpersistent_norm_backward_memory_efficiency",
     &GpuSpec::nonpersistent_norm_backward_memory_efficiency, least_share, 1, true},
    {"attention_forward_efficiency", &GpuSpec::attention_forward_efficiency, least_share, 1, false},
    {"attention_backward_efficiency", &GpuSpec::attention_backward_efficiency, least_share, 1,
     false},
    {"tp_bus_bandwidth", &GpuSpec::tp_bus_bandwidth, 1e6, 1e15, false},
    {"nic_bandwidth", &GpuSpec::nic_bandwidth, 1e6, 1e15, false},
    {"default_efficiency", &GpuSpec::default_efficiency, least_share, 1, true},
    {"gemm_k_fill", &GpuSpec::gemm_k_fill, 1, 1e6, true},
    {"gemm_reference_k", &GpuSpec::gemm_reference_k, 1, 1e9, true},
    {"launch_overhead", &GpuSpec::launch_overhead, 1e-9, 1, true},
}};

GpuSpec read_gpu(const fileio::JsonDocument& doc) {
    // The file's keys: what names it, then every rate.
    std::vector<std::string_view> known{"format", "version", "name",    "description",
                                        "source", "base",    "sm_count"};
    for (const Rate& r : rates)
        known.push_back(r.field);
    // The format first: another pipesim file (a schedule) is named as such, not by its keys.
    doc.optional_format("pipesim-gpu", 1);
    doc.object("", known);
    GpuSpec g;
    const bool has_base = doc.has("/base");
    if (has_base) {
        try {
            g = find_gpu(doc.text("/base", max_text_bytes));
            g.base = g.name;
        } catch (const fileio::ParseError&) {
            throw;
        } catch (const std::invalid_argument& e) {
            throw doc.error_at("/base", e.what());
        }
    }
    if (doc.has("/name")) {
        g.name = detail::own_name(doc, "/name", max_text_bytes, gpu_specs(), "GPU", "-measured");
    } else {
        g.name = has_base ? g.name + "-custom" : "custom";
    }
    if (doc.has("/description"))
        g.description = doc.text("/description", max_text_bytes);
    else if (!has_base)
        g.description = "custom GPU";
    g.source = doc.has("/source") ? doc.text("/source", max_text_bytes) : doc.file();
    if (doc.has("/sm_count"))
        g.sm_count = static_cast<int>(doc.integer("/sm_count", 1, 1 << 20));
    else if (!has_base)
        throw doc.error_at("",
                           "missing required field 'sm_count' (without a 'base' preset a GPU "
                           "file gives every rate: docs/gpu-format.md)");
    for (const Rate& r : rates) {
        const std::string pointer = fileio::json_pointer_child("", r.field);
        if (!doc.has(pointer)) {
            if (!has_base && !r.zero_ok)
                throw doc.error_at(
                    "", fmt::format("missing required field '{}' (without a 'base' preset a GPU "
                                    "file gives every rate: docs/gpu-format.md)",
                                    r.field));
            continue;
        }
        // One message for every value out of range or not a number, with the whole range.
        const auto& given = doc.at(pointer, "");
        const double value =
            given.is_number() ? given.get<double>() : std::numeric_limits<double>::quiet_NaN();
        if (!(value == 0 && r.zero_ok) && !(value >= r.min && value <= r.max))
            throw doc.error_at(
                pointer, fmt::format("{}: must be in {:g}..{:g}{}, got {}", r.field, r.min, r.max,
                                     r.zero_ok ? " (or 0 for none)" : "", doc.quoted(pointer)));
        g.*r.target = value;
    }
    // The short-K falloff (roofline.cpp) takes both; one alone would be silently unused.
    if ((g.gemm_k_fill > 0) != (g.gemm_reference_k > 0)) {
        const bool fill_given = doc.has("/gemm_k_fill");
        const bool reference_given = doc.has("/gemm_reference_k");
        throw doc.error_at(fill_given        ? "/gemm_k_fill"
                           : reference_given ? "/gemm_reference_k"
                                             : "",
                           fmt::format("gemm_k_fill {:g}{} and gemm_reference_k {:g}{}: the "
                                       "short-K GEMM falloff needs both above 0, or both 0 for "
                                       "none (docs/models.md)",
                                       g.gemm_k_fill, fill_given ? "" : " (the base's)",
                                       g.gemm_reference_k, reference_given ? "" : " (the base's)"));
    }
    return g;
}

}  // namespace

GpuSpec parse_gpu_json(std::string_view text, const std::string& source) {
    // A GPU file is one flat object.
    const fileio::JsonDocument doc(source, std::string(text), fileio::JsonLimits{.max_depth = 4});
    return read_gpu(doc);
}

GpuSpec load_gpu_file(const std::string& path) {
    return parse_gpu_json(fileio::read_text_file(path, max_gpu_file_bytes), path);
}

GpuSpec resolve_gpu(std::string_view name_or_path) {
    if (fileio::names_a_file(name_or_path)) return load_gpu_file(std::string(name_or_path));
    return find_gpu(name_or_path);
}

}  // namespace pipesim::models
