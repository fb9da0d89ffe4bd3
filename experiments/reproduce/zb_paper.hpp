#pragma once
// Published numbers of Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024), as data:
// the setups of its Table 3, the profiled times of its Table 9 (Appendix D), the bubble rates
// of its Table 5 and the measured throughput and memory of its Table 4. The reproductions
// zero-bubble and throughput build their jobs from these tables and compare against them.

#include <array>
#include <string>

#include "sweep/grid.hpp"

namespace pipesim::reproduce::zb_paper {

/// Table 5's columns, in its order, as pipesim names them, and as the paper labels them.
inline constexpr std::array<const char*, 6> bubble_schedules = {
    "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "zb-1p", "zb-2p"};
inline constexpr std::array<const char*, 6> bubble_labels = {"1F1B",  "1F1B-I", "ZB-H1",
                                                             "ZB-H2", "ZB-1p",  "ZB-2p"};

/// Table 4's rows, reordered to pipesim's order (the paper lists ZB-2p, ZB-1p, 1F1B, 1F1B-I).
inline constexpr std::array<const char*, 4> throughput_schedules = {"1f1b", "interleaved-1f1b",
                                                                    "zb-1p", "zb-2p"};
inline constexpr std::array<const char*, 4> throughput_labels = {"1F1B", "1F1B-I", "ZB-1p",
                                                                 "ZB-2p"};

/// Whether the paper's runs of `schedule` stepped the optimizer without a pipeline-wide
/// synchronization: its §4 ("bypassing optimizer synchronizations", post-validation), which
/// its repository's example script turns on with every ZB schedule
/// (--enable-optimizer-post-validation with --enable-zero-bubble in fp16); the 1F1B and
/// interleaved 1F1B baselines step after a synchronization.
inline bool post_validated(const std::string& schedule) {
    return schedule == "zb-1p" || schedule == "zb-2p";
}

/// One model of Table 3 and how the paper ran it (sequence length 1024 for all; A100 SXM
/// 80GB, up to 4 nodes of 8 over RoCE RDMA).
struct Setup {
    const char* preset;  ///< pipesim's model preset (models/presets.cpp)
    const char* label;   ///< the paper's name
    int layers;
    int p;   ///< pipeline stages = GPUs
    int mb;  ///< microbatch size (sequences)
    /// Table 4: peak memory (GB) per schedule, in throughput_schedules order; the same for
    /// every m.
    std::array<double, 4> memory_gb;
};

inline constexpr std::array<Setup, 4> setups = {{
    {"zb-1.5b", "1.5B", 22, 8, 6, {30, 40, 32, 59}},
    {"zb-6.2b", "6.2B", 30, 8, 3, {39, 48, 42, 70}},
    {"zb-14.6b", "14.6B", 46, 16, 1, {32, 39, 33, 51}},
    {"zb-28.3b", "28.3B", 62, 32, 1, {43, 58, 44, 74}},
}};

/// The chunks per device of the paper's interleaved 1F1B: "we always use the maximum number of
/// chunks ... each transformer layer serves as a chunk", with the first and last stages one
/// layer short (Table 3), i.e. (layers + 2) / p: 3, 4, 3, 2.
constexpr int paper_chunks(const Setup& s) {
    return (s.layers + 2) / s.p;
}

/// The most chunks pipesim's model partitioner can give interleaved 1F1B: every virtual stage
/// holds at least one transformer layer (the embedding and LM head ride on the first and last
/// ones), so layers / p: 2, 3, 2, 1. Below 2 interleaving is not possible.
constexpr int model_chunks(const Setup& s) {
    return s.layers / s.p;
}

/// One configuration of Tables 9 and 5 (the same rows).
struct ProfiledRow {
    int setup;  ///< index into setups
    int m;
    /// Table 9 (Appendix D): T_F, T_B, T_W of one stage and T_comm, in ms, profiled in the
    /// paper's ZB-2p runs.
    double f, b, w, comm;
    /// Table 5: bubble rates computed from those times, in bubble_schedules order.
    std::array<double, 6> bubble;
};

inline constexpr std::array<ProfiledRow, 12> profiled = {{
    {0, 24, 18.522, 18.086, 9.337, 0.601, {0.2431, 0.1055, 0.1585, 0.1083, 0.1585, 0.0433}},
    {0, 32, 18.513, 18.086, 9.331, 0.626, {0.1985, 0.0818, 0.1242, 0.0837, 0.1242, 0.0039}},
    {0, 64, 18.546, 18.097, 9.321, 0.762, {0.1240, 0.0443, 0.0674, 0.0444, 0.0674, 0.0026}},
    {1, 24, 29.718, 29.444, 19.927, 0.527, {0.2347, 0.0808, 0.1323, 0.0698, 0.1323, 0.0029}},
    {1, 32, 29.802, 29.428, 19.530, 0.577, {0.1898, 0.0628, 0.1045, 0.0559, 0.1045, 0.0022}},
    {1, 64, 29.935, 29.621, 19.388, 0.535, {0.1091, 0.0320, 0.0554, 0.0294, 0.0554, 0.0010}},
    {2, 48, 11.347, 11.248, 8.132, 0.377, {0.2552, 0.1104, 0.1397, 0.0672, 0.1397, 0.0066}},
    {2, 64, 11.307, 11.254, 8.101, 0.379, {0.2082, 0.0852, 0.1088, 0.0516, 0.1088, 0.0054}},
    {2, 128, 11.325, 11.308, 8.109, 0.378, {0.1251, 0.0445, 0.0576, 0.0266, 0.0576, 0.0028}},
    {3, 96, 10.419, 10.207, 7.715, 0.408, {0.2646, 0.1493, 0.1421, 0.0641, 0.1421, 0.0038}},
    {3, 128, 10.408, 10.204, 7.703, 0.408, {0.2168, 0.1164, 0.1106, 0.0490, 0.1106, 0.0029}},
    {3, 256, 10.402, 10.248, 7.698, 0.460, {0.1352, 0.0624, 0.0594, 0.0257, 0.0594, 0.0018}},
}};

/// One configuration of Table 4: measured samples per GPU per second.
struct MeasuredRow {
    int setup;  ///< index into setups
    int m;
    std::array<double, 4> samples_per_gpu;  ///< in throughput_schedules order
};

inline constexpr std::array<MeasuredRow, 12> measured = {{
    {0, 24, {11.8, 13.1, 12.9, 14.5}},
    {0, 32, {12.5, 13.4, 13.4, 14.8}},
    {0, 64, {13.6, 13.9, 14.2, 14.9}},
    {1, 24, {3.50, 4.01, 3.88, 4.32}},
    {1, 32, {3.70, 4.08, 4.00, 4.35}},
    {1, 64, {4.03, 4.19, 4.20, 4.39}},
    {2, 48, {1.40, 1.54, 1.61, 1.81}},
    {2, 64, {1.49, 1.59, 1.67, 1.83}},
    {2, 128, {1.64, 1.66, 1.76, 1.85}},
    {3, 96, {0.76, 0.82, 0.87, 0.99}},
    {3, 128, {0.80, 0.85, 0.90, 1.00}},
    {3, 256, {0.88, 0.90, 0.96, 1.00}},
}};

/// How a job splits the model's layers over its stages.
enum class Split {
    /// pipesim's partitioner (the largest stage as small as it can be); interleaved 1F1B gets
    /// model_chunks(s).
    pipesim,
    /// The paper's runs (its repository's --allow-padding-num-layers): (layers + 2)/p per
    /// stage, one fewer on the first and last; interleaved 1F1B with paper_chunks(s), one layer
    /// per chunk, the first chunk only the embedding and the last only the head.
    paper,
};

/// A job on the paper's setup `s` with pipesim's analytic costs for its model on an A100 80GB
/// and its microbatch size, the unfused attention (Megatron-LM's default without
/// FlashAttention; the paper names no other), the layers split by `split`, and optimizer
/// post-validation where the paper's runs had it. With the SimGrid engine it runs on the
/// `zb-a100-roce` preset.
sweep::Job model_job(const Setup& s, int m, const std::string& schedule, sweep::Engine engine,
                     Split split = Split::pipesim);

/// The job of `schedule` (v chunks, 0: its default) timed with a row's profiled T_F, T_B, T_W
/// (ms) and T_comm instead of a model, M_W = M_B / 2 as the paper's scheduler counts it.
sweep::Job profiled_job(const ProfiledRow& row, const std::string& schedule, int v = 0);

}  // namespace pipesim::reproduce::zb_paper
