// fileio: positions, excerpts, capped reading, atomic writing, JSON documents.
#include <catch2/catch.hpp>

#include <malloc.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "child_process.hpp"
#include "fileio/files.hpp"
#include "fileio/json_document.hpp"
#include "fileio/parse_error.hpp"

using namespace pipesim;
using namespace pipesim::fileio;

TEST_CASE("positions count lines and byte columns from 1", "[fileio]") {
    const std::string text = "ab\ncd\n\nx";
    CHECK(position_at(text, 0) == TextPosition{1, 1});
    CHECK(position_at(text, 1) == TextPosition{1, 2});
    CHECK(position_at(text, 3) == TextPosition{2, 1});
    CHECK(position_at(text, 7) == TextPosition{4, 1});
    CHECK(position_at(text, 100) == TextPosition{4, 2});
    CHECK(std::string(ParseError("f.json", {3, 7}, "expected x").what()) ==
          "f.json:3:7: expected x");
    CHECK(std::string(ParseError("f.json", {}, "too big").what()) == "f.json: too big");
}

TEST_CASE("a position cursor agrees with position_at, forwards and backwards", "[fileio]") {
    const std::string text = "ab\ncd\n\nx\r\ny";
    PositionCursor cursor(text);
    for (std::size_t offset = 0; offset <= text.size() + 1; ++offset)
        CHECK(cursor.position(offset) == position_at(text, offset));
    for (std::size_t offset = text.size() + 1; offset-- > 0;)
        CHECK(cursor.position(offset) == position_at(text, offset));
}

TEST_CASE("excerpts are short and escape what a terminal would interpret", "[fileio]") {
    CHECK(quote_excerpt("abc") == "'abc'");
    CHECK(quote_excerpt("a\x1b[2Jb\n") == "'a\\x1b[2Jb\\x0a'");
    CHECK(quote_excerpt(std::string(100, 'x'), 5) == "'xxxxx'...");
    // Characters as the user wrote them: a pasted en dash or a Cyrillic name was shown as
    // its bytes ('1f1b\xe2\x80\x93').
    CHECK(quote_excerpt("1f1b\u2013") == "'1f1b\u2013'");
    CHECK(quote_excerpt("\u043c\u043e\u0434\u0435\u043b\u044c") ==
          "'\u043c\u043e\u0434\u0435\u043b\u044c'");
    // Cut before a character that would pass the limit, never inside it.
    CHECK(quote_excerpt("ab\u00e9", 3) == "'ab'...");
    // Bytes that are not UTF-8 stay escaped byte by byte; characters that move or hide text
    // by their code point, as Python writes them (they were shown as their bytes,
    // '1f1b\xe2\x80\x8b'): a right-to-left override, a zero-width space, a C1 control, a
    // line separator.
    CHECK(quote_excerpt("a\xff\xc3") == "'a\\xff\\xc3'");
    CHECK(quote_excerpt("a\u202eb") == "'a\\u202eb'");
    CHECK(quote_excerpt("a\u200bb") == "'a\\u200bb'");
    CHECK(quote_excerpt("a\u0085b") == "'a\\u0085b'");
    CHECK(quote_excerpt("a\u2028b") == "'a\\u2028b'");
    CHECK(quote_excerpt("a\u061cb") == "'a\\u061cb'");
    CHECK(quote_excerpt("a\ufeffb") == "'a\\ufeffb'");
    CHECK(quote_excerpt("a\u2060b") == "'a\\u2060b'");
    // Spaces a terminal shows as a plain one: a no-break space looked like "1f1b x".
    CHECK(quote_excerpt("1f1b\u00a0x") == "'1f1b\\u00a0x'");
    CHECK(quote_excerpt("a\u2009\u202f\u3000b") == "'a\\u2009\\u202f\\u3000b'");
    CHECK(quote_excerpt("a b") == "'a b'");
    // The limit counts the characters' bytes, not their escapes.
    CHECK(quote_excerpt("a\u200bbc", 4) == "'a\\u200b'...");
}

TEST_CASE("names refuse what reorders a line and what shows nothing", "[fileio]") {
    // A block named "\u202e\u200b" was accepted and printed as a blank name that turned the
    // rest of its line right to left.
    for (const char* bidi : {"\u202a", "\u202e", "\u2066", "\u2069"})
        CHECK(control_length(std::string(bidi) + "x") == 3);
    for (const char* kept : {"\u2029", "\u2028"})
        CHECK(control_length(kept) == 3);
    // Directional marks, joiners and ordinary text are not controls.
    for (const char* text : {"\u200e", "\u200d", "\u2065", "\u202f", "\u00e9", "a"})
        CHECK(control_length(text) == 0);
    CHECK(printable_name("a\u202eb") == "a\ufffdb");
    CHECK(prints_nothing(""));
    CHECK(prints_nothing("  \u200b\ufeff \u2060\u200e"));
    CHECK_FALSE(prints_nothing(" \u200bx"));
    CHECK_FALSE(prints_nothing("\u00e9"));
    CHECK_FALSE(prints_nothing("\xff"));
    const JsonDocument doc("n.json", R"({"a": "\u200b ", "b": "x\u202ey", "c": "1f1b\u200b"})");
    CHECK_THROWS_WITH(doc.name("/a", 200), "n.json:1:7: a: expected a name, got '\\u200b '");
    CHECK_THROWS_WITH(doc.name("/b", 200),
                      "n.json:1:23: b: expected text without control characters, got "
                      "'x\\u202ey'");
    CHECK(doc.name("/c", 200) == "1f1b\u200b");  // something shows: a name, quoted escaped
}

TEST_CASE("an error message is printed as one line of bounded length", "[fileio]") {
    CHECK(printable_message("p ≥ 2, got 1") == "p ≥ 2, got 1");  // UTF-8 kept
    CHECK(printable_message("bad\nname\x1b[31m\x7f") == "bad\\x0aname\\x1b[31m\\x7f");
    CHECK(printable_message(std::string(5000, 'x'), 100) ==
          std::string(100, 'x') + "... (4900 more bytes)");
    // Never cut inside a character: "≥" is three bytes at 99..101.
    const std::string wide = std::string(99, 'x') + "≥" + std::string(10, 'y');
    CHECK(printable_message(wide, 100) == std::string(99, 'x') + "... (13 more bytes)");
}

TEST_CASE("files are read whole up to a cap, and written atomically", "[fileio]") {
    const auto dir =
        std::filesystem::temp_directory_path() / ("pipesim_fileio_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "out.txt").string();
    write_file_atomically(path, "first");
    write_file_atomically(path, "second version");
    CHECK(read_text_file(path, 100) == "second version");
    CHECK_THROWS_WITH(read_text_file(path, 5),
                      Catch::Contains("file is more than 5 bytes, the limit"));
    CHECK_THROWS_WITH(read_text_file(dir.string(), 5), Catch::Contains("is a directory"));
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    CHECK((info.st_mode & 0777) == (0666 & ~mask));
    CHECK_THROWS_WITH(write_file_atomically((dir / "no" / "x").string(), "y"),
                      Catch::StartsWith("cannot write"));
    CHECK(std::distance(std::filesystem::directory_iterator(dir),
                        std::filesystem::directory_iterator{}) == 1);
    std::filesystem::remove_all(dir);
    CHECK(file_extension("a/b.c/Run.CSV") == ".csv");
    CHECK(file_extension("a.d/file") == "");
    CHECK(file_stem("runs/a.b.csv") == "a.b");
}

TEST_CASE("a name taken from a file name is valid UTF-8 without control characters", "[fileio]") {
    // A file name is any bytes: 0xff made every JSON output fail ("internal error"), and an
    // escape sequence in it ran in the terminal that printed the table's title.
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(file_stem("dir/bad\xff.csv") == "bad" + fffd);
    CHECK(file_stem("esc\x1b[31mred.json") == "esc" + fffd + "[31mred");
    CHECK(file_stem("nl\nname.csv") == "nl" + fffd + "name");
    // Valid UTF-8 stays as it is; overlong forms, surrogates and cut sequences do not.
    CHECK(file_stem("zéro-шаг-🙂.csv") == "zéro-шаг-🙂");
    CHECK(printable_name("\xC0\xAF") == fffd + fffd);             // overlong '/'
    CHECK(printable_name("\xED\xA0\x80") == fffd + fffd + fffd);  // U+D800
    CHECK(printable_name("a\xE2\x82") == "a" + fffd + fffd);      // cut short
    // C1 controls (U+009B is CSI, an escape to terminals that take 8-bit controls) and the
    // line and paragraph separators went through as valid UTF-8; U+00A0 and U+2027 stay.
    CHECK(printable_name("a\xC2\x9B"
                         "31mb") == "a" + fffd + "31mb");
    CHECK(printable_name("a\xC2\x80\xC2\xA0") == "a" + fffd + "\xC2\xA0");
    CHECK(printable_name("a\xE2\x80\xA8"
                         "b\xE2\x80\xA9\xE2\x80\xA7") == "a" + fffd + "b" + fffd + "\xE2\x80\xA7");
    // At most 200 bytes, cut where a character starts.
    const std::string stem = file_stem(std::string(255, '\xff') + ".csv");
    CHECK(stem.size() == 198);
    CHECK(stem == [&] {
        std::string s;
        for (int i = 0; i < 66; ++i)
            s += fffd;
        return s;
    }());
}

TEST_CASE("a name as long as the file system allows is written", "[fileio]") {
    // The temporary file beside it once took the name plus a suffix: past 255 bytes.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_fileio_long_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const std::size_t length : {230, 240, 255}) {
        CAPTURE(length);
        const std::string path = (dir / (std::string(length - 4, 'a') + ".svg")).string();
        write_file_atomically(path, "x");
        write_file_atomically(path, "y");
        CHECK(read_text_file(path, 10) == "y");
    }
    CHECK(std::distance(std::filesystem::directory_iterator(dir),
                        std::filesystem::directory_iterator{}) == 3);
    CHECK_THROWS_WITH(write_file_atomically((dir / std::string(256, 'b')).string(), "z"),
                      Catch::EndsWith("File name too long"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a file written in pieces is whole or absent", "[fileio]") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_fileio_pieces_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "out.txt").string();
    write_file_atomically(path, [](const TextSink& sink) {
        for (const char* piece : {"one ", "two ", "three"})
            sink(piece);
    });
    CHECK(read_text_file(path, 100) == "one two three");
    // A producer failing midway leaves the earlier file and no temporary behind.
    CHECK_THROWS_WITH(write_file_atomically(path,
                                            [](const TextSink& sink) {
                                                sink("partial ");
                                                throw std::runtime_error("producer failed");
                                            }),
                      "producer failed");
    CHECK(read_text_file(path, 100) == "one two three");
    CHECK(std::distance(std::filesystem::directory_iterator(dir),
                        std::filesystem::directory_iterator{}) == 1);
    std::filesystem::remove_all(dir);
}

namespace {

// Bytes this process has read so far (Linux's /proc/self/io "rchar": every read(2), whatever
// the file), or -1 where that is not available.
long long bytes_read_so_far() {
    std::ifstream io("/proc/self/io");
    std::string key;
    long long value = 0;
    while (io >> key >> value)
        if (key == "rchar:") return value;
    return -1;
}

}  // namespace

TEST_CASE("a regular file over the cap is refused from its size, without reading it", "[fileio]") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_fileio_big_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "big.json").string();
    std::ofstream(path).close();
    std::filesystem::resize_file(path, std::uintmax_t{2} << 30);  // sparse: no disk used
    const long long before = bytes_read_so_far();
    if (before < 0) {
        WARN("no /proc/self/io: bytes read not measured");
    }
    CHECK_THROWS_WITH(read_text_file(path, 1 << 20),
                      path + ": file is more than 1048576 bytes, the limit for this kind of file");
    if (before >= 0) CHECK(bytes_read_so_far() - before < 4096);  // only /proc/self/io itself
    std::filesystem::remove_all(dir);
}

TEST_CASE("a pipe over the cap is read to one byte past the cap and refused then", "[fileio]") {
    const std::size_t cap = 100'000;
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    // A writer that never ends, as `yes` (text: no NUL byte), until the reader closes.
    // SIGPIPE ignored while it writes: its write fails once the reader closes.
    const auto previous = ::signal(SIGPIPE, SIG_IGN);
    std::thread writer([fd = ends[1]] {
        const std::string line(4096, 'y');
        while (::write(fd, line.data(), line.size()) > 0) {
        }
        ::close(fd);
    });
    const std::string path = "/proc/self/fd/" + std::to_string(ends[0]);
    const long long before = bytes_read_so_far();
    if (before < 0) {
        WARN("no /proc/self/io: bytes read not measured");
    }
    CHECK_THROWS_WITH(read_text_file(path, cap),
                      path + ": file is more than 100000 bytes, the limit for this kind of file");
    // cap + 1 bytes of the pipe, and the few hundred of /proc/self/io itself.
    if (before >= 0) CHECK(bytes_read_so_far() - before <= static_cast<long long>(cap) + 4096);
    ::close(ends[0]);
    writer.join();
    ::signal(SIGPIPE, previous);
}

TEST_CASE("a file with a NUL byte is refused at its position: /dev/zero at once", "[fileio]") {
    const long long before = bytes_read_so_far();
    CHECK_THROWS_WITH(read_text_file("/dev/zero", std::size_t{1} << 30),
                      "/dev/zero:1:1: a NUL byte (JSON and CSV text have none; is this a "
                      "binary file?)");
    // One 64 KiB buffer of /dev/zero, not the gigabyte of the cap.
    if (before >= 0) CHECK(bytes_read_so_far() - before <= (64 << 10) + 4096);
    const auto path = std::filesystem::temp_directory_path() /
                      ("pipesim_fileio_nul_" + std::to_string(::getpid()) + ".json");
    write_file_atomically(path.string(), std::string("{\n\"a\": 1,\0}", 11));
    CHECK_THROWS_WITH(read_text_file(path.string(), 100),
                      path.string() +
                          ":2:8: a NUL byte (JSON and CSV text have none; is this a "
                          "binary file?)");
    std::filesystem::remove(path);
}

TEST_CASE("atomic writes follow symbolic links and refuse special files", "[fileio]") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_fileio_links_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto target = dir / "target.txt";
    const auto link = dir / "link.txt";
    write_file_atomically(target.string(), "old");
    std::filesystem::create_symlink(target, link);
    write_file_atomically(link.string(), "new");
    CHECK(std::filesystem::is_symlink(link));  // the link stays a link
    CHECK(read_text_file(target.string(), 100) == "new");
    CHECK_THROWS_WITH(write_file_atomically("/dev/null", "x"),
                      "cannot write /dev/null: it exists and is not a regular file (a device, "
                      "pipe or socket), which an atomic write would replace");
    CHECK(std::filesystem::is_character_file("/dev/null"));
    CHECK_THROWS_WITH(write_file_atomically(dir.string(), "x"),
                      Catch::EndsWith(": it is a directory"));
    std::filesystem::create_symlink(dir / "missing", dir / "dangling");
    CHECK_THROWS_WITH(write_file_atomically((dir / "dangling").string(), "x"),
                      Catch::Contains("symbolic link whose target cannot be resolved"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("an output's folder is checked before the run as the write would find it", "[fileio]") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_fileio_check_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto file = dir / "plain.txt";
    write_file_atomically(file.string(), "x");
    CHECK_NOTHROW(check_writable_path((dir / "out.svg").string()));
    CHECK_NOTHROW(check_writable_path("relative-name.svg"));
    CHECK_THROWS_WITH(check_writable_path((dir / "no" / "out.svg").string()),
                      Catch::EndsWith("/no/out.svg: No such file or directory"));
    CHECK_THROWS_WITH(check_writable_path((file / "out.svg").string()),
                      Catch::EndsWith("/plain.txt/out.svg: Not a directory"));
    CHECK_THROWS_WITH(check_writable_path(dir.string()), Catch::EndsWith(": it is a directory"));
    // A name longer than the file system takes (its temporary file's is cut to fit, so only
    // the last rename failed, after the run).
    CHECK_THROWS_WITH(check_writable_path((dir / (std::string(300, 'a') + ".json")).string()),
                      Catch::EndsWith(".json: File name too long"));
    // A folder that exists but refuses new files (as root, only a read-only one does; Linux's
    // /proc/sys refuses them to everyone): the write would fail only after the run.
    if (::access("/proc/sys", W_OK | X_OK) != 0) {
        CHECK_THROWS_WITH(check_writable_path("/proc/sys/out.svg"),
                          "cannot write /proc/sys/out.svg: its folder /proc/sys takes no new "
                          "files: Permission denied");
        // The write itself says the same (convert, merge and pareto write without a check
        // first; it said "No such file or directory").
        CHECK_THROWS_WITH(write_file_atomically("/proc/sys/out.svg", "x"),
                          "cannot write /proc/sys/out.svg: its folder /proc/sys takes no new "
                          "files: Permission denied");
    }
    // /proc itself lets root pass access() yet takes no new file (a sweep's --html there was
    // refused only after the sweep had run).
    if (std::filesystem::is_directory("/proc/self"))
        CHECK_THROWS_WITH(check_writable_path("/proc/pipesim-out.html"),
                          Catch::StartsWith("cannot write /proc/pipesim-out.html: "));
    // The check leaves nothing behind in a folder that takes the file.
    CHECK(std::distance(std::filesystem::directory_iterator(dir),
                        std::filesystem::directory_iterator()) == 1);
    // Without search permission on the folder (not as root, which bypasses it) stat reports
    // it as such, not as missing.
    const auto locked = dir / "locked";
    std::filesystem::create_directories(locked / "inner");
    std::filesystem::permissions(locked, std::filesystem::perms::none);
    if (::geteuid() != 0)
        CHECK_THROWS_WITH(check_writable_path((locked / "inner" / "out.svg").string()),
                          Catch::EndsWith(": Permission denied"));
    std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
    std::filesystem::remove_all(dir);
}

TEST_CASE("JSON documents locate values, keys and bytes inside strings", "[fileio]") {
    const JsonDocument doc("d.json", "{\n  \"a\": [1, {\"b~/\": \"x\\u00e9yz\"}],\n  \"c\": -4\n}");
    CHECK(doc.position_of("/a") == TextPosition{2, 8});
    CHECK(doc.position_of("/a/1") == TextPosition{2, 12});
    CHECK(doc.key_position_of("/a/1/b~0~1") == TextPosition{2, 13});
    CHECK(doc.position_of("/a/1/b~0~1") == TextPosition{2, 20});
    CHECK(doc.position_in_string("/a/1/b~0~1", 3) == TextPosition{2, 28});  // after "xé"
    CHECK(doc.position_of("/nope") == TextPosition{});
    CHECK(doc.integer("/c", -10, 10) == -4);
    CHECK_THROWS_WITH(doc.integer("/c", 0, 10),
                      "d.json:3:8: c: expected an integer in 0..10, got '-4'");
    CHECK_THROWS_WITH(doc.integer("/a/0/z", 0, 10), Catch::Contains("a[0].z: expected an integer"));
    CHECK_THROWS_WITH(doc.object("", {"a"}),
                      "d.json:3:3: unknown key 'c' in the document (known: a)");
    CHECK_THROWS_WITH(doc.string("/a/1/b~0~1", 2), Catch::Contains("at most 2 bytes, got 5"));
    CHECK(JsonDocument::display_name("/a/1/b") == "a[1].b");
}

TEST_CASE("a group of outputs is replaced together once committed, or not at all", "[fileio]") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("pipesim_fileio_group_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string first = (dir / "first.json").string(), second = (dir / "second.svg").string();
    auto reset = [&] {
        write_file_atomically(first, "old 1");
        write_file_atomically(second, "old 2");
    };
    auto files_in_dir = [&] {
        return std::distance(std::filesystem::directory_iterator(dir),
                             std::filesystem::directory_iterator());
    };
    // The second output fails half-way (a full disk, a value it cannot write): the first,
    // written whole before, is not put in place either.
    reset();
    {
        OutputGroup group;
        write_file_atomically(first, "new 1");
        CHECK(read_text_file(first, 100) == "old 1");  // not yet
        CHECK_THROWS_WITH(write_file_atomically(second,
                                                [](const TextSink& sink) {
                                                    sink("new 2, half");
                                                    throw std::invalid_argument("no more room");
                                                }),
                          "no more room");
    }
    CHECK(read_text_file(first, 100) == "old 1");
    CHECK(read_text_file(second, 100) == "old 2");
    CHECK(files_in_dir() == 2);  // no temporary file left
    // Committed: both, in place.
    {
        OutputGroup group;
        write_file_atomically(first, "new 1");
        write_file_atomically(second, "new 2");
        group.commit();
    }
    CHECK(read_text_file(first, 100) == "new 1");
    CHECK(read_text_file(second, 100) == "new 2");
    CHECK(files_in_dir() == 2);
    // Committed from outside (a command whose output stands although it exits with an error):
    // what was written is in place, and the group's end removes nothing.
    reset();
    {
        OutputGroup group;
        write_file_atomically(first, "new 1");
        commit_open_outputs();
        CHECK(read_text_file(first, 100) == "new 1");
    }
    CHECK(read_text_file(first, 100) == "new 1");
    CHECK(read_text_file(second, 100) == "old 2");
    CHECK(files_in_dir() == 2);
    commit_open_outputs();  // no group open: nothing to do
    // Without a group a file is in place as soon as it is written.
    write_file_atomically(first, "at once");
    CHECK(read_text_file(first, 100) == "at once");
    // A process forked inside a group writes its own files at once (it would never commit).
    reset();
    {
        OutputGroup group;
        const pid_t child = ::fork();
        if (child == 0) {
            write_file_atomically(second, "from the child");
            ::_exit(0);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        CHECK(read_text_file(second, 100) == "from the child");
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("a number out of range is echoed as the file writes it", "[fileio]") {
    // Parsed, 2^64 and 20 digits of nines are doubles that print rounded.
    const JsonDocument doc("n.json",
                           R"({"p": 18446744073709551616, "m": [99999999999999999999, -0.5e1]})");
    CHECK_THROWS_WITH(doc.integer("/p", 1, 4096),
                      "n.json:1:7: p: expected an integer in 1..4096, got '18446744073709551616'");
    CHECK_THROWS_WITH(doc.integer("/m/0", 1, 10), Catch::EndsWith("got '99999999999999999999'"));
    CHECK_THROWS_WITH(doc.number("/m/1", 0, 1), Catch::EndsWith("got '-0.5e1'"));
    CHECK_THROWS_WITH(doc.string("/p", 8), Catch::EndsWith("got '18446744073709551616'"));
}

TEST_CASE("a JSON object may have at most max_object_keys keys", "[fileio]") {
    auto object_of = [](int keys) {
        std::string text = "{";
        for (int k = 0; k < keys; ++k)
            text += (k ? ",\n \"k" : "\"k") + std::to_string(k) + "\": 0";
        return text + "}";
    };
    CHECK(JsonDocument("o.json", object_of(64)).root().size() == 64);
    // The 65th key is on line 65, after the space that starts the line.
    CHECK_THROWS_WITH(JsonDocument("o.json", "[" + object_of(65) + "]"),
                      "o.json:65:2: key 'k64': more than 64 keys in one object");
    CHECK(JsonDocument("o.json", object_of(65), JsonLimits{.max_object_keys = 65}).root().size() ==
          65);
}

TEST_CASE("a NUL byte in a JSON text is an error where it stands", "[fileio]") {
    // nlohmann stops at a NUL: what followed was ignored, a broken file read as a good one.
    using namespace std::string_literals;
    CHECK_THROWS_WITH(JsonDocument("n.json", "{\"a\": 1}\n\0garbage"s),
                      "n.json:2:1: invalid JSON: a NUL byte (JSON text has none; is this a binary "
                      "file?)");
    CHECK_THROWS_WITH(JsonDocument("n.json", "{\"a\": \"x\0y\"}"s),
                      Catch::StartsWith("n.json:1:9:"));
    CHECK(JsonDocument("n.json", R"({"a": "x\u0000y"})").string("/a", 8) == "x\0y"s);
}

TEST_CASE("bytes past ASCII in a JSON error are escaped, never passed through", "[fileio]") {
    // nlohmann quotes the byte it stopped at: a lone \xff went raw to the terminal, and
    // Python could not make text of the message at all.
    CHECK_THROWS_WITH(JsonDocument("u.json", "\xff\xfe{}"),
                      "u.json:1:1: invalid JSON: syntax error while parsing value - invalid "
                      "literal; last read: '\\xff'");
}

TEST_CASE("a number too large for a double is an error where it stands", "[fileio]") {
    // nlohmann gives this error no position; the number's text locates it.
    CHECK_THROWS_WITH(JsonDocument("big.json", "{\"a\": 1,\n \"b\": 1e400}"),
                      "big.json:2:7: invalid JSON: number overflow parsing '1e400'");
    CHECK_THROWS_WITH(JsonDocument("big.json", "[-1e999]"),
                      "big.json:1:2: invalid JSON: number overflow parsing '-1e999'");
}

TEST_CASE("JSON strictness errors inside arrays name the element they are in", "[fileio]") {
    CHECK_THROWS_WITH(JsonDocument("d.json", "[{\"a\": 1},\n {\"b\": 1, \"b\": 2}]"),
                      "d.json:2:11: key 'b' appears twice in this object");
    CHECK_THROWS_WITH(JsonDocument("d.json", R"({"a": [0, [[1]]]})", JsonLimits{.max_depth = 3}),
                      "d.json:1:12: nesting deeper than 3 levels");
    CHECK(JsonDocument("d.json", R"({"a": [0, [[1]]]})", JsonLimits{.max_depth = 4})
              .integer("/a/1/0/0", 0, 1) == 1);
}

namespace {

// Bytes the heap hands out now (glibc: small blocks and mapped ones).
double heap_in_use() {
    const struct mallinfo2 info = ::mallinfo2();
    return static_cast<double>(info.uordblks + info.hblkhd);
}

std::string repeated(const std::string& open, const std::string& item, int count,
                     const std::string& close) {
    std::string text = open;
    for (int k = 0; k < count; ++k)
        text += (k ? "," : "") + item;
    return text + close;
}

}  // namespace

TEST_CASE("estimated_bytes bounds what parsing allocates, within a small factor", "[fileio]") {
    const std::string op = R"({"pass": "F", "mb": 17, "stage": 3, "start": 0.25, "end": 1.5})";
    const std::vector<std::pair<std::string, std::string>> documents = {
        {"empty objects", repeated("[", "{}", 100000, "]")},
        {"ops", repeated(R"({"device_ops": [)", op, 50000, "]}")},
        {"short strings", repeated("[", R"("abc")", 50000, "]")},
        {"long strings", repeated("[", '"' + std::string(100, 'x') + '"', 20000, "]")},
        {"pairs", repeated("[", "[1, 2.5]", 50000, "]")},
        {"numbers", repeated("[", "12345", 100000, "]")},
        {"long keys", repeated("[", R"({"a key longer than fifteen": true})", 30000, "]")},
    };
    for (const auto& [name, text] : documents) {
        CAPTURE(name);
        std::string copy = text;  // allocated before the measurement, moved in
        const double before = heap_in_use();
        double allocated = 0;
        {
            const JsonDocument doc("x.json", std::move(copy));
            allocated = heap_in_use() - before;
            REQUIRE(doc.root().size() > 0);
        }
        const double estimate = JsonDocument::estimated_bytes(text, JsonLimits{}.max_depth);
        CAPTURE(allocated, estimate);
        CHECK(estimate >= allocated);
        CHECK(estimate <= 3 * allocated);
    }
    // Counted by hand: 2 objects' vectors (32 + 16 each), 3 values' slots doubled in the
    // array (96 + 16), the array's own vector (32 + 16), and the destroy stack (2 slots).
    CHECK(JsonDocument::estimated_bytes("[{}, {}]", 32) == 2 * 48 + (64 + 16) + 48 + 2 * 16);
}

TEST_CASE("a JSON text too large for the memory left is refused before it is parsed",
          "[fileio][memory]") {
    // 20 million empty objects: 60 MB of text, over a GB parsed. With 400 MB of address
    // space left, nlohmann's DOM runs out of memory while unwinding (its destructor allocates)
    // and ends the process; read, the text is refused in one line.
    const std::string message = test::run_in_child([]() -> std::string {
        std::string text = repeated("[", "{}", 20'000'000, "]");
        if (!test::cap_address_space(std::size_t{400} << 20)) return "setrlimit failed";
        try {
            const JsonDocument doc("huge.json", std::move(text));
            return "parsed";
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
    });
    CHECK_THAT(message, Catch::StartsWith("reading huge.json needs about ") &&
                            Catch::Contains("GB left under this process's address-space limit"));
}
