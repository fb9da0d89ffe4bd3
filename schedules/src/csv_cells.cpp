#include "csv_cells.hpp"

#include <fmt/format.h>

#include "fileio/parse_error.hpp"

namespace pipesim::detail {

namespace {

bool is_python_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

bool is_line_end(char c) {
    return c == '\n' || c == '\r';
}

}  // namespace

std::size_t count_csv_cells(std::string_view text) {
    std::size_t cells = 0;
    bool text_in_cell = false;
    bool in_group = false;  // between '(' and ')': an OVERLAP_F_B group's ';' separate actions
    for (const char c : text) {
        if (c == ',' || is_line_end(c) || (in_group && c == ';')) {
            cells += text_in_cell;
            text_in_cell = false;
            if (c != ';') in_group = false;
        } else if (!is_python_space(c)) {
            text_in_cell = true;
            if (c == '(') in_group = true;
            if (c == ')') in_group = false;
        }
    }
    return cells + text_in_cell;
}

std::string_view strip_python_space(std::string_view s) {
    while (!s.empty() && is_python_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_python_space(s.back()))
        s.remove_suffix(1);
    return s;
}

std::vector<CsvRow> split_csv(std::string_view text, const std::string& file,
                              std::size_t max_rows) {
    auto fail = [&](std::size_t offset, const std::string& problem) {
        throw fileio::ParseError(file, fileio::position_at(text, offset), problem);
    };
    const std::size_t nul = text.find('\0');
    if (nul != std::string_view::npos) fail(nul, "unexpected NUL byte: expected CSV text");

    std::vector<CsvRow> rows;
    // A UTF-8 byte order mark (as spreadsheet programs write) is not part of the first cell.
    std::size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    const std::size_t n = text.size();
    auto skip_line_end = [&] {
        if (i < n && text[i] == '\r') {
            ++i;
            if (i < n && text[i] == '\n') ++i;
        } else if (i < n && text[i] == '\n') {
            ++i;
        }
    };
    while (i < n) {
        if (rows.size() == max_rows)
            fail(i, fmt::format("more than {} rows: expected one row per rank, at most {}",
                                max_rows, max_rows));
        CsvRow row;
        row.offset = i;
        if (is_line_end(text[i])) {  // a blank line: a rank without actions
            skip_line_end();
            rows.push_back(std::move(row));
            continue;
        }
        // The row's cells held once, not grown by doubling (a quoted line end or comma only
        // makes the count a hint).
        std::size_t line_end = i;
        while (line_end < n && !is_line_end(text[line_end]))
            ++line_end;
        row.cells.reserve(count_csv_cells(text.substr(i, line_end - i)));
        while (true) {
            const std::size_t cell_start = i;
            std::string raw;
            std::size_t content_start = i;
            if (i < n && text[i] == '"') {
                content_start = ++i;
                while (true) {
                    if (i >= n)
                        fail(cell_start, "unterminated quoted cell: expected a closing '\"'");
                    if (text[i] == '"') {
                        if (i + 1 < n && text[i + 1] == '"') {
                            raw += '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        break;
                    }
                    raw += text[i++];
                    if (raw.size() > csv_max_cell_bytes) break;
                }
            }
            while (i < n && text[i] != ',' && !is_line_end(text[i]) &&
                   raw.size() <= csv_max_cell_bytes)
                raw += text[i++];
            if (raw.size() > csv_max_cell_bytes)
                fail(cell_start, fmt::format("cell longer than {} bytes, Python's csv field limit",
                                             csv_max_cell_bytes));
            const std::string_view stripped = strip_python_space(raw);
            const auto lead = static_cast<std::size_t>(stripped.data() - raw.data());
            // An empty cell (an idle step) is not kept: a file of commas held 45 bytes each.
            if (!stripped.empty())
                row.cells.push_back(CsvCell{std::string(stripped), content_start + lead});
            if (i < n && text[i] == ',') {
                ++i;
                continue;
            }
            skip_line_end();
            break;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace pipesim::detail
