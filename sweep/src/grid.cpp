#include "sweep/grid.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/cluster_workload.hpp"
#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "models/byte_size.hpp"
#include "models/gpu.hpp"
#include "models/gpu_json.hpp"
#include "models/layer_costs.hpp"
#include "models/model_json.hpp"
#include "models/presets.hpp"
#include "schedules/registry.hpp"
#include "sim/simgrid/cluster.hpp"

namespace pipesim::sweep {

namespace {

constexpr std::string_view format_tag = "pipesim-sweep";
constexpr int format_version = 1;
constexpr std::size_t max_axis = 4096;
constexpr std::size_t max_name = 4096;

// A value given twice on one axis would be one job, not two (`"mb": [1, 1]` meant for
// `[1, 2]` would vanish without a word): refused, naming both places.
void check_distinct(const fileio::JsonDocument& doc, const std::string& ptr,
                    const fileio::JsonDocument::Value& arr) {
    for (std::size_t i = 1; i < arr.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (arr[i] == arr[k])
                throw doc.error_at(
                    fileio::json_pointer_child(ptr, i),
                    fmt::format("{}: {} is given twice ({}[{}] and [{}]): give each "
                                "value of an axis once",
                                ptr.substr(1), doc.quoted(fileio::json_pointer_child(ptr, i)),
                                ptr.substr(1), k, i));
}

// Calls read(pointer) for the member `key`'s value, or for each element if it is an array.
template <class Read>
void each_value(const fileio::JsonDocument& doc, std::string_view key, Read read) {
    const std::string ptr = fileio::json_pointer_child("", key);
    if (!doc.has(ptr)) return;
    if (!doc.root().at(std::string(key)).is_array()) {
        read(ptr);
        return;
    }
    const auto& arr = doc.array(ptr, max_axis);
    if (arr.empty()) throw doc.error_at(ptr, "expected a value or a non-empty array of values");
    check_distinct(doc, ptr, arr);
    for (std::size_t i = 0; i < arr.size(); ++i)
        read(fileio::json_pointer_child(ptr, i));
}

std::vector<int> int_axis(const fileio::JsonDocument& doc, std::string_view key, int min, int max) {
    std::vector<int> out;
    each_value(doc, key, [&](const std::string& ptr) {
        out.push_back(static_cast<int>(doc.integer(ptr, min, max)));
    });
    return out;
}

std::vector<double> number_axis(const fileio::JsonDocument& doc, std::string_view key, double min,
                                double max) {
    std::vector<double> out;
    each_value(doc, key, [&](const std::string& ptr) { out.push_back(doc.number(ptr, min, max)); });
    return out;
}

std::vector<bool> bool_axis(const fileio::JsonDocument& doc, std::string_view key) {
    std::vector<bool> out;
    each_value(doc, key, [&](const std::string& ptr) {
        const auto& value = doc.at(ptr, "true or false");
        if (!value.is_boolean())
            throw doc.error_at(ptr, fmt::format("{}: expected true or false",
                                                fileio::JsonDocument::display_name(ptr)));
        out.push_back(value.get<bool>());
    });
    return out;
}

// Checks each string with `check` (which throws std::invalid_argument with a message).
template <class Check>
std::vector<std::string> string_axis(const fileio::JsonDocument& doc, std::string_view key,
                                     Check check) {
    std::vector<std::string> out;
    each_value(doc, key, [&](const std::string& ptr) {
        const std::string& value = doc.string(ptr, max_name);
        // A results file keeps each job's names on one CSV line, and reads them back to
        // resume: a line break in a path could not come back, and the results reader refuses
        // every control character (C1 and bidirectional controls too).
        if (fileio::has_control(value))
            throw doc.error_at(ptr, fmt::format("{} holds a control character (a line break, a "
                                                "tab, …): rename the file",
                                                fileio::quote_excerpt(value)));
        try {
            check(value);
        } catch (const std::invalid_argument& e) {
            throw doc.error_at(ptr, e.what());
        }
        out.push_back(value);
    });
    return out;
}

// A memory cap, and whether it was given with a unit (then bytes, of a whole device).
struct MemoryValue {
    double value = 0;
    bool with_unit = false;
};

// "80GiB", "40 GB", "512MiB" or a plain number of bytes (or activation units), read as the
// command line reads --mem-limit (models::parse_byte_size: "1e308 TiB" was infinite bytes,
// which a job wrote into results that resume and merge then refused).
MemoryValue memory_value(const fileio::JsonDocument& doc, const std::string& ptr) {
    const auto& value = doc.at(ptr, "a number or a size such as \"80GiB\"");
    if (!value.is_string()) return {doc.number(ptr, 0, models::max_byte_size), false};
    const std::string& text = doc.string(ptr, 64);
    std::optional<double> bytes;
    try {
        bytes = models::parse_byte_size(text);
    } catch (const std::invalid_argument& e) {
        throw doc.error_at(ptr, fmt::format("mem_limit: {}", e.what()));
    }
    if (bytes) return {*bytes, true};
    // A plain number written as text (parse_byte_size has checked it): its own unit, read as
    // parse_byte_size reads it (std::stod threw out_of_range for a subnormal "1e-310").
    double number = 0;
    std::from_chars(text.data(), text.data() + text.size(), number);
    if (number > models::max_byte_size)
        throw doc.error_at(ptr, fmt::format("mem_limit: must be at most {:g}, got {}",
                                            models::max_byte_size, fileio::quote_excerpt(text)));
    return {number, false};
}

std::vector<double> cost_triple(const fileio::JsonDocument& doc, const std::string& ptr) {
    const auto& arr = doc.array(ptr, 3);
    if (arr.size() != 3) throw doc.error_at(ptr, "expected three costs [F, B, W]");
    std::vector<double> out;
    for (std::size_t i = 0; i < 3; ++i)
        out.push_back(doc.number(fileio::json_pointer_child(ptr, i), 0, 1e30));
    return out;
}

void check_recompute(const std::string& r) {
    models::parse_recompute(r);
}

void check_attention(const std::string& a) {
    models::parse_attention_kernel(a);
}

void check_schedule(const std::string& name) {
    if (find_generator(name)) return;
    std::string known;
    for (const ScheduleGenerator& g : schedule_generators())
        known += (known.empty() ? "" : ", ") + std::string(g.name);
    throw std::invalid_argument(
        fmt::format("unknown schedule {} (known: {})", fileio::quote_excerpt(name), known));
}

}  // namespace

const char* engine_name(Engine engine) {
    return engine == Engine::analytic ? "analytic" : "simgrid";
}

Grid parse_grid(const std::string& file, const std::string& text) {
    const fileio::JsonDocument doc(file, text);
    std::vector<std::string> mem_limit_units;  // where a mem_limit was given with a unit
    doc.require_format(format_tag, format_version);
    doc.object("", {"format",
                    "version",
                    "description",
                    "engine",
                    "schedule",
                    "p",
                    "m",
                    "m_per_p",
                    "global_batch",
                    "v",
                    "costs",
                    "comm",
                    "mem_w_ratio",
                    "model",
                    "gpu",
                    "mb",
                    "tp",
                    "dp",
                    "recompute",
                    "attention",
                    "cluster",
                    "mem_limit",
                    "cp",
                    "zero",
                    "tp_comm_overlap",
                    "overlap_grad_reduce",
                    "overlap_param_gather",
                    "post_validation",
                    "overlap_p2p_communication",
                    "first_stage_layers",
                    "last_stage_layers",
                    "nccl_algo"});
    if (doc.has("/description")) doc.string("/description", 1 << 16);
    Grid grid;
    for (const std::string& e : string_axis(doc, "engine", [](const std::string& value) {
             if (value != "analytic" && value != "simgrid")
                 throw std::invalid_argument(fmt::format(
                     "expected \"analytic\" or \"simgrid\", got {}", fileio::quote_excerpt(value)));
         }))
        grid.engines.push_back(e == "analytic" ? Engine::analytic : Engine::simgrid);
    grid.schedules = string_axis(doc, "schedule", check_schedule);
    grid.p = int_axis(doc, "p", 1, 4096);
    grid.m = int_axis(doc, "m", 1, 1 << 20);
    grid.m_per_p = int_axis(doc, "m_per_p", 1, 1 << 16);
    grid.global_batch = int_axis(doc, "global_batch", 1, 1 << 30);
    grid.v = int_axis(doc, "v", 0, 64);
    if (doc.has("/costs")) {
        const auto& costs = doc.root().at("costs");
        if (costs.is_array() && !costs.empty() && costs.front().is_array()) {
            check_distinct(doc, "/costs", doc.array("/costs", max_axis));
            for (std::size_t i = 0; i < doc.array("/costs", max_axis).size(); ++i)
                grid.costs.push_back(cost_triple(doc, fileio::json_pointer_child("/costs", i)));
        } else
            grid.costs.push_back(cost_triple(doc, "/costs"));
    }
    grid.comm = number_axis(doc, "comm", 0, 1e30);
    grid.mem_w_ratio = number_axis(doc, "mem_w_ratio", 0, 1);
    grid.models = string_axis(doc, "model",
                              [](const std::string& name) { (void)models::resolve_model(name); });
    grid.gpus =
        string_axis(doc, "gpu", [](const std::string& name) { (void)models::resolve_gpu(name); });
    grid.mb = int_axis(doc, "mb", 1, 1 << 20);
    grid.tp = int_axis(doc, "tp", 1, 1024);
    grid.dp = int_axis(doc, "dp", 1, 1 << 16);
    grid.recompute = string_axis(doc, "recompute", check_recompute);
    grid.attention = string_axis(doc, "attention", check_attention);
    grid.clusters = string_axis(doc, "cluster", [](const std::string& name) {
        (void)analysis::load_checked_cluster(name);
    });
    each_value(doc, "mem_limit", [&](const std::string& ptr) {
        const MemoryValue cap = memory_value(doc, ptr);
        if (!(cap.value > 0))
            throw doc.error_at(ptr, "mem_limit: expected a cap above 0 (leave it out for none)");
        // "40GiB", "40 GiB" and 42949672960 are one cap: one job, not three.
        for (std::size_t k = 0; k < grid.mem_limits.size(); ++k)
            if (grid.mem_limits[k] == cap.value)
                throw doc.error_at(ptr, fmt::format("mem_limit: {} is the cap of mem_limit[{}] "
                                                    "({:g} bytes or units): give each cap once",
                                                    doc.quoted(ptr), k, cap.value));
        grid.mem_limits.push_back(cap.value);
        if (cap.with_unit) mem_limit_units.push_back(ptr);
    });
    grid.cp = int_axis(doc, "cp", 1, 1024);
    grid.zero = int_axis(doc, "zero", 0, 3);
    grid.tp_comm_overlap = bool_axis(doc, "tp_comm_overlap");
    grid.overlap_grad_reduce = bool_axis(doc, "overlap_grad_reduce");
    grid.overlap_param_gather = bool_axis(doc, "overlap_param_gather");
    grid.post_validation = bool_axis(doc, "post_validation");
    grid.overlap_p2p_communication = bool_axis(doc, "overlap_p2p_communication");
    grid.first_stage_layers =
        int_axis(doc, "first_stage_layers", 0, models::ModelLimits::max_layers);
    grid.last_stage_layers = int_axis(doc, "last_stage_layers", 0, models::ModelLimits::max_layers);
    grid.nccl_algo = string_axis(
        doc, "nccl_algo", [](const std::string& name) { (void)simgrid::parse_nccl_algo(name); });

    if (grid.schedules.empty()) throw doc.error_at("", "missing \"schedule\" (a name or a list)");
    if (grid.p.empty()) throw doc.error_at("", "missing \"p\" (pipeline devices)");
    if (!grid.m.empty() + !grid.m_per_p.empty() + !grid.global_batch.empty() != 1)
        throw doc.error_at(grid.m.empty() && grid.m_per_p.empty() && grid.global_batch.empty() ? ""
                           : !grid.global_batch.empty() ? "/global_batch"
                                                        : "/m_per_p",
                           "give exactly one of \"m\" (microbatches), \"m_per_p\" (m = k·p) "
                           "and \"global_batch\" (m = global_batch / (mb·dp))");
    if (grid.models.empty() != grid.gpus.empty())
        throw doc.error_at(grid.models.empty() ? "/gpu" : "/model",
                           "\"model\" and \"gpu\" go together");
    if (grid.models.empty() && !grid.global_batch.empty())
        throw doc.error_at("/global_batch",
                           "\"global_batch\" counts sequences, which a \"model\" gives: add "
                           "\"model\" and \"gpu\", or give \"m\"");
    if (!grid.models.empty() && doc.has("/costs"))
        throw doc.error_at("/costs",
                           "\"costs\" cannot be combined with \"model\" (the model "
                           "gives the costs)");
    if (!grid.models.empty() && doc.has("/mem_w_ratio"))
        throw doc.error_at("/mem_w_ratio", "\"mem_w_ratio\" cannot be combined with \"model\"");
    // As on the command line (--mem-limit): bytes cap a whole device, which a model gives;
    // without one the cap is in activation units.
    if (grid.models.empty() && !mem_limit_units.empty())
        throw doc.error_at(mem_limit_units.front(),
                           "mem_limit with a unit caps a whole device's bytes, which a \"model\" "
                           "gives: add \"model\" and \"gpu\", or give a plain number (full-stage "
                           "microbatches of activations)");
    if (grid.models.empty())
        for (const char* key : {"/mb", "/recompute", "/attention", "/cp", "/zero",
                                "/tp_comm_overlap", "/overlap_grad_reduce", "/overlap_param_gather",
                                "/first_stage_layers", "/last_stage_layers"})
            if (doc.has(key))
                throw doc.error_at(key, fmt::format("\"{}\" needs a \"model\"", key + 1));
    bool simgrid = false;
    for (Engine e : grid.engines)
        simgrid = simgrid || e == Engine::simgrid;
    if (simgrid && grid.clusters.empty())
        throw doc.error_at("/engine", "the simgrid engine needs a \"cluster\"");
    // As on the command line: without a model, data and tensor parallelism lay a pipeline out
    // on a cluster only; the analytic replay of unit costs has nothing they change (a row of
    // dp 2 was dp 1's with twice the GPUs).
    const bool analytic =
        grid.engines.empty() ||
        std::find(grid.engines.begin(), grid.engines.end(), Engine::analytic) != grid.engines.end();
    if (grid.models.empty() && analytic)
        for (const auto& [key, values] : {std::pair{"/dp", &grid.dp}, {"/tp", &grid.tp}})
            if (std::any_of(values->begin(), values->end(), [](int v) { return v > 1; }))
                throw doc.error_at(
                    key, fmt::format("\"{}\" above 1 without a \"model\" lays the pipeline out "
                                     "on a cluster only (\"engine\": \"simgrid\"); the analytic "
                                     "engine needs \"model\", \"gpu\" and \"mb\" for it",
                                     key + 1));
    for (const char* key : {"/cluster", "/nccl_algo"})
        if (!simgrid && doc.has(key))
            throw doc.error_at(key, fmt::format("\"{}\" needs \"engine\": \"simgrid\"", key + 1));
    if (const std::size_t jobs = job_count(grid); jobs > max_jobs)
        throw doc.error_at(
            "", fmt::format(
                    "the grid expands to {} jobs, more than the limit of {}; "
                    "split it into several grid files",
                    jobs == SIZE_MAX ? "over " + std::to_string(SIZE_MAX) : std::to_string(jobs),
                    max_jobs));
    return grid;
}

Grid load_grid(const std::string& path) {
    return parse_grid(path, fileio::read_text_file(path, 1 << 20));
}

namespace {

template <class T>
std::vector<T> or_default(const std::vector<T>& axis, T fallback) {
    return axis.empty() ? std::vector<T>{fallback} : axis;
}

// Advances a mixed-radix counter (last digit fastest); false once it wraps around.
bool advance(std::vector<std::size_t>& digits, const std::vector<std::size_t>& sizes) {
    for (std::size_t i = digits.size(); i-- > 0;) {
        if (++digits[i] < sizes[i]) return true;
        digits[i] = 0;
    }
    return false;
}

// a·b, or SIZE_MAX if that overflows.
std::size_t saturating_product(std::size_t a, std::size_t b) {
    std::size_t out = 0;
    return __builtin_mul_overflow(a, b, &out) ? SIZE_MAX : out;
}

// The axis sizes of `engine`'s jobs, in expansion order (see expand()).
std::vector<std::size_t> axis_sizes(const Grid& grid, Engine engine) {
    const bool sg = engine == Engine::simgrid;
    const auto size = [](const auto& axis) { return std::max<std::size_t>(axis.size(), 1); };
    return {size(grid.models),
            size(grid.gpus),
            sg ? grid.clusters.size() : 1,
            grid.schedules.size(),
            grid.p.size(),
            std::max({grid.m.size(), grid.m_per_p.size(), grid.global_batch.size()}),
            size(grid.v),
            size(grid.mb),
            size(grid.tp),
            size(grid.dp),
            size(grid.recompute),
            size(grid.attention),
            size(grid.costs),
            sg ? 1 : size(grid.comm),
            size(grid.mem_w_ratio),
            size(grid.mem_limits),
            size(grid.cp),
            size(grid.zero),
            size(grid.tp_comm_overlap),
            size(grid.overlap_grad_reduce),
            size(grid.overlap_param_gather),
            size(grid.post_validation),
            size(grid.overlap_p2p_communication),
            size(grid.first_stage_layers),
            size(grid.last_stage_layers),
            sg ? size(grid.nccl_algo) : 1};
}

}  // namespace

std::size_t job_count(const Grid& grid) {
    std::size_t total = 0;
    for (Engine engine :
         grid.engines.empty() ? std::vector<Engine>{Engine::analytic} : grid.engines) {
        std::size_t jobs = 1;
        for (std::size_t n : axis_sizes(grid, engine))
            jobs = saturating_product(jobs, n);
        total = total > SIZE_MAX - jobs ? SIZE_MAX : total + jobs;
    }
    return total;
}

std::vector<Job> expand(const Grid& grid) {
    if (const std::size_t jobs = job_count(grid); jobs > max_jobs)
        throw std::invalid_argument(
            fmt::format("the grid expands to {} jobs, more than the limit of {}", jobs, max_jobs));
    const Job d;
    const auto models = or_default(grid.models, std::string());
    const auto gpus = or_default(grid.gpus, std::string());
    const auto ms = !grid.m.empty()         ? grid.m
                    : !grid.m_per_p.empty() ? grid.m_per_p
                                            : grid.global_batch;
    const auto vs = or_default(grid.v, d.v);
    const auto mbs = or_default(grid.mb, d.mb);
    const auto tps = or_default(grid.tp, d.tp);
    const auto dps = or_default(grid.dp, d.dp);
    const auto recomputes = or_default(grid.recompute, d.recompute);
    const auto attentions = or_default(grid.attention, d.attention);
    const auto costs = or_default(grid.costs, d.costs);
    const auto ratios = or_default(grid.mem_w_ratio, d.mem_w_ratio);
    const auto caps = or_default(grid.mem_limits, d.mem_limit);
    const auto cps = or_default(grid.cp, d.cp);
    const auto zeros = or_default(grid.zero, d.zero);
    const auto tp_overlaps = or_default(grid.tp_comm_overlap, d.tp_comm_overlap);
    const auto grad_overlaps = or_default(grid.overlap_grad_reduce, d.overlap_grad_reduce);
    const auto gather_overlaps = or_default(grid.overlap_param_gather, d.overlap_param_gather);
    const auto post_validations = or_default(grid.post_validation, d.post_validation);
    const auto p2p_overlaps =
        or_default(grid.overlap_p2p_communication, d.overlap_p2p_communication);
    const auto firsts = or_default(grid.first_stage_layers, d.first_stage_layers);
    const auto lasts = or_default(grid.last_stage_layers, d.last_stage_layers);
    std::vector<Job> jobs;
    for (Engine engine : or_default(grid.engines, Engine::analytic)) {
        // The analytic engine has no cluster; SimGrid takes latencies from the cluster.
        const bool sg = engine == Engine::simgrid;
        const auto clusters = sg ? grid.clusters : std::vector<std::string>{""};
        const auto comms = sg ? std::vector<double>{0.0} : or_default(grid.comm, d.comm);
        const auto algos = sg ? or_default(grid.nccl_algo, d.nccl_algo) : std::vector{d.nccl_algo};
        const std::vector<std::size_t> sizes = axis_sizes(grid, engine);
        if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) continue;
        std::vector<std::size_t> at(sizes.size(), 0);
        do {
            Job j;
            j.index = static_cast<int>(jobs.size());
            j.engine = engine;
            j.model = models[at[0]];
            j.gpu = gpus[at[1]];
            j.cluster = clusters[at[2]];
            j.schedule = grid.schedules[at[3]];
            j.p = grid.p[at[4]];
            j.m = grid.m.empty() ? ms[at[5]] * j.p : ms[at[5]];
            j.v = vs[at[6]];
            j.mb = mbs[at[7]];
            j.tp = tps[at[8]];
            j.dp = dps[at[9]];
            j.recompute = recomputes[at[10]];
            j.attention = attentions[at[11]];
            j.costs = costs[at[12]];
            j.comm = comms[at[13]];
            j.mem_w_ratio = ratios[at[14]];
            j.mem_limit = caps[at[15]];
            j.cp = cps[at[16]];
            j.zero = zeros[at[17]];
            j.tp_comm_overlap = tp_overlaps[at[18]];
            j.overlap_grad_reduce = grad_overlaps[at[19]];
            j.overlap_param_gather = gather_overlaps[at[20]];
            j.post_validation = post_validations[at[21]];
            j.overlap_p2p_communication = p2p_overlaps[at[22]];
            j.first_stage_layers = firsts[at[23]];
            j.last_stage_layers = lasts[at[24]];
            j.nccl_algo = algos[at[25]];
            if (!grid.global_batch.empty()) {  // m = B / (mb·dp), or 0 where that is no integer
                j.global_batch = ms[at[5]];
                const long long per_step = static_cast<long long>(j.mb) * j.dp;
                j.m = j.global_batch % per_step == 0 ? static_cast<int>(j.global_batch / per_step)
                                                     : 0;
            }
            jobs.push_back(std::move(j));
        } while (advance(at, sizes));
    }
    return jobs;
}

std::vector<Job> shard_jobs(const std::vector<Job>& jobs, int shard, int shards) {
    if (shards < 1 || shard < 0 || shard >= shards)
        throw std::invalid_argument(fmt::format("shard {}/{}: expected 0 ≤ I < N", shard, shards));
    std::vector<Job> out;
    for (const Job& j : jobs)
        if (j.index % shards == shard) out.push_back(j);
    return out;
}

}  // namespace pipesim::sweep
