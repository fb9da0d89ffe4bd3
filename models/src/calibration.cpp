#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "fileio/parse_error.hpp"
#include "models/cost_model.hpp"
#include "models/model_json.hpp"

namespace pipesim::models {

namespace {

using Value = fileio::JsonDocument::Value;
using L = CalibrationLimits;

constexpr const char* format_name = "pipesim-calibration";

int entry_int(const fileio::JsonDocument& doc, const std::string& at, const char* key, int min,
              int max, int fallback) {
    const std::string pointer = fileio::json_pointer_child(at, key);
    if (!doc.has(pointer)) return fallback;
    return static_cast<int>(doc.integer(pointer, min, max));
}

int required_int(const fileio::JsonDocument& doc, const std::string& at, const char* key, int min,
                 int max) {
    const std::string pointer = fileio::json_pointer_child(at, key);
    if (!doc.has(pointer))
        throw doc.error_at(at, fmt::format("{}: missing required field '{}'",
                                           fileio::JsonDocument::display_name(at), key));
    return static_cast<int>(doc.integer(pointer, min, max));
}

double entry_seconds(const fileio::JsonDocument& doc, const std::string& at, const char* key) {
    const std::string pointer = fileio::json_pointer_child(at, key);
    if (!doc.has(pointer))
        throw doc.error_at(at, fmt::format("{}: missing required field '{}'",
                                           fileio::JsonDocument::display_name(at), key));
    const Value& v = doc.at(pointer, "a time in seconds");
    if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() <= L::max_seconds))
        throw doc.error_at(pointer, fmt::format("'{}' must be a time in seconds > 0 and ≤ {:g}, "
                                                "got {}",
                                                key, L::max_seconds, doc.quoted(pointer)));
    return v.get<double>();
}

CalibrationEntry read_entry(const fileio::JsonDocument& doc, const std::string& at) {
    // A misspelt optional key (`ffn_hiden`) would leave its default in place, so that the
    // entry silently matched no layer: every key is checked. `tflops` and `kernels` are what
    // `pipesim calibrate` records of how it measured (docs/calibration-format.md); the reader
    // does not use them.
    doc.object(at,
               {"hidden", "heads", "kv_heads", "ffn_hidden", "mlp", "seq_len", "microbatch", "tp",
                "attention", "forward", "backward_input", "backward_weight", "tflops", "kernels"});
    CalibrationEntry c;
    c.hidden = required_int(doc, at, "hidden", 1, ModelLimits::max_hidden);
    c.heads = required_int(doc, at, "heads", 1, ModelLimits::max_heads);
    c.kv_heads = entry_int(doc, at, "kv_heads", 1, ModelLimits::max_heads, c.heads);
    c.ffn_hidden = entry_int(doc, at, "ffn_hidden", 1, ModelLimits::max_ffn_hidden, 4 * c.hidden);
    c.seq_len = required_int(doc, at, "seq_len", 1, ModelLimits::max_seq_len);
    c.microbatch = required_int(doc, at, "microbatch", 1, L::max_microbatch);
    c.tp = entry_int(doc, at, "tp", 1, L::max_tp, 1);
    const std::string mlp = fileio::json_pointer_child(at, "mlp");
    if (doc.has(mlp)) {
        const Value& m = doc.at(mlp, "gelu or swiglu");
        if (m == "gelu")
            c.mlp = Mlp::gelu;
        else if (m == "swiglu")
            c.mlp = Mlp::swiglu;
        else
            throw doc.error_at(mlp, fmt::format("'mlp' must be gelu or swiglu, got {}",
                                                fileio::quote_excerpt(m.dump())));
    }
    const std::string attention = fileio::json_pointer_child(at, "attention");
    if (doc.has(attention)) {
        const Value& a = doc.at(attention, "fused or unfused");
        if (a == "fused")
            c.attention = AttentionKernel::fused;
        else if (a == "unfused")
            c.attention = AttentionKernel::unfused;
        else
            throw doc.error_at(attention,
                               fmt::format("'attention' must be fused or unfused, got {}",
                                           fileio::quote_excerpt(a.dump())));
    }
    if (c.hidden % c.heads != 0)
        throw doc.error_at(
            fileio::json_pointer_child(at, "heads"),
            fmt::format("heads must divide hidden: {} heads, hidden {}", c.heads, c.hidden));
    if (c.heads % c.kv_heads != 0)
        throw doc.error_at(
            doc.has(fileio::json_pointer_child(at, "kv_heads"))
                ? fileio::json_pointer_child(at, "kv_heads")
                : at,
            fmt::format("kv_heads must divide heads: {} kv_heads, {} heads", c.kv_heads, c.heads));
    // A layer split over tp ranks as -t splits it; a tp that does not divide its heads was
    // read as a shape no run can have, and its efficiencies applied.
    for (const auto& [what, value] :
         {std::pair{"heads", c.heads}, {"kv_heads", c.kv_heads}, {"ffn_hidden", c.ffn_hidden}})
        if (value % c.tp != 0)
            throw doc.error_at(
                fileio::json_pointer_child(at, "tp"),
                fmt::format("tp {} does not divide the layer's {} ({})", c.tp, what, value));
    c.times = {entry_seconds(doc, at, "forward"), entry_seconds(doc, at, "backward_input"),
               entry_seconds(doc, at, "backward_weight")};
    return c;
}

// A TransformerConfig/Workload pair with the entry's layer shape (other fields default).
std::pair<TransformerConfig, Workload> entry_shape(const CalibrationEntry& e) {
    TransformerConfig c;
    c.name = "calibration entry";
    c.layers = 1;
    c.hidden = e.hidden;
    c.heads = e.heads;
    c.kv_heads = e.kv_heads;
    c.ffn_hidden = e.ffn_hidden;
    c.mlp = e.mlp;
    c.vocab = 1;
    c.seq_len = e.seq_len;
    Workload w;
    w.microbatch = e.microbatch;
    w.tp = e.tp;
    return {c, w};
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Achieved fraction of peak per pass, the median over the file's entries.
AnalyticCostModel measured_fallback(GpuSpec gpu, const Calibration& cal) {
    // A GPU file based on the preset the file was measured on is the same hardware with
    // rates of its own: the measured times stand for its layers, as they do for the preset's.
    if (gpu.name != cal.gpu && gpu.base != cal.gpu)
        throw std::invalid_argument(fmt::format(
            "{}the calibration file was measured on '{}', not on the chosen GPU '{}'{}",
            cal.source.empty() ? "" : cal.source + ": ", cal.gpu, gpu.name,
            gpu.base.empty() ? "" : fmt::format(" (a GPU file based on '{}')", gpu.base)));
    if (cal.layers.empty()) throw std::invalid_argument("the calibration has no measured layers");
    std::vector<double> eff[3];
    for (const CalibrationEntry& e : cal.layers) {
        const auto [config, workload] = entry_shape(e);
        const PassFlops f = layer_flops(config, workload);
        const double rate = gpu.peak_bf16_flops * e.tp;
        eff[0].push_back(f.forward / (e.times.forward * rate));
        eff[1].push_back(f.backward_input / (e.times.backward_input * rate));
        eff[2].push_back(f.backward_weight / (e.times.backward_weight * rate));
    }
    // Measured rates above the datasheet peak mean a wrong file or GPU; clamp to 1 so the
    // model stays usable, as exact-shape entries are used as measured anyway.
    auto clamp = [](double e) { return std::min(e, 1.0); };
    // Far below: tiny layers, latency-bound as measured, would time the model's own layers
    // (which the file does not have) at that rate, for years.
    constexpr std::array<const char*, 3> passes = {"forward", "backward_input", "backward_weight"};
    std::array<double, 3> medians{};
    for (int pass = 0; pass < 3; ++pass) {
        medians[pass] = median(eff[pass]);
        if (medians[pass] < least_efficiency)
            throw std::invalid_argument(fmt::format(
                "{}its layers' {} passes ran at a median {:.3g} of the GPU's peak, below the "
                "least share pipesim times a layer at ({:g}): measure the model's own layer "
                "shapes",
                cal.source.empty() ? "" : cal.source + ": ", passes[pass], medians[pass],
                least_efficiency));
    }
    return AnalyticCostModel(std::move(gpu), clamp(medians[0]), clamp(medians[1]),
                             clamp(medians[2]));
}

// An entry is a layer timed whole on its GPUs: with context parallelism a rank runs a share
// of the sequence and the K/V ring besides, which no entry measured (the file's efficiencies
// time such a layer instead).
bool same_shape(const CalibrationEntry& e, const TransformerConfig& c, const Workload& w) {
    return w.cp <= 1 && e.hidden == c.hidden && e.heads == c.heads &&
           e.kv_heads == c.kv_heads_or_default() && e.ffn_hidden == c.ffn_or_default() &&
           e.mlp == c.mlp && e.seq_len == w.seq(c) && e.microbatch == w.microbatch &&
           e.tp == w.tp && (!e.attention || *e.attention == w.attention);
}

std::string shape_text(const CalibrationEntry& e) {
    return fmt::format(
        "hidden {}, heads {}, kv_heads {}, ffn_hidden {}, {}, seq_len {}, "
        "microbatch {}, tp {}{}",
        e.hidden, e.heads, e.kv_heads, e.ffn_hidden, e.mlp == Mlp::swiglu ? "swiglu" : "gelu",
        e.seq_len, e.microbatch, e.tp,
        !e.attention                             ? ""
        : *e.attention == AttentionKernel::fused ? ", fused attention"
                                                 : ", unfused attention");
}

bool same_entry_shape(const CalibrationEntry& a, const CalibrationEntry& b) {
    return a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads &&
           a.ffn_hidden == b.ffn_hidden && a.mlp == b.mlp && a.seq_len == b.seq_len &&
           a.microbatch == b.microbatch && a.tp == b.tp && a.attention == b.attention;
}

// Each pass of a layer runs at least its linear layers' GEMMs, 2·s·b FLOPs per weight (the
// backward-weight pass is nothing else; the forward and backward-input passes add the
// attention core): no time below those FLOPs at the GPU's datasheet peak on tp GPUs is a
// measurement.
void check_physical(const fileio::JsonDocument& doc, const std::string& at,
                    const CalibrationEntry& e, const GpuSpec& gpu) {
    const auto [config, workload] = entry_shape(e);
    const double gemm_flops = layer_flops(config, workload).backward_weight;
    const double fastest = gemm_flops / (gpu.peak_bf16_flops * e.tp);
    const std::pair<const char*, double> passes[] = {{"forward", e.times.forward},
                                                     {"backward_input", e.times.backward_input},
                                                     {"backward_weight", e.times.backward_weight}};
    for (const auto& [key, seconds] : passes)
        if (seconds < fastest)
            throw doc.error_at(
                fileio::json_pointer_child(at, key),
                fmt::format("'{}' {:g} s is faster than the GPU can be: the layer's GEMMs alone "
                            "({:.4g} GFLOP) take {:.4g} ms at the {} peak ({:g} TFLOP/s) on {} "
                            "GPU{}",
                            key, seconds, gemm_flops / 1e9, fastest * 1e3, gpu.name,
                            gpu.peak_bf16_flops / 1e12, e.tp, e.tp == 1 ? "" : "s"));
}

}  // namespace

Calibration parse_calibration(std::string_view text, const std::string& source) {
    // The deepest part `pipesim calibrate` writes is layers[i].kernels[k]: depth 5.
    const fileio::JsonDocument doc(source, std::string(text),
                                   fileio::JsonLimits{.max_depth = L::max_depth});
    doc.require_format(format_name, 1);
    // `measured` is what `pipesim calibrate` records of the device and the method.
    doc.object("", {"format", "version", "gpu", "device", "layers", "measured"});
    Calibration cal;
    cal.source = source;
    cal.gpu = doc.text("/gpu", 64);
    const GpuSpec* gpu = nullptr;
    try {
        gpu = &find_gpu(cal.gpu);
    } catch (const std::invalid_argument& e) {
        throw doc.error_at("/gpu", e.what());
    }
    if (doc.has("/device")) cal.device = doc.text("/device", 256);
    const Value& layers = doc.array("/layers", L::max_entries);
    if (layers.empty())
        throw doc.error_at("/layers",
                           "'layers' must be a non-empty array of measured layer shapes");
    cal.layers.reserve(layers.size());
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string at = fileio::json_pointer_child("/layers", i);
        CalibrationEntry entry = read_entry(doc, at);
        check_physical(doc, at, entry, *gpu);
        // Only the first of two entries of one shape would ever be used.
        for (std::size_t k = 0; k < i; ++k)
            if (same_entry_shape(cal.layers[k], entry))
                throw doc.error_at(at, fmt::format("layers[{}] has the shape of layers[{}] ({}); "
                                                   "give each shape once",
                                                   i, k, shape_text(entry)));
        cal.layers.push_back(std::move(entry));
    }
    return cal;
}

Calibration load_calibration(const std::string& path) {
    return parse_calibration(fileio::read_text_file(path, L::max_file_bytes), path);
}

CalibratedCostModel::CalibratedCostModel(GpuSpec gpu, Calibration calibration)
    : calibration_(std::move(calibration)), fallback_(measured_fallback(gpu, calibration_)) {}

bool CalibratedCostModel::measured(const TransformerConfig& config,
                                   const Workload& workload) const {
    return std::any_of(calibration_.layers.begin(), calibration_.layers.end(),
                       [&](const CalibrationEntry& e) { return same_shape(e, config, workload); });
}

PassTimes CalibratedCostModel::layer(const TransformerConfig& config,
                                     const Workload& workload) const {
    // The entry that names the run's attention kernel, else one that names none: a file may
    // hold both for one shape, and the more specific one wins whatever their order.
    const CalibrationEntry* match = nullptr;
    for (const CalibrationEntry& e : calibration_.layers)
        if (same_shape(e, config, workload) && (!match || e.attention)) {
            match = &e;
            if (e.attention) break;
        }
    if (match) {
        const CalibrationEntry& e = *match;
        PassTimes times = e.times;
        if (workload.recompute == Recompute::full)
            times.backward_input += times.forward;
        else if (workload.recompute == Recompute::selective)
            times.backward_input +=
                fallback_.seconds(layer_recompute_flops(config, workload) / workload.tp, 0);
        return times;
    }
    return fallback_.layer(config, workload);
}

PassTimes CalibratedCostModel::head(const TransformerConfig& config,
                                    const Workload& workload) const {
    return fallback_.head(config, workload);
}

}  // namespace pipesim::models
