#include <fmt/format.h>

#include "args.hpp"
#include "commands.hpp"
#include "models/gpu.hpp"
#include "models/presets.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/cluster.hpp"

namespace pipesim::cli {

namespace {

constexpr const char* list_usage = R"(usage: pipesim list

Prints the schedules (name, chunks per device, description), the model presets, the GPUs
and the cluster presets that the other commands accept by name.
)";

}  // namespace

int run_list(const std::vector<std::string>& args) {
    if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
        fmt::print("{}", list_usage);
        return 0;
    }
    if (!args.empty()) throw UsageError(fmt::format("list takes no arguments, got '{}'", args[0]));
    fmt::print("schedules:\n");
    for (const ScheduleGenerator& g : schedule_generators()) {
        const std::string chunks =
            g.min_chunks == g.max_chunks
                ? fmt::format("v={}", g.min_chunks)
                : fmt::format("v≥{} (default {})", g.min_chunks, g.default_chunks);
        fmt::print("  {:<18} {:<16} {}\n", g.name, chunks, g.description);
    }
    fmt::print("\nmodels (--model NAME, or a model JSON file):\n");
    for (const models::TransformerConfig& c : models::model_presets())
        fmt::print(
            "  {:<13} {:>7.1f}B params  L={:<3} h={:<5} heads={:<3} kv={:<3} V={:<6} s={}{}\n",
            c.name, models::total_params(c) / 1e9, c.layers, c.hidden, c.heads,
            c.kv_heads_or_default(), c.vocab, c.seq_len,
            c.reconstructed_shape ? "  (reconstructed shape)" : "");
    fmt::print("\nGPUs (--gpu NAME, or a GPU JSON file):\n");
    for (const models::GpuSpec& g : models::gpu_specs())
        fmt::print(
            "  {:<13} {:>6.1f} TFLOP/s bf16  {:>6.1f} GiB  {:>5.2f} TB/s  typical --efficiency "
            "{:<5g} {}\n",
            g.name, g.peak_bf16_flops / 1e12, g.memory_bytes / (1024.0 * 1024 * 1024),
            g.hbm_bandwidth / 1e12, g.default_efficiency, g.description);
    fmt::print("\nclusters (--cluster NAME or NAME:NODES, or a cluster JSON file):\n");
    for (const simgrid::ClusterPreset& c : simgrid::cluster_presets())
        fmt::print("  {:<13} {}\n", c.name, c.description);
    return 0;
}

}  // namespace pipesim::cli
