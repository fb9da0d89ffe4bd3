#pragma once
// The HTML report (`--html FILE` of compare, analyze, simulate and sweep): one self-contained
// page (no network fetches; its CSS and script are inline) holding a table of figures, the
// inputs that produced them, each schedule's timeline picture (Graphviz SVG with tooltips) on
// one shared time scale, each schedule's activation memory over time, a legend, and zoom and
// pan. The page is built here; rendering the pictures and writing the file are
// write_html_report()'s (viz_render).

#include <string>
#include <utility>
#include <vector>

#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"
#include "viz/timeline_picture.hpp"

namespace pipesim::viz {

/// One schedule shown with its timeline and memory curves.
struct HtmlSchedule {
    std::string name;    ///< the heading (a schedule name, or a sweep row's description)
    Timeline timeline;   ///< with every op recorded
    MemoryModel memory;  ///< activation per virtual stage (units of M_B, or bytes)
    /// Memory values are divided by this for display, and written in `memory_unit`
    /// (e.g. 2^30 and "GiB" for bytes).
    double memory_scale = 1;
    std::string memory_unit = "M_B";
    /// The run's iteration time (or period), for the picture's title
    /// (TimelinePictureOptions::iteration_time).
    double iteration_time = 0;
    bool iteration_is_period = false;
};

/// A table of already formatted cells; a row may have fewer cells than there are columns.
struct HtmlTable {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
};

/// Horizontal stacked bars, one per label, each split into the same parts (a legend names
/// them, in stacking order); a part's share of its bar is in [0, 1] and a bar's shares add up
/// to at most 1. Hovering a segment names its bar, part and share.
struct HtmlBars {
    std::vector<std::string> parts;
    std::vector<std::string> labels;
    std::vector<std::vector<double>> shares;  ///< per label, one per part
};

/// A further table below the timelines, with its heading, a caption above it, optionally a
/// bar chart between the caption and the table, and notes below it (one paragraph each).
struct HtmlSection {
    std::string id;  ///< the section's element id (letters, digits and '-')
    std::string heading;
    std::string caption;  ///< what the table shows (none when empty)
    std::vector<std::string> notes;
    HtmlTable table;
    HtmlBars bars;  ///< none when it has no labels
};

/// The bar chart's SVG element (inline in the page; `id` prefixes its element ids). Throws
/// std::invalid_argument when a bar's shares do not match the parts, a share is outside
/// [0, 1] or not a number, or a bar's shares add up to more than 1 (beyond rounding).
std::string bars_svg(const HtmlBars& bars, const std::string& id);

/// Everything the page shows. Text is given as plain text (the page escapes it).
struct HtmlReport {
    std::string title;                                        ///< e.g. "pipesim compare"
    std::string command_line;                                 ///< as typed, for the inputs
    std::vector<std::pair<std::string, std::string>> inputs;  ///< label → value (p, m, costs …)
    HtmlTable table;
    std::vector<HtmlSchedule> schedules;
    std::vector<HtmlSection> sections;  ///< after the timelines, before the inputs
    /// How the pictures are drawn. `width` is chosen by the report (one time scale for all
    /// schedules that share a time unit) and `memory` is off (the page draws its own curves).
    TimelinePictureOptions picture;
};

/// The timeline picture options for schedule `index` of `report`: report.picture with the
/// memory strips off, the peak in the title in bytes when the schedule's memory is scaled
/// (memory_scale ≠ 1), and a width that gives every schedule with the same time unit the same
/// points per time unit (the longest about as wide as timeline_dot would draw it alone).
TimelinePictureOptions html_picture_options(const HtmlReport& report, std::size_t index);

/// The page. `timeline_svgs[i]` is the SVG text of schedule i's picture (timeline_dot with
/// html_picture_options, rendered); its XML prolog, DOCTYPE and comments are dropped and its
/// element ids prefixed so that several pictures can share the page. Throws
/// std::invalid_argument when the numbers of pictures and schedules differ, or a schedule's
/// memory model does not match its timeline.
std::string html_document(const HtmlReport& report, const std::vector<std::string>& timeline_svgs);

/// Renders every schedule's picture with Graphviz and returns html_document(). Throws
/// std::invalid_argument when this build has no Graphviz (SVG is needed) and for pictures
/// timeline_dot refuses.
std::string html_report_text(const HtmlReport& report);

/// Writes html_report_text() to `path` whole or not at all. Throws like html_report_text and
/// "cannot write PATH: REASON".
void write_html_report(const std::string& path, const HtmlReport& report);

/// Checks before any work that write_html_report() can work in this build (Graphviz present)
/// and that `path` ends in .html or .htm; `flag` names the option in the message. Throws
/// std::invalid_argument.
void check_html_report(const std::string& flag, const std::string& path);

}  // namespace pipesim::viz
