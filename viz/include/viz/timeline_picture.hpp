#pragma once
// The timeline picture: one row per device, one box per op at its start time, a time axis,
// a title with the headline metrics, and activation memory over time below. Written as
// Graphviz DOT with fixed positions (layout engine "nop2"), rendered by viz/render.hpp.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "schedules/metrics.hpp"
#include "schedules/timeline.hpp"

namespace pipesim::viz {

/// Where the timeline picture's time axis sits, in points: its margins left and right of
/// the axis, and the offset Graphviz 2.43 draws the whole picture at for the graph's
/// pad=0.1 inch (the SVG's translate(7.56 …)). Pages that draw other charts beside the picture
/// on the same time scale (the HTML report) line up with these.
inline constexpr double timeline_axis_left = 44;
inline constexpr double timeline_axis_right = 24;
inline constexpr double timeline_svg_offset = 7.56;

/// What the picture shows. Sizes are in points (1/72 inch; a PNG has 96 pixels per inch).
struct TimelinePictureOptions {
    /// Activation memory of each device as a step curve below the timeline, peak marked.
    bool memory = true;
    /// Activation memory values are bytes (a model gave them): shown in KiB, MiB or GiB.
    /// Otherwise they are activation units, shown as plain numbers.
    bool memory_in_bytes = false;
    /// Transfers between devices as thin arrows from the producer's end to the consumer.
    bool transfers = false;
    /// Outline the ops of the critical path (see critical_path.hpp) in red. Needs a timeline
    /// whose op order is a valid schedule.
    bool critical_path = false;
    /// Highlight this microbatch's activation lifespans, a bar per virtual stage from its F
    /// start to its W (or BW) end; −1: none.
    int lifespan_microbatch = -1;
    /// Length of the time axis; 0 picks one so that the shortest op is about 12 pt wide,
    /// within 500–3000 pt.
    double width = 0;
    /// The most ops drawn: one box each, laid out by Graphviz (65,000 ops take about 3 s and
    /// 0.2 GB on one core). A larger timeline is refused: a picture of it could not be read
    /// anyway; a Chrome trace or the text Gantt chart shows it instead.
    std::size_t max_ops = 200'000;
    /// The run's iteration time where it is not the makespan: the data-parallel gradient
    /// reduction (or a parameter all-gather) that outlasts the last op, or with optimizer
    /// post-validation (`iteration_is_period`) the period at which iterations repeat. The title
    /// gives it after the makespan, as "iteration" or "period", so that it matches the
    /// command's table; 0 (or equal to the makespan): not shown.
    double iteration_time = 0;
    bool iteration_is_period = false;
    /// The title at the left edge instead of centred: in a page that opens a wide picture at
    /// its start, a centred title would lie outside the window.
    bool title_at_left = false;
};

/// The font size (points) of a box's microbatch label of `characters` digits in a box
/// `box_width` points wide: the largest of 9, 7.5 and 6 at which it fits with 1 pt either
/// side, digits taken 0.64 em wide (DejaVu Sans's, drawn for Helvetica on Linux), or 0 when
/// none does (the label is then left to the box's tooltip).
double label_font_size(double box_width, std::size_t characters);

/// The picture as DOT text. Boxes are nodes named "d<device>_<position>", labelled with the
/// microbatch in the largest font that fits (label_font_size), coloured by pass and chunk,
/// with a dashed outline for microbatches that run from the last device to the first
/// (DualPipe's second copy), and a tooltip giving the op, device, start, end and duration.
/// Everything else is drawn in the graph's `_background`: device rows, the time axis with
/// its title and unit, a legend of the colours, shades and outlines, and the memory strips
/// (each device's activation memory from 0 to the highest peak of any device). `memory` must have
/// one entry per virtual stage (it also gives the title's peak activation). Throws
/// std::invalid_argument for a memory model of the wrong size, more than max_ops ops, (with
/// critical_path) an op order that is not a valid schedule, or a lifespan_microbatch the
/// timeline does not have.
std::string timeline_dot(const Timeline& timeline, const MemoryModel& memory,
                         const TimelinePictureOptions& options = {});

/// The refusal of a picture of more ops than `max_ops`: "the timeline picture draws every
/// op: COUNTED more than the MAX it draws (...)", `counted` saying how many ("5000 ops is").
std::invalid_argument too_many_ops(std::string_view counted, std::size_t max_ops);

}  // namespace pipesim::viz
