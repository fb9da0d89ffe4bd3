#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "json_source.hpp"
#include "models/cost_model.hpp"

namespace pipesim::models {

namespace {

using detail::JsonSource;
using json = nlohmann::json;

constexpr const char* format_name = "pipesim-calibration";

int entry_int(const JsonSource& doc, const json& entry, const std::string& at, const char* key,
              int min, int fallback, bool required) {
    if (!entry.contains(key)) {
        if (required) doc.fail(at, fmt::format("missing required field '{}'", key));
        return fallback;
    }
    const json& v = entry.at(key);
    if (!v.is_number_integer() || v.get<long long>() < min ||
        v.get<long long>() > std::numeric_limits<int>::max())
        doc.fail(at + "/" + key,
                 fmt::format("'{}' must be an integer ≥ {}, got {}", key, min, v.dump()));
    return v.get<int>();
}

double entry_seconds(const JsonSource& doc, const json& entry, const std::string& at,
                     const char* key) {
    if (!entry.contains(key)) doc.fail(at, fmt::format("missing required field '{}'", key));
    const json& v = entry.at(key);
    if (!v.is_number() || !(v.get<double>() > 0))
        doc.fail(at + "/" + key,
                 fmt::format("'{}' must be a time in seconds > 0, got {}", key, v.dump()));
    return v.get<double>();
}

CalibrationEntry read_entry(const JsonSource& doc, const json& e, const std::string& at) {
    if (!e.is_object()) doc.fail(at, "each entry of 'layers' must be an object");
    CalibrationEntry c;
    c.hidden = entry_int(doc, e, at, "hidden", 1, 0, true);
    c.heads = entry_int(doc, e, at, "heads", 1, 0, true);
    c.kv_heads = entry_int(doc, e, at, "kv_heads", 1, c.heads, false);
    c.ffn_hidden = entry_int(doc, e, at, "ffn_hidden", 1, 4 * c.hidden, false);
    c.seq_len = entry_int(doc, e, at, "seq_len", 1, 0, true);
    c.microbatch = entry_int(doc, e, at, "microbatch", 1, 0, true);
    c.tp = entry_int(doc, e, at, "tp", 1, 1, false);
    if (e.contains("mlp")) {
        const json& m = e.at("mlp");
        if (m == "gelu")
            c.mlp = Mlp::gelu;
        else if (m == "swiglu")
            c.mlp = Mlp::swiglu;
        else
            doc.fail(at + "/mlp", fmt::format("'mlp' must be gelu or swiglu, got {}", m.dump()));
    }
    if (c.hidden % c.heads != 0 || c.heads % c.kv_heads != 0)
        doc.fail(at, "heads must divide hidden and kv_heads must divide heads");
    c.times = {entry_seconds(doc, e, at, "forward"), entry_seconds(doc, e, at, "backward_input"),
               entry_seconds(doc, e, at, "backward_weight")};
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
    if (gpu.name != cal.gpu)
        throw std::invalid_argument(
            fmt::format("the calibration file was measured on '{}', not on the chosen GPU '{}'",
                        cal.gpu, gpu.name));
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
    return AnalyticCostModel(std::move(gpu), clamp(median(eff[0])), clamp(median(eff[1])),
                             clamp(median(eff[2])));
}

bool same_shape(const CalibrationEntry& e, const TransformerConfig& c, const Workload& w) {
    return e.hidden == c.hidden && e.heads == c.heads && e.kv_heads == c.kv_heads_or_default() &&
           e.ffn_hidden == c.ffn_or_default() && e.mlp == c.mlp && e.seq_len == w.seq(c) &&
           e.microbatch == w.microbatch && e.tp == w.tp;
}

}  // namespace

Calibration parse_calibration(std::string_view text, const std::string& source) {
    const JsonSource doc(text, source);
    const json& root = doc.root();
    if (!root.is_object()) doc.fail("", "a calibration file must be one JSON object");
    if (!root.contains("format") || root.at("format") != format_name)
        doc.fail(root.contains("format") ? "/format" : "",
                 fmt::format("'format' must be \"{}\"", format_name));
    if (!root.contains("version") || root.at("version") != 1)
        doc.fail(root.contains("version") ? "/version" : "", "'version' must be 1");
    Calibration cal;
    if (!root.contains("gpu") || !root.at("gpu").is_string())
        doc.fail(root.contains("gpu") ? "/gpu" : "", "'gpu' must be a GPU name string");
    cal.gpu = root.at("gpu").get<std::string>();
    try {
        find_gpu(cal.gpu);
    } catch (const std::invalid_argument& e) {
        doc.fail("/gpu", e.what());
    }
    if (root.contains("device")) {
        if (!root.at("device").is_string()) doc.fail("/device", "'device' must be a string");
        cal.device = root.at("device").get<std::string>();
    }
    if (!root.contains("layers") || !root.at("layers").is_array() || root.at("layers").empty())
        doc.fail(root.contains("layers") ? "/layers" : "",
                 "'layers' must be a non-empty array of measured layer shapes");
    const json& layers = root.at("layers");
    for (std::size_t i = 0; i < layers.size(); ++i)
        cal.layers.push_back(read_entry(doc, layers[i], fmt::format("/layers/{}", i)));
    return cal;
}

Calibration load_calibration(const std::string& path) {
    return parse_calibration(detail::read_text_file(path, "calibration"), path);
}

CalibratedCostModel::CalibratedCostModel(GpuSpec gpu, Calibration calibration)
    : calibration_(std::move(calibration)), fallback_(measured_fallback(gpu, calibration_)) {}

PassTimes CalibratedCostModel::layer(const TransformerConfig& config,
                                     const Workload& workload) const {
    for (const CalibrationEntry& e : calibration_.layers) {
        if (!same_shape(e, config, workload)) continue;
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
