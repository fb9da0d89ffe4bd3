#pragma once
// The saved Timeline: a JSON file any engine's timeline can be written to and rendered from
// later (`pipesim analyze --save-timeline`, `pipesim render`). Format: docs/timeline-format.md.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fileio/files.hpp"
#include "fileio/parse_error.hpp"
#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::viz {

/// A timeline read back from a file, with the memory model it was analysed with, if saved.
struct SavedTimeline {
    Timeline timeline;
    std::optional<MemoryModel> memory;
    /// The memory model is in bytes (a model gave it), not activation units.
    bool memory_in_bytes = false;
    /// What no run of the timeline's schedule could have produced, which the reader takes
    /// (a measured timeline with ops missing can still be drawn) and callers print: ops
    /// missing or twice, an op that starts before its input ends, a transfer outside its
    /// producer's end and its consumer's start. Each names the timeline's source.
    std::vector<std::string> warnings;
};

/// Thrown for valid JSON that is not a saved timeline (no "format": "pipesim-timeline"),
/// e.g. a schedule file, so a caller can try another reader.
class NotATimeline : public fileio::ParseError {
  public:
    using fileio::ParseError::ParseError;
};

/// Caps on what a timeline file may hold, checked before anything is allocated for it.
struct TimelineFileLimits {
    std::size_t max_bytes = std::size_t{1} << 30;  ///< file size
    int max_devices = 1 << 16;
    int max_chunks = 1 << 10;
    int max_microbatches = 1 << 24;
    std::size_t max_transfers = 50'000'000;  ///< entries of "transfers" (as the schedule ops cap)
};

/// The file's text: the timeline (and `memory`, when given) in the saved format, one op per
/// line. Numbers are written so that reading them back gives the same doubles; with
/// `memory_in_bytes` the memory object says "unit": "bytes".
/// Throws std::invalid_argument for a non-finite time (a timeline that cannot be saved).
std::string timeline_json(const Timeline& timeline, const MemoryModel* memory = nullptr,
                          bool memory_in_bytes = false);

/// The same text handed to `sink` in pieces of about a megabyte (what save_timeline_file
/// writes, so that a large timeline's text is never held whole).
void write_timeline_json(const Timeline& timeline, const MemoryModel* memory, bool memory_in_bytes,
                         const fileio::TextSink& sink);

/// Parses a saved timeline; `source` names the text in messages (usually the file name).
/// Checks the shape: p, m, v ≥ 1; placement in range; one op list per device; each op's
/// microbatch and stage in range and on its own device; microbatch_stages, when present, one
/// in-range [first, last] pair per microbatch; 0 ≤ start ≤ end, finite, each op
/// starting no earlier than the previous one on its device ends; transfers between devices
/// in range. Throws ParseError "SOURCE:LINE:COLUMN: field: what was expected" (NotATimeline
/// for JSON without the format tag).
SavedTimeline parse_timeline_json(std::string text, std::string source,
                                  const TimelineFileLimits& limits = {});

/// The fewest ops the saved timeline `text` can hold, read from its header alone (the keys
/// before "device_ops", as timeline_json() writes them): every microbatch runs an F and a
/// backward on each of the p·v stages, 2·p·v·m ops, or with "microbatch_stages" (DualPipe)
/// on each stage of its [first, last] range. Empty where the header does not say (another
/// key order, ranges that are not one pair of stages per microbatch, not a timeline, bad
/// JSON): the full reader decides then. Lets a picture's op cap refuse a file before
/// parsing it.
std::optional<double> timeline_min_ops(std::string_view text);

/// Reads and parses `path`. Throws like parse_timeline_json, or std::invalid_argument when
/// the file cannot be read or is over the size limit.
SavedTimeline read_timeline_file(const std::string& path, const TimelineFileLimits& limits = {});

/// Writes timeline_json() to `path` whole or not at all (throws std::invalid_argument
/// "cannot write PATH: REASON").
void save_timeline_file(const std::string& path, const Timeline& timeline,
                        const MemoryModel* memory = nullptr, bool memory_in_bytes = false);

}  // namespace pipesim::viz
