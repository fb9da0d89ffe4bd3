#pragma once
// A timeline and its memory model as bytes: how a Python result is pickled and copied, and
// how a simulation's child process hands it back. The saved-timeline JSON does the same job
// for files, but a 2-million-op run's JSON is half a gigabyte and took 44 s to read back;
// these bytes are 25 per op and 51 per transfer, and read back about as fast as they copy.
//
// Layout, little-endian as the machine writes it (a pickle goes back to pipesim on the same
// kind of machine): "pipesim-timeline-bytes" and a version (u32), the schedule and time unit
// (u64 length + bytes), devices, microbatches and chunks (i32), stage_device (u64 count +
// i32 each), microbatch_stages (count + i32 pairs), fb_pairs (count of lists, each count +
// i32), device_ops (count of lists, each count + ops: u8 pass, i32 mb, i32 stage, f64 start,
// f64 end), transfers (count + i32 src, i32 dst, two ops, f64 bytes, start, end, u8 kind),
// then the memory model's activation and held_for_w (count + f64 each).

#include <string>
#include <string_view>

#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::python {

/// `timeline` and `memory` as bytes, read back exactly by timeline_from_bytes().
std::string timeline_bytes(const Timeline& timeline, const MemoryModel& memory);

/// The timeline and memory model `bytes` hold. Throws std::invalid_argument naming `source`
/// when they are not such bytes, are cut short, or hold an op, stage or device out of range
/// (counts are checked against the bytes left before anything is allocated for them).
void timeline_from_bytes(std::string_view bytes, const std::string& source, Timeline& timeline,
                         MemoryModel& memory);

}  // namespace pipesim::python
