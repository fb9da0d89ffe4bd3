#pragma once
// Every numeric bound of the command line, in one place. Shapes follow what the schedule
// generators and schedule files accept (schedules/registry.cpp, schedule_file.hpp).

namespace pipesim::cli::bounds {

inline constexpr int max_devices = 4096;             ///< -p
inline constexpr int max_microbatches = 1 << 20;     ///< -m, --group-size
inline constexpr int max_chunks = 64;                ///< -v
inline constexpr int max_microbatch_size = 1 << 20;  ///< --mb (sequences)
inline constexpr int max_seq_len = 1 << 24;          ///< --seq
inline constexpr int max_tp = 1024;                  ///< -t
inline constexpr int max_dp = 1 << 16;               ///< --dp
inline constexpr int max_layers = 1 << 20;           ///< --first/last-stage-layers
inline constexpr int max_gpu_index = 1 << 24;        ///< --straggler GPU
inline constexpr int max_workers = 4096;             ///< sweep -j

}  // namespace pipesim::cli::bounds
