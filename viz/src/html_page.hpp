#pragma once
// The fixed parts of the HTML report's page: escaping, the head (inline CSS, a content
// security policy that forbids every fetch, and the recorder of script errors), the zoom
// controls and the closing script (zoom, pan, tooltips, sortable table).

#include <string>
#include <string_view>

namespace pipesim::viz::detail {

/// `text` with &, <, >, " and ' replaced by character references (safe in text and in
/// double- or single-quoted attributes).
std::string html_escape(std::string_view text);

/// From <!DOCTYPE html> to the opening <body>, with `title` (plain text) as the page title.
/// The <html> element carries data-js-errors (a count, "0" at first) and
/// data-js-error-text: every uncaught error, unhandled rejection, console.error call and
/// blocked fetch is recorded there; data-report="ready" is set once the page's script ran.
std::string html_head(std::string_view title);

/// The zoom buttons and the hint about wheel and drag.
std::string zoom_controls();

/// The closing script and </body></html>.
std::string html_tail();

}  // namespace pipesim::viz::detail
