#include "sweep/results.hpp"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "fileio/files.hpp"
#include "fileio/parse_error.hpp"
#include "models/presets.hpp"

namespace pipesim::sweep {

namespace {

// The columns, in order: the job's parameters, then its outcome.
constexpr std::array<const char*, 48> columns = {"job",
                                                 "engine",
                                                 "schedule",
                                                 "p",
                                                 "m",
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
                                                 "nccl_algo",
                                                 "status",
                                                 "reason",
                                                 "chunks",
                                                 "makespan",
                                                 "bubble_rate",
                                                 "bubble_time",
                                                 "peak_activation",
                                                 "peak_memory",
                                                 "throughput",
                                                 "gpus",
                                                 "samples_per_s",
                                                 "samples_per_s_per_gpu",
                                                 "tokens_per_s",
                                                 "mfu",
                                                 "iteration_time",
                                                 "efficiency",
                                                 "speedup_1f1b",
                                                 "lifespan_max",
                                                 "lifespan_mean",
                                                 "grid"};

std::string number(double x) {
    return fmt::format("{}", x);
}

std::string costs_field(const std::vector<double>& costs) {
    std::string out;
    for (double c : costs)
        out += (out.empty() ? "" : "/") + number(c);
    return out;
}

// A fixed layer count, or nothing for the partitioner's choice (−1).
std::string layer_count(int layers) {
    return layers < 0 ? std::string() : std::to_string(layers);
}

std::string quoted(const std::string& field) {
    if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
    std::string out = "\"";
    for (char c : field) {
        if (c == '"') out += '"';
        out += c == '\n' || c == '\r' ? ' ' : c;
    }
    return out + '"';
}

std::vector<std::string> parameter_fields(const Job& j) {
    return {std::to_string(j.index),
            engine_name(j.engine),
            j.schedule,
            std::to_string(j.p),
            std::to_string(j.m),
            std::to_string(j.v),
            costs_field(j.costs),
            number(j.comm),
            number(j.mem_w_ratio),
            j.model,
            j.gpu,
            std::to_string(j.mb),
            std::to_string(j.tp),
            std::to_string(j.dp),
            j.recompute,
            j.attention,
            j.cluster,
            number(j.mem_limit),
            std::to_string(j.cp),
            std::to_string(j.zero),
            j.tp_comm_overlap ? "true" : "false",
            j.overlap_grad_reduce ? "true" : "false",
            j.overlap_param_gather ? "true" : "false",
            j.post_validation ? "true" : "false",
            j.overlap_p2p_communication ? "true" : "false",
            layer_count(j.first_stage_layers),
            layer_count(j.last_stage_layers),
            j.nccl_algo};
}

// The whole of `text` as a finite double. Values below the smallest normal double (a grid's
// 1e-310 as the sweep wrote it) are read as they are: strtod flags them as out of range, as
// it does an overflow to infinity, and std::stod throws for both.
std::optional<double> finite_number(const std::string& text) {
    // Decimal digits, sign, point and exponent only: strtod also takes leading spaces, hex
    // ("0x10" read as 16), "inf" and "nan", which a sweep never writes.
    if (text.empty() || text.find_first_not_of("0123456789+-.eE") != std::string::npos)
        return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
    if (errno == ERANGE && std::fabs(value) >= std::numeric_limits<double>::min())
        return std::nullopt;
    return value;
}

// Reads one field of a row; `column` counts fields from 0. Errors point at the byte where
// the field starts (`starts`: byte offsets in the line, one per field).
class RowReader {
  public:
    RowReader(const std::string& file, int line, const std::vector<std::string>& fields,
              const std::vector<std::size_t>& starts)
        : file_(file), line_(line), fields_(fields), starts_(starts) {}

    // Text is printed (pareto's front, its group headings): a control character in it, a
    // terminal escape among them, is no file a sweep wrote.
    const std::string& text(std::size_t column) const {
        if (fileio::has_control(fields_[column])) fail(column, "text without control characters");
        return fields_[column];
    }

    double real(std::size_t column) const {
        const std::optional<double> value = finite_number(fields_[column]);
        if (!value) fail(column, "a finite number");
        return *value;
    }

    // Times, rates, sizes and counts: never below 0 in a file a sweep wrote.
    double non_negative(std::size_t column) const {
        const std::optional<double> value = finite_number(fields_[column]);
        if (!value || *value < 0) fail(column, "a finite number ≥ 0");
        return *value;
    }

    int count(std::size_t column) const {
        const int value = integer(column);
        if (value < 0) fail(column, "an integer ≥ 0");
        return value;
    }

    // A job parameter no grid gives outside [low, high].
    int integer_in(std::size_t column, int low, int high) const {
        const int value = integer(column);
        if (value < low || value > high)
            fail(column, high == std::numeric_limits<int>::max()
                             ? fmt::format("an integer ≥ {}", low)
                             : fmt::format("an integer in {}..{}", low, high));
        return value;
    }

    // A share: the bubble rate, the efficiency. The efficiency divides a sum of rounded op
    // lengths by the span, so a pipeline without idle time may reach 1 plus a few units in
    // the last place.
    double fraction(std::size_t column) const {
        const std::optional<double> value = finite_number(fields_[column]);
        if (!value || *value < 0 || *value > 1 + 1e-9) fail(column, "a number in 0..1");
        return *value;
    }

    bool boolean(std::size_t column) const {
        if (fields_[column] == "true") return true;
        if (fields_[column] != "false") fail(column, "true or false");
        return false;
    }

    // A fixed layer count, or empty for the partitioner's choice (−1).
    int layer_count(std::size_t column) const {
        if (fields_[column].empty()) return -1;
        const int value = integer(column);
        if (value < 0) fail(column, "a layer count ≥ 0 or nothing");
        return value;
    }

    int integer(std::size_t column) const {
        const std::string& f = fields_[column];
        int value = 0;
        const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), value);
        if (ec != std::errc() || end != f.data() + f.size()) fail(column, "an integer");
        return value;
    }

    [[noreturn]] void fail(std::size_t column, const std::string& expected) const {
        throw fileio::ParseError(
            file_, {line_, static_cast<int>(starts_[column]) + 1},
            fmt::format("column {} ({}): expected {}, got {}", column + 1, columns[column],
                        expected, fileio::quote_excerpt(fields_[column])));
    }

  private:
    const std::string& file_;
    int line_;
    const std::vector<std::string>& fields_;
    const std::vector<std::size_t>& starts_;
};

Status parse_status(const RowReader& row, std::size_t column) {
    for (Status s : {Status::ok, Status::over_memory, Status::infeasible, Status::error})
        if (row.text(column) == status_name(s)) return s;
    row.fail(column, "ok, over-memory, infeasible or error");
}

std::vector<double> parse_costs(const RowReader& row, std::size_t column) {
    std::vector<double> out;
    const std::string& f = row.text(column);
    std::size_t start = 0;
    while (true) {
        const std::size_t slash = f.find('/', start);
        const std::string part = f.substr(start, slash - start);
        const std::optional<double> cost = finite_number(part);
        if (!cost) row.fail(column, "costs F/B/W");
        out.push_back(*cost);
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    if (out.size() != 3) row.fail(column, "costs F/B/W");
    return out;
}

Result parse_row(const std::string& file, int line, const std::vector<std::string>& fields,
                 const std::vector<std::size_t>& starts) {
    if (fields.size() != columns.size())
        throw fileio::ParseError(
            file, {line, 1},
            fmt::format("expected {} fields, got {}", columns.size(), fields.size()));
    const RowReader row(file, line, fields, starts);
    Result r;
    Job& j = r.job;
    std::size_t c = 0;  // the next column
    j.index = row.count(c++);
    if (row.text(c) == "analytic")
        j.engine = Engine::analytic;
    else if (row.text(c) == "simgrid")
        j.engine = Engine::simgrid;
    else
        row.fail(c, "analytic or simgrid");
    ++c;
    j.schedule = row.text(c++);
    constexpr int any = std::numeric_limits<int>::max();
    j.p = row.integer_in(c++, 1, any);
    j.m = row.count(c++);  // 0 where a global batch leaves no whole m (infeasible)
    j.v = row.integer_in(c++, 0, any);
    j.costs = parse_costs(row, c++);
    j.comm = row.non_negative(c++);
    j.mem_w_ratio = row.non_negative(c++);
    j.model = row.text(c++);
    j.gpu = row.text(c++);
    j.mb = row.count(c++);
    j.tp = row.integer_in(c++, 1, any);
    j.dp = row.integer_in(c++, 1, any);
    j.recompute = row.text(c++);
    j.attention = row.text(c++);
    j.cluster = row.text(c++);
    j.mem_limit = row.non_negative(c++);
    j.cp = row.integer_in(c++, 1, any);
    j.zero = row.integer_in(c++, 0, 3);
    j.tp_comm_overlap = row.boolean(c++);
    j.overlap_grad_reduce = row.boolean(c++);
    j.overlap_param_gather = row.boolean(c++);
    j.post_validation = row.boolean(c++);
    j.overlap_p2p_communication = row.boolean(c++);
    j.first_stage_layers = row.layer_count(c++);
    j.last_stage_layers = row.layer_count(c++);
    j.nccl_algo = row.text(c++);
    r.status = parse_status(row, c++);
    r.reason = row.text(c++);
    r.chunks = row.count(c++);
    r.makespan = row.non_negative(c++);
    r.bubble_rate = row.fraction(c++);
    r.bubble_time = row.real(c++);
    r.peak_activation = row.non_negative(c++);
    r.peak_memory = row.non_negative(c++);
    r.throughput = row.non_negative(c++);
    r.gpus = row.count(c++);
    r.samples_per_second = row.non_negative(c++);
    r.samples_per_second_per_gpu = row.non_negative(c++);
    r.tokens_per_second = row.non_negative(c++);
    r.mfu = row.non_negative(c++);
    r.iteration_time = row.non_negative(c++);
    r.efficiency = row.fraction(c++);
    r.speedup_1f1b = row.non_negative(c++);
    r.lifespan_max = row.non_negative(c++);
    r.lifespan_mean = row.non_negative(c++);
    r.grid = row.text(c);
    // Empty in the rows a worker hands to the sweep, which stamps its grid on them.
    if (!r.grid.empty() && !is_grid_id(r.grid))
        row.fail(c, "a grid identity of 16 hexadecimal digits");
    return r;
}

}  // namespace

const char* status_name(Status status) {
    switch (status) {
        case Status::ok:
            return "ok";
        case Status::over_memory:
            return "over-memory";
        case Status::infeasible:
            return "infeasible";
        case Status::error:
            return "error";
    }
    return "error";
}

namespace {
// Above the largest model, GPU or cluster file the readers take (1 MiB): the grid refused any
// larger before it got here.
constexpr std::size_t max_referenced_file_bytes = std::size_t{1} << 20;
}  // namespace

std::string grid_id(const std::vector<Job>& jobs) {
    // FNV-1a, 64 bits, over every job's key and index in grid order.
    std::uint64_t hash = 14695981039346656037ull;
    auto add = [&](std::string_view text) {
        for (const char c : text) {
            hash ^= static_cast<unsigned char>(c);
            hash *= 1099511628211ull;
        }
    };
    std::set<std::string> files;
    for (const Job& j : jobs) {
        add(std::to_string(j.index));
        add("|");
        add(job_key(j));
        // Not a column, so not in the key: a grid's global batch (its infeasible jobs have
        // m = 0 whatever the batch) tells it from a grid of another batch.
        if (j.global_batch > 0) add(fmt::format("|B{}", j.global_batch));
        add("\n");
        // By the rules the readers resolve names with.
        for (const std::string* name : {&j.model, &j.gpu, &j.cluster})
            if (fileio::names_a_file(*name)) files.insert(*name);
    }
    // The model, GPU and cluster files the jobs read, by content: a results file resumed (or
    // shards merged) after one of them changed would mix two configurations under one name.
    for (const std::string& file : files) {
        add(file);
        add("\n");
        add(fileio::read_text_file(file, max_referenced_file_bytes));
        add("\n");
    }
    return fmt::format("{:016x}", hash);
}

bool is_grid_id(std::string_view text) {
    return text.size() == 16 &&
           text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string csv_header() {
    std::string out;
    for (const char* c : columns)
        out += (out.empty() ? "" : ",") + std::string(c);
    return out;
}

std::string csv_row(const Result& r) {
    std::vector<std::string> fields = parameter_fields(r.job);
    for (const std::string& f : {std::string(status_name(r.status)),
                                 r.reason,
                                 std::to_string(r.chunks),
                                 number(r.makespan),
                                 number(r.bubble_rate),
                                 number(r.bubble_time),
                                 number(r.peak_activation),
                                 number(r.peak_memory),
                                 number(r.throughput),
                                 std::to_string(r.gpus),
                                 number(r.samples_per_second),
                                 number(r.samples_per_second_per_gpu),
                                 number(r.tokens_per_second),
                                 number(r.mfu),
                                 number(r.iteration_time),
                                 number(r.efficiency),
                                 number(r.speedup_1f1b),
                                 number(r.lifespan_max),
                                 number(r.lifespan_mean),
                                 r.grid})
        fields.push_back(f);
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i)
        out += (i ? "," : "") + quoted(fields[i]);
    return out;
}

std::string job_key(const Job& job) {
    std::vector<std::string> fields = parameter_fields(job);
    std::string out;
    for (std::size_t i = 1; i < fields.size(); ++i)
        out += fields[i] + '\x1f';
    return out;
}

std::string key_difference(const Job& row, const Job& grid) {
    const std::vector<std::string> a = parameter_fields(row), b = parameter_fields(grid);
    for (std::size_t i = 1; i < a.size() && i < b.size(); ++i)  // the index aside
        if (a[i] != b[i]) return fmt::format("{} is '{}', the grid's '{}'", columns[i], a[i], b[i]);
    return {};
}

std::optional<std::vector<std::string>> split_csv_line(const std::string& line,
                                                       std::vector<std::size_t>* starts) {
    std::vector<std::string> fields(1);
    if (starts) *starts = {0};
    bool in_quotes = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (in_quotes) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                fields.back() += '"';
                ++i;
            } else if (c == '"') {
                in_quotes = false;
            } else {
                // A field holds no line break: csv_row writes a space for one, so read one so.
                fields.back() += c == '\r' ? ' ' : c;
            }
        } else if (c == '"') {
            in_quotes = true;
        } else if (c == ',') {
            fields.emplace_back();
            if (starts) starts->push_back(i + 1);
        } else if (c != '\r') {
            fields.back() += c;
        }
    }
    if (in_quotes) return std::nullopt;
    return fields;
}

ResultsFile parse_results(const std::string& file, const std::string& text) {
    ResultsFile out;
    // A spreadsheet's save: a UTF-8 byte-order mark first, CRLF line ends (RFC 4180's).
    constexpr std::string_view bom = "\xEF\xBB\xBF";
    std::size_t start = text.starts_with(bom) ? bom.size() : 0;
    int line = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        ++line;
        if (end == std::string::npos) {  // cut short: the sweep was killed mid-row
            // Only the header's own beginning can be a header cut short; anything else on the
            // first line is another file (one line without a line end, or CR-only line ends),
            // which a sweep must not take for its own and write over.
            std::string_view tail(text);
            tail.remove_prefix(start);
            if (line == 1 && !std::string_view(csv_header()).starts_with(tail))
                throw fileio::ParseError(
                    file, {1, 1},
                    "not a pipesim sweep results file (its first line has no line end and is "
                    "not the beginning of the header this pipesim writes: " +
                        csv_header() + ")");
            out.incomplete_tail = true;
            break;
        }
        const std::size_t length =
            end > start && text[end - 1] == '\r' ? end - start - 1 : end - start;
        const std::string row = text.substr(start, length);
        start = end + 1;
        if (line == 1) {
            if (row != csv_header())
                throw fileio::ParseError(
                    file, {1, 1},
                    "not a pipesim sweep results file (its header differs from "
                    "the one this pipesim writes: " +
                        csv_header() + ")");
            continue;
        }
        if (row.empty()) continue;
        std::vector<std::size_t> starts;
        const auto fields = split_csv_line(row, &starts);
        if (!fields)
            throw fileio::ParseError(file, {line, 1},
                                     "a quoted field is not closed on its line (a results row "
                                     "holds no line breaks, not even quoted ones)");
        out.rows.push_back(parse_row(file, line, *fields, starts));
        out.lines.push_back(line);
    }
    out.file = file;
    return out;
}

ResultsFile load_results(const std::string& path) {
    // An input of this run, which no output may replace (pareto and merge wrote over it);
    // a sweep resuming its own file forgets that (resume_results).
    return parse_results(path, fileio::read_text_file(path, std::size_t{1} << 30));
}

}  // namespace pipesim::sweep
