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
inline constexpr int max_shards = 1 << 20;           ///< sweep --shard I/N

// Real GPUs (calibrate, gpu-run): a run is one process driving the GPUs of one machine or
// SM partitions of one GPU, so its shapes are smaller than a simulation's.
inline constexpr int max_gpu_devices = 64;               ///< gpu-run -p, calibrate --partitions
inline constexpr int max_gpu_microbatches = 1 << 16;     ///< gpu-run -m
inline constexpr int max_gpu_microbatch_size = 1 << 16;  ///< --mb on a GPU
inline constexpr int max_gpu_seq_len = 1 << 20;          ///< --seq on a GPU
inline constexpr int max_cuda_device = 1023;             ///< --device
inline constexpr int max_warmup = 10000;                 ///< --warmup
inline constexpr int max_repetitions = 100000;           ///< --repetitions
inline constexpr int max_rotations = 64;                 ///< --rotations

}  // namespace pipesim::cli::bounds
