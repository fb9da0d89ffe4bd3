#include "calibration/calibration_file.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "models/gpu.hpp"

namespace pipesim::calibration {

namespace {

using json = nlohmann::ordered_json;

const char* mlp_name(models::Mlp mlp) {
    return mlp == models::Mlp::swiglu ? "swiglu" : "gelu";
}

double tflops(double flops, double seconds) {
    return seconds > 0 ? flops / seconds / 1e12 : 0;
}

json layer_json(const LayerMeasurement& m) {
    const models::CalibrationEntry& e = m.entry;
    const models::PassTimes& t = e.times;
    if (!(t.forward > 0) || !(t.backward_input > 0) || !(t.backward_weight > 0))
        throw std::invalid_argument(
            fmt::format("calibration of hidden {} microbatch {}: pass times must be > 0, got "
                        "{:g}, {:g}, {:g} s",
                        e.hidden, e.microbatch, t.forward, t.backward_input, t.backward_weight));
    json j = {{"hidden", e.hidden},
              {"heads", e.heads},
              {"kv_heads", e.kv_heads},
              {"ffn_hidden", e.ffn_hidden},
              {"mlp", mlp_name(e.mlp)},
              {"seq_len", e.seq_len},
              {"microbatch", e.microbatch},
              {"tp", e.tp},
              {"forward", t.forward},
              {"backward_input", t.backward_input},
              {"backward_weight", t.backward_weight}};
    // Old files lack it (the reader then matches either kind); calibrate always writes it.
    if (e.attention) j["attention"] = models::attention_kernel_name(*e.attention);
    j["tflops"] = {{"forward", tflops(m.flops.forward, t.forward)},
                   {"backward_input", tflops(m.flops.backward_input, t.backward_input)},
                   {"backward_weight", tflops(m.flops.backward_weight, t.backward_weight)}};
    json kernels = json::array();
    for (const KernelTime& k : m.kernels) {
        json kj = {
            {"name", k.name}, {"pass", std::string(pass_name(k.pass))}, {"seconds", k.seconds}};
        if (k.flops > 0) kj["tflops"] = tflops(k.flops, k.seconds);
        if (k.bytes > 0 && k.seconds > 0) kj["gb_per_s"] = k.bytes / k.seconds / 1e9;
        kernels.push_back(std::move(kj));
    }
    j["kernels"] = std::move(kernels);
    return j;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

json calibration_json(const CalibrationRecord& r) {
    models::find_gpu(r.gpu);  // throws for an unknown name
    if (r.layers.empty()) throw std::invalid_argument("a calibration needs at least one layer");
    json j = {{"format", "pipesim-calibration"},
              {"version", 1},
              {"gpu", r.gpu},
              {"device", r.device.name}};
    json measured = {{"tool", "pipesim calibrate"},
                     {"model", r.model},
                     {"method", r.method},
                     {"sm_count", r.device.sm_count},
                     {"partition_sms", r.device.partition_sms},
                     {"clock_mhz", r.device.clock_mhz},
                     {"memory_clock_mhz", r.device.memory_clock_mhz},
                     {"memory_bytes", r.device.memory_bytes},
                     {"cuda_runtime", r.device.cuda_runtime},
                     {"cuda_driver", r.device.cuda_driver}};
    if (r.copy.seconds > 0)
        measured["copy"] = {{"kind", r.copy.kind},
                            {"bytes", r.copy.bytes},
                            {"seconds", r.copy.seconds},
                            {"bandwidth", r.copy.bandwidth()}};
    j["measured"] = std::move(measured);
    json layers = json::array();
    for (const LayerMeasurement& m : r.layers)
        layers.push_back(layer_json(m));
    j["layers"] = std::move(layers);
    return j;
}

void write_calibration_file(const CalibrationRecord& record, const std::string& path) {
    fileio::write_file_atomically(path, calibration_json(record).dump(2) + "\n");
}

std::string gpu_name_for_device(std::string_view device_name) {
    const std::string d = lower(device_name);
    auto has = [&](const char* s) { return d.find(s) != std::string::npos; };
    if (has("h200")) return "h200";
    if (has("h100") && !has("pcie")) return "h100-sxm";
    if (has("a100")) {
        if (has("80gb")) return "a100-80gb";
        if (has("40gb")) return "a100-40gb";
    }
    throw std::invalid_argument(fmt::format(
        "no known GPU matches the device '{}': give one with --gpu (see 'pipesim list')",
        device_name));
}

}  // namespace pipesim::calibration
