#pragma once
// Reading input files with a size cap, and writing output files whole or not at all.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pipesim::fileio {

/// The whole content of `path`. Throws std::invalid_argument "PATH: cannot read: REASON", or
/// "PATH: file is more than MAX bytes, the limit for this kind of file": for a regular file
/// from its size, before reading anything; for anything else (a pipe, /dev/zero, a device)
/// once max_bytes + 1 bytes have been read, never more. A huge or endless input cannot
/// exhaust memory or time. `-` reads standard input, with the same cap.
std::string read_text_file(const std::string& path, std::size_t max_bytes);

/// Writes `content` to `path` atomically: to a temporary file in the same directory, flushed
/// to disk, then renamed over `path`. Readers see the old file or the new one, never a part;
/// on failure the temporary is removed and `path` is untouched. The new file gets mode
/// 0666 minus the umask, like a plain open(). A symbolic link at `path` is followed: its
/// target is replaced. An existing `path` that is not a regular file (a directory, device,
/// pipe or socket) is refused rather than replaced. Throws std::invalid_argument
/// "cannot write PATH: REASON". `-` writes `content` to standard output instead (a stream:
/// not atomic).
void write_file_atomically(const std::string& path, std::string_view content);

/// Receives the successive pieces of a file's text.
using TextSink = std::function<void(std::string_view)>;

/// The same, for a text too large to hold in memory at once: `produce` is called once and
/// hands the text to its sink piece by piece. An exception from `produce` removes the
/// temporary and propagates: `path` is untouched.
void write_file_atomically(const std::string& path,
                           const std::function<void(const TextSink&)>& produce);

/// From now on, an interrupt, hang-up or termination signal first removes the temporary files
/// write_file_atomically() is writing, then ends the process as the signal would have
/// (Ctrl-C during a large --save-timeline left 151 MB behind). For a command's one run; a
/// host that handles its own signals (Python's KeyboardInterrupt) leaves it off.
void remove_temporaries_on_signals();

/// From now on, remembers every regular file read_text_file() reads, and
/// write_file_atomically() refuses to replace one of them ("cannot write PATH: it is an input
/// of this run, ..."), however it is named (a link, another path). For a command's one run;
/// a long-lived process (the Python module) that may rightly rewrite what it read leaves it
/// off.
void guard_inputs();

/// Whether `path` (followed through links) is a file guard_inputs() has seen read.
bool is_input(const std::string& path);

/// Takes `path` off guard_inputs()'s list: a file read in order to be rewritten (a sweep's
/// results file, resumed).
void forget_input(const std::string& path);

/// Writes all of `text` to `fd`, retrying short writes and EINTR. Returns 0, or the errno of
/// the write that failed (ENOSPC, EIO, EPIPE, ...); a write of 0 bytes counts as EIO.
int write_all(int fd, std::string_view text);

/// The outputs of one run, all replaced or none: while a group is open (in the thread and
/// process that opened it), write_file_atomically() leaves each file it has written whole as its
/// temporary file, and commit() renames them all onto their names. A group destroyed without
/// commit() (the run failed: a later output could not be written, the input was bad) removes
/// them, and every file the run would have replaced is as it was. Standard output is written
/// at once. Groups nest: the inner one's files are its own.
class OutputGroup {
  public:
    OutputGroup();
    ~OutputGroup();
    OutputGroup(const OutputGroup&) = delete;
    OutputGroup& operator=(const OutputGroup&) = delete;

    /// Renames every file written in the group onto its name, in the order they were written;
    /// throws std::invalid_argument ("cannot write PATH: REASON") if a rename fails, after
    /// removing the temporary files not yet renamed.
    void commit();

  private:
    friend void write_file_atomically(const std::string& requested,
                                      const std::function<void(const TextSink&)>& produce);
    struct Pending;
    std::vector<Pending> pending_;
    OutputGroup* outer_;
    int outer_process_;
};

/// Commits the group open in this thread and process, if any: the files written so far are
/// put in place now. For a command that writes its output and then reports a fault of its
/// input with a nonzero exit code (merge --grid's missing jobs), where the output stands.
void commit_open_outputs();

/// Throws std::invalid_argument with the message write_file_atomically() would give
/// ("cannot write PATH: REASON") where `path` cannot be written for certain before anything
/// is: its folder is missing, not a folder, cannot be searched or takes no new files (read-only,
/// or another user's), or `path` is a folder.
void check_writable_path(const std::string& path);

/// Whether `path` is `-`: standard input where a file is read, standard output where one is
/// written.
bool is_standard_stream(std::string_view path);

/// Whether an argument that names a preset or a file (`--model`, `--gpu`, `--cluster`) names a
/// file: it ends in ".json" (in any case) or holds a '/' (./mycluster).
bool names_a_file(std::string_view name_or_path);

/// The extension of `path`'s file name in lower case with its dot (".json"), or "" if none.
std::string file_extension(std::string_view path);

/// `text` as a name that outputs can hold and terminals show as it is: each byte that starts no
/// valid UTF-8 sequence, and each control character (control_length()), as U+FFFD.
std::string printable_name(std::string_view text);

/// The bytes of the control character `text` starts with, or 0: C0 (below 0x20) and DEL, C1
/// (U+0080..U+009F, which terminals may run as escapes: U+009B is CSI), the line and
/// paragraph separators U+2028 and U+2029 (which break a line where none is written) and the
/// bidirectional embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069, which
/// reorder what follows them on the line).
std::size_t control_length(std::string_view text);

/// Whether any character of `text` is a control character as control_length() has them.
bool has_control(std::string_view text);

/// Whether `text` shows nothing: it holds only spaces and characters that hide themselves
/// (invisible_control(): zero-width spaces and joiners, directional marks), or nothing at all.
/// A name made of them would print as an empty one.
bool prints_nothing(std::string_view text);

/// The file name of `path` without directory and extension ("runs/a.b.csv" → "a.b"; "stdin"
/// for `-`), as printable_name() and at most 200 bytes (a file name may be any bytes but '/'
/// and NUL; schedules, blocks and clusters without a name take it, and JSON outputs and
/// terminals show it).
std::string file_stem(std::string_view path);

}  // namespace pipesim::fileio
