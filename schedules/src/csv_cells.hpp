#pragma once
// Splitting a CSV file into cells the way Python's csv.reader (excel dialect) does, keeping
// each cell's offset for messages.

#include <string>
#include <string_view>
#include <vector>

namespace pipesim::detail {

/// One cell, with surrounding whitespace stripped as Python's str.strip() does for ASCII.
struct CsvCell {
    std::string text;
    std::size_t content_offset = 0;  ///< byte offset in the file of the stripped text
};

struct CsvRow {
    /// The cells with text, in order: empty ones (idle steps) are left out, and a blank line
    /// has none.
    std::vector<CsvCell> cells;
    std::size_t offset = 0;  ///< byte offset of the row's first character
};

/// Python's field size limit (csv.field_size_limit() default).
inline constexpr std::size_t csv_max_cell_bytes = 131072;

/// Rows as csv.reader yields them (after a UTF-8 byte order mark, which is skipped): ',' separates
/// cells; "\n", "\r\n" and "\r" end rows (a final line end adds no row; a blank line is a row
/// without cells); a cell starting with
/// '"' is quoted ('""' inside is one quote, line ends are kept, text after the closing quote
/// is appended); a quote elsewhere is literal. Throws ParseError for a NUL byte, a cell over
/// csv_max_cell_bytes, an unterminated quoted cell, or more than `max_rows` rows.
std::vector<CsvRow> split_csv(std::string_view text, const std::string& file, std::size_t max_rows);

/// At most how many cells with text split_csv() keeps from `text`, and how many actions they
/// hold: the runs of non-space text between commas, line ends and the ';' inside the
/// parentheses of an OVERLAP_F_B group (empty cells, idle steps, are dropped). One pass, no allocation: for
/// sizing the lists before they are filled.
std::size_t count_csv_cells(std::string_view text);

/// `s` without leading and trailing ASCII whitespace as Python's str.strip() sees it
/// (space, \t, \n, \v, \f, \r and \x1c..\x1f).
std::string_view strip_python_space(std::string_view s);

}  // namespace pipesim::detail
