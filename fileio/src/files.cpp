#include "fileio/files.hpp"
#include "fileio/parse_error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace pipesim::fileio {

namespace {

[[noreturn]] void fail_read(const std::string& path, const std::string& reason) {
    throw std::invalid_argument(fmt::format("{}: cannot read: {}", path, reason));
}

[[noreturn]] void fail_too_big(const std::string& path, std::size_t max_bytes) {
    throw std::invalid_argument(fmt::format(
        "{}: file is more than {} bytes, the limit for this kind of file", path, max_bytes));
}

// The regular files this process has read, by device and inode, while guard_inputs() is on.
struct ReadFiles {
    std::mutex lock;
    bool on = false;
    std::set<std::pair<dev_t, ino_t>> files;
};

ReadFiles& read_files() {
    static ReadFiles files;
    return files;
}

// Closes a descriptor when the read ends, however it ends.
struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::string read_text_file(const std::string& requested, std::size_t max_bytes) {
    const bool standard_input = is_standard_stream(requested);
    const std::string path = standard_input ? "standard input" : requested;
    FileDescriptor file{standard_input ? ::dup(STDIN_FILENO)
                                       : ::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) fail_read(path, std::strerror(errno));
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) fail_read(path, std::strerror(errno));
    if (S_ISDIR(info.st_mode)) fail_read(path, "is a directory");
    // A regular file's size is known: refuse a large one without reading it.
    const bool regular = S_ISREG(info.st_mode);
    if (regular && static_cast<std::uintmax_t>(info.st_size) > max_bytes)
        fail_too_big(path, max_bytes);
    if (regular) {
        ReadFiles& read = read_files();
        const std::lock_guard<std::mutex> hold(read.lock);
        if (read.on) read.files.emplace(info.st_dev, info.st_ino);
    }
    // Anything else (a pipe, a device, a file growing while we read) is read up to one byte
    // past the cap, never more.
    std::string content;
    if (regular) content.reserve(static_cast<std::size_t>(info.st_size));
    const std::size_t limit = max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1;
    std::vector<char> buffer(1 << 16);
    while (content.size() < limit) {
        const std::size_t want = std::min(buffer.size(), limit - content.size());
        const ssize_t n = ::read(file.fd, buffer.data(), want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail_read(path, std::strerror(errno));
        if (n == 0) break;
        try {
            content.append(buffer.data(), static_cast<std::size_t>(n));
        } catch (const std::bad_alloc&) {  // a device that never ends (/dev/zero), a tight ulimit
            fail_read(path, fmt::format("out of memory after {} bytes (at most {} are read)",
                                        content.size(), max_bytes));
        }
        // Every file read here is JSON or CSV text, which holds no NUL byte: a binary file, or
        // a device such as /dev/zero (which gave a gigabyte before its size was refused), is
        // refused at its first one, with its position as the parsers give theirs.
        const std::size_t chunk = content.size() - static_cast<std::size_t>(n);
        if (const std::size_t nul = content.find('\0', chunk); nul != std::string::npos)
            throw ParseError(path, position_at(content, nul),
                             "a NUL byte (JSON and CSV text have none; is this a binary file?)");
    }
    if (content.size() > max_bytes) fail_too_big(path, max_bytes);
    return content;
}

namespace {

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

[[noreturn]] void fail_write(const std::string& path, const std::string& reason) {
    throw std::invalid_argument(fmt::format("cannot write {}: {}", path, reason));
}

// The file a write to `path` should replace: `path` itself, or the file a symbolic link at
// `path` points to (renaming over the link would replace the link, not its target).
std::string write_target(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return path;  // a new file
    std::string target = path;
    if (S_ISLNK(info.st_mode)) {
        char* resolved = ::realpath(path.c_str(), nullptr);
        if (resolved == nullptr)
            fail_write(path,
                       fmt::format("it is a symbolic link whose target cannot be resolved: {}",
                                   std::strerror(errno)));
        target = resolved;
        std::free(resolved);
        if (::stat(target.c_str(), &info) != 0) return target;
    }
    if (S_ISDIR(info.st_mode)) fail_write(path, "it is a directory");
    if (!S_ISREG(info.st_mode))
        fail_write(path,
                   "it exists and is not a regular file (a device, pipe or socket), which an "
                   "atomic write would replace");
    {
        ReadFiles& read = read_files();
        const std::lock_guard<std::mutex> hold(read.lock);
        if (read.files.count({info.st_dev, info.st_ino}))
            fail_write(path,
                       "it is an input of this run, which writing it would replace; give "
                       "another file");
    }
    return target;
}

}  // namespace

namespace {

// Writes all of `content` to standard output (`-`): a stream has no atomic replace; a reader
// at its other end sees everything or a write error ends the command.
void write_standard_output(std::string_view content) {
    std::fflush(stdout);
    if (const int error = write_all(STDOUT_FILENO, content); error != 0)
        fail_write("standard output", std::strerror(error));
}

}  // namespace

int write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

void guard_inputs() {
    ReadFiles& read = read_files();
    const std::lock_guard<std::mutex> hold(read.lock);
    read.on = true;
}

namespace {

// The file `path` names (followed through links), by device and inode; empty if none.
std::optional<std::pair<dev_t, ino_t>> file_identity(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return std::nullopt;
    return std::pair{info.st_dev, info.st_ino};
}

}  // namespace

bool is_input(const std::string& path) {
    const auto id = file_identity(path);
    ReadFiles& read = read_files();
    const std::lock_guard<std::mutex> hold(read.lock);
    return id && read.files.count(*id) > 0;
}

void forget_input(const std::string& path) {
    const auto id = file_identity(path);
    ReadFiles& read = read_files();
    const std::lock_guard<std::mutex> hold(read.lock);
    if (id) read.files.erase(*id);
}

bool is_standard_stream(std::string_view path) {
    return path == "-";
}

namespace {

// The temporary files being written, for the signal handler: fixed storage it can read
// without allocating, a slot in use once its path is complete.
constexpr int max_temporaries = 16;
constexpr std::size_t max_temporary_path = 4096;
char temporary_path[max_temporaries][max_temporary_path];
volatile std::sig_atomic_t temporary_used[max_temporaries];
std::mutex temporary_slots;

extern "C" void remove_temporaries_and_die(int signal) {
    for (int i = 0; i < max_temporaries; ++i)
        if (temporary_used[i]) ::unlink(temporary_path[i]);
    // SA_RESETHAND restored the default action: the process ends as the signal says.
    ::raise(signal);
}

// A temporary file known to the handler while it exists.
class KnownTemporary {
  public:
    explicit KnownTemporary(const std::string& path) {
        if (path.size() >= max_temporary_path) return;
        const std::lock_guard<std::mutex> hold(temporary_slots);
        for (int i = 0; i < max_temporaries; ++i)
            if (!temporary_used[i]) {
                std::memcpy(temporary_path[i], path.c_str(), path.size() + 1);
                temporary_used[i] = 1;
                slot_ = i;
                return;
            }
    }
    ~KnownTemporary() {
        if (slot_ < 0) return;
        const std::lock_guard<std::mutex> hold(temporary_slots);
        temporary_used[slot_] = 0;
    }
    KnownTemporary(const KnownTemporary&) = delete;
    KnownTemporary& operator=(const KnownTemporary&) = delete;

  private:
    int slot_ = -1;
};

// A new empty file beside `path` (which the caller renames onto it or removes), known to the
// signal handler; fd < 0 and `error` set where the folder takes no new file.
struct Temporary {
    std::string path;
    int fd = -1;
    int error = 0;
    std::unique_ptr<KnownTemporary> known;
};

void create_temporary(const std::string& path, Temporary& t) {
    // O_EXCL with a random suffix instead of mkstemp: the file gets mode 0666 minus the umask
    // (mkstemp's 0600 would need a umask() query, which is process-global and racy).
    std::random_device random;
    // The temporary file is the target's name and a suffix of at most 24 bytes; a name near
    // the file system's limit of 255 bytes is cut so that the temporary one still fits (a
    // 240-byte name failed with "File name too long").
    constexpr std::size_t longest_name = 255, suffix_bytes = 24;
    const std::size_t slash = path.rfind('/');
    const std::size_t name_bytes = path.size() - (slash == std::string::npos ? 0 : slash + 1);
    const std::string temp_stem =
        name_bytes + suffix_bytes > longest_name
            ? path.substr(0, path.size() - (name_bytes + suffix_bytes - longest_name))
            : path;
    // The signals that remove temporaries wait while one is created and made known: one
    // between the two would leave it behind.
    sigset_t removing, before;
    sigemptyset(&removing);
    for (const int signal : {SIGINT, SIGTERM, SIGHUP})
        sigaddset(&removing, signal);
    ::pthread_sigmask(SIG_BLOCK, &removing, &before);
    for (int attempt = 0; attempt < 16 && t.fd < 0; ++attempt) {
        t.path = fmt::format("{}.tmp.{}.{:08x}", temp_stem, ::getpid(), random());
        t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (t.fd < 0 && errno != EEXIST) break;
    }
    t.error = errno;
    if (t.fd >= 0) t.known = std::make_unique<KnownTemporary>(t.path);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

// Makes the rename of a file into `path`'s folder durable (best effort: not every file system
// supports it).
void sync_folder_of(const std::string& path) {
    const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

// The group write_file_atomically() leaves its files to, in the process that opened it.
thread_local OutputGroup* open_group = nullptr;
thread_local pid_t open_group_process = 0;

}  // namespace

struct OutputGroup::Pending {
    std::string temp, path;
    std::unique_ptr<KnownTemporary> known;
};

OutputGroup::OutputGroup() : outer_(open_group), outer_process_(open_group_process) {
    open_group = this;
    open_group_process = ::getpid();
}

OutputGroup::~OutputGroup() {
    for (const Pending& p : pending_)
        ::unlink(p.temp.c_str());
    open_group = outer_;
    open_group_process = outer_process_;
}

void OutputGroup::commit() {
    std::vector<Pending> files = std::move(pending_);
    pending_.clear();
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (::rename(files[i].temp.c_str(), files[i].path.c_str()) == 0) continue;
        const std::string reason = std::strerror(errno);
        for (std::size_t k = i; k < files.size(); ++k)
            ::unlink(files[k].temp.c_str());
        fail_write(files[i].path, reason);
    }
    for (const Pending& p : files)
        sync_folder_of(p.path);
}

void commit_open_outputs() {
    if (open_group && open_group_process == ::getpid()) open_group->commit();
}

namespace {

// check_writable_path()'s checks that make no file. The writer runs these alone: the temporary
// file it makes next fails, where the folder takes none, with the same message.
void check_path_in_place(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path folder = fs::path(path).parent_path();
    // stat's own errno: a folder that cannot be searched is "Permission denied", not missing.
    struct stat info {};
    if (!folder.empty() && ::stat(folder.c_str(), &info) != 0)
        fail_write(path, std::strerror(errno));
    if (!folder.empty() && !S_ISDIR(info.st_mode)) fail_write(path, std::strerror(ENOTDIR));
    if (fs::is_directory(path, ec)) fail_write(path, "it is a directory");
    // The atomic write creates its temporary file beside the target: the folder must take
    // new files, which a read-only or someone else's folder refuses only after the run.
    const std::string where = folder.empty() ? std::string(".") : folder.string();
    if (::access(where.c_str(), W_OK | X_OK) != 0)
        fail_write(
            path, fmt::format("its folder {} takes no new files: {}", where, std::strerror(errno)));
    // A name longer than the folder's file system takes: the temporary file's name is cut to
    // fit, so only the last rename would have failed.
    const long longest = ::pathconf(where.c_str(), _PC_NAME_MAX);
    if (longest > 0 &&
        fs::path(path).filename().string().size() > static_cast<std::size_t>(longest))
        fail_write(path, std::strerror(ENAMETOOLONG));
}

}  // namespace

void check_writable_path(const std::string& path) {
    check_path_in_place(path);
    // What access() cannot tell: a pseudo file system (/proc, /sys) that refuses new files even
    // to root. The writer's own temporary file, made and removed, settles it.
    Temporary probe;
    create_temporary(path, probe);
    if (probe.fd < 0) fail_write(path, std::strerror(probe.error));
    ::close(probe.fd);
    ::unlink(probe.path.c_str());
}

void remove_temporaries_on_signals() {
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    for (const int signal : {SIGINT, SIGTERM, SIGHUP})
        ::sigaction(signal, &action, nullptr);
}

void write_file_atomically(const std::string& requested, std::string_view content) {
    write_file_atomically(requested, [&](const TextSink& sink) { sink(content); });
}

void write_file_atomically(const std::string& requested,
                           const std::function<void(const TextSink&)>& produce) {
    if (is_standard_stream(requested)) return produce(write_standard_output);
    if (requested.empty() || requested.back() == '/') fail_write(requested, "not a file name");
    const std::string path = write_target(requested);
    // The reasons the command line checks before a run (a folder that takes no new files),
    // in the same words where an output was not checked before.
    check_path_in_place(path);
    Temporary created;
    create_temporary(path, created);
    if (created.fd < 0) fail_write(path, std::strerror(created.error));
    int fd = created.fd;
    const std::string& temp = created.path;
    auto give_up = [&](const char* what, int error) {
        const std::string reason = fmt::format("{}: {}", what, std::strerror(error));
        ::close(fd);
        fd = -1;
        ::unlink(temp.c_str());
        fail_write(path, reason);
    };
    try {
        produce([&](std::string_view piece) {
            if (const int error = write_all(fd, piece); error != 0) give_up("write", error);
        });
    } catch (...) {
        if (fd >= 0) {  // give_up closed it already
            ::close(fd);
            ::unlink(temp.c_str());
        }
        throw;
    }
    if (::fsync(fd) != 0) give_up("fsync", errno);
    if (::close(fd) != 0) {
        const std::string reason = std::strerror(errno);
        ::unlink(temp.c_str());
        fail_write(path, reason);
    }
    if (open_group != nullptr && open_group_process == ::getpid()) {
        open_group->pending_.push_back(
            OutputGroup::Pending{created.path, path, std::move(created.known)});
        return;
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        ::unlink(temp.c_str());
        fail_write(path, reason);
    }
    sync_folder_of(path);
}

bool names_a_file(std::string_view name_or_path) {
    // The extension in any case (ML.JSON), as the other files' readers take theirs.
    return name_or_path.find('/') != std::string_view::npos ||
           file_extension(name_or_path) == ".json";
}

std::string file_extension(std::string_view path) {
    const auto slash = path.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const auto dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) return "";
    std::string ext(name.substr(dot));
    for (char& c : ext)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return ext;
}

std::size_t control_length(std::string_view text) {
    if (text.empty()) return 0;
    const auto first = static_cast<unsigned char>(text.front());
    if (first < 0x20 || first == 0x7F) return 1;
    const std::size_t length = utf8_sequence(text);
    if (length < 2) return 0;
    const std::uint32_t code = code_point(text.substr(0, length));
    // C1; the line and paragraph separators; the explicit bidirectional embeddings, overrides
    // and isolates, which reorder the rest of the line a terminal shows (Unicode Standard
    // Annex #9, §2; "Trojan Source", CVE-2021-42574).
    const bool control = (code >= 0x80 && code <= 0x9F) || (code >= 0x2028 && code <= 0x202E) ||
                         (code >= 0x2066 && code <= 0x2069);
    return control ? length : 0;
}

bool has_control(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i)
        if (control_length(text.substr(i)) > 0) return true;
    return false;
}

bool prints_nothing(std::string_view text) {
    while (!text.empty()) {
        if (text.front() == ' ') {
            text.remove_prefix(1);
            continue;
        }
        const std::size_t length = utf8_sequence(text);
        if (length < 2 || !invisible_control(text.substr(0, length))) return false;
        text.remove_prefix(length);
    }
    return true;
}

std::string printable_name(std::string_view text) {
    std::string out;
    while (!text.empty()) {
        const std::size_t length = utf8_sequence(text);
        if (const std::size_t control = control_length(text); control > 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            text.remove_prefix(control);
        } else if (length == 0) {
            out += "\xEF\xBF\xBD";
            text.remove_prefix(1);
        } else {
            out += text.substr(0, length);
            text.remove_prefix(length);
        }
    }
    return out;
}

std::string file_stem(std::string_view path) {
    if (is_standard_stream(path)) return "stdin";
    const auto slash = path.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const auto dot = name.rfind('.');
    std::string stem =
        printable_name(dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot));
    // At most the 200 bytes every format's name takes (U+FFFD is 3 bytes for each odd byte),
    // cut where a character starts.
    constexpr std::size_t most = 200;
    if (stem.size() > most) {
        std::size_t cut = most;
        while ((static_cast<unsigned char>(stem[cut]) & 0xC0) == 0x80)
            --cut;
        stem.resize(cut);
    }
    return stem;
}

}  // namespace pipesim::fileio
