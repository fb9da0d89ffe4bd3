#pragma once
// Chrome trace event JSON (chrome://tracing, Perfetto): the timeline as complete events.

#include <string>
#include <string_view>

#include "fileio/files.hpp"
#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::viz {

/// Microseconds per time unit of a timeline: "s" 1e6, "ms" 1e3, "us" 1, and 1000 for
/// "unit" (unit costs have no real time; one unit is shown as one millisecond). Throws
/// std::invalid_argument for any other unit.
double microseconds_per_unit(std::string_view time_unit);

/// Whether `time_unit` is one of those microseconds_per_unit() knows.
bool known_time_unit(std::string_view time_unit);

/// The known time units, each quoted, for a message: "unit", "s", "ms" or "us".
std::string known_time_units();

/// What a trace holds besides the ops, transfers and memory.
struct ChromeTraceOptions {
    /// Flow events (arrows in Perfetto and chrome://tracing) from each op to the ops that
    /// depend on it: its data dependencies, on the same device or across devices. Needs a
    /// timeline whose op order is a valid schedule.
    bool flows = false;
};

/// The Chrome trace's colour name ("cname") of a pass: F blue, B orange, W green, BW mauve,
/// as in the timeline picture. chrome://tracing draws it; Perfetto ignores cname and colours a
/// slice by its name without digits, so there too every op of a pass shares one colour.
std::string_view trace_colour(Pass pass);

/// The trace: one process per device (pid = device, named "device d"), with thread 0
/// "compute" holding one complete event ("ph": "X") per op, named "F3 s1", category the pass,
/// thread 1 "sends" one per pipeline transfer the device sends, and thread 2 "collectives"
/// one per tensor- or data-parallel collective, ops coloured by pass (trace_colour). When
/// `memory` is given, a counter track "activation" per device follows memory_over_time().
/// Timestamps and durations are in microseconds (see microseconds_per_unit); each event's
/// args keep the original times. With `options.flows`, one flow per dependency: a "ph": "s"
/// event in the producer's slice and a "ph": "f" event ("bp": "e") in the consumer's, both at
/// the slice's middle, sharing an "id" (1, 2, ...) and named "F3 s1 → F3 s2". Throws
/// std::invalid_argument for an unknown time unit or (with flows) an op order that is not a
/// valid schedule.
std::string chrome_trace_json(const Timeline& timeline, const MemoryModel* memory = nullptr,
                              const ChromeTraceOptions& options = {});

/// The same text handed to `sink` piece by piece (about a megabyte each), for a file written
/// as it is made (fileio::write_file_atomically): what would throw does so before the first
/// piece.
void write_chrome_trace(const Timeline& timeline, const MemoryModel* memory,
                        const ChromeTraceOptions& options, const fileio::TextSink& sink);

/// About the memory a trace takes per op beyond the timeline it reads, for a check before
/// the run: write_chrome_trace() streams the text a megabyte at a time, so only its flows'
/// dependency graph grows with the ops (OpGraph: 44 bytes an op and a lookup table; 62
/// bytes an op measured at the peak, from the replay of zb-h1 at p 64, m 2225 and from
/// simulate of zb-v at p 8, m 4096). Held whole, a trace of 427,200 ops had peaked at 551 MB.
double chrome_trace_bytes_per_op(const ChromeTraceOptions& options);

}  // namespace pipesim::viz
