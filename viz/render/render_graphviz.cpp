// render_dot() through Graphviz's library. The only file that includes Graphviz headers.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "fileio/memory_budget.hpp"
#include "viz/render.hpp"

namespace pipesim::viz {

namespace {

// Graphviz reports problems through a global error callback; collect them for the exception
// instead of letting them reach stderr. One picture is rendered at a time (render_dot's lock;
// Graphviz is not thread-safe), so one buffer for the call in progress is enough.
std::string& graphviz_errors() {
    static std::string errors;
    return errors;
}

int collect_error(char* message) {
    graphviz_errors() += message;
    return 0;
}

struct GraphDeleter {
    void operator()(Agraph_t* g) const { agclose(g); }
};

[[noreturn]] void fail(std::string_view what) {
    std::string errors = graphviz_errors();
    while (!errors.empty() && (errors.back() == '\n' || errors.back() == ' '))
        errors.pop_back();
    throw std::runtime_error(
        fmt::format("Graphviz could not {}{}{}", what, errors.empty() ? "" : ": ", errors));
}

// PNGs at twice the 96 dpi of a screen, so that 9 pt labels stay sharp when a picture is
// scaled down into a document, unless that makes more than 40 million pixels (160 MB to
// encode): then the resolution that gives 40 million, but not below 96 dpi unless a side
// would be wider than cairo draws.
double png_dpi(const boxf& bb) {
    constexpr double sharp = 192, screen = 96, most_pixels = 40e6;
    const double square_inches = (bb.UR.x - bb.LL.x) / 72 * (bb.UR.y - bb.LL.y) / 72;
    if (!(square_inches > 0)) return sharp;
    const double dpi = std::clamp(std::sqrt(most_pixels / square_inches), screen, sharp);
    // Graphviz's cairo plugin draws at most 32,767 pixels a side (its CAIRO_XMAX); past that it
    // scales the picture down itself and says so on stderr. 32,000 leaves room for its margin.
    constexpr double widest_pixels = 32000;
    const double longest_inches = std::max(bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y) / 72;
    return std::min(dpi, widest_pixels / longest_inches);
}

// Address space Graphviz needs to draw, besides the graph: its plugins, pango, cairo and
// fontconfig (their libraries, font files and caches mapped) and pango's worker thread's
// stack. Measured with Debian 12's Graphviz 2.42 and pango 1.50: a small picture drew under
// `ulimit -v` 84 MB and not under 82 MB, where pipesim alone ran under 12 MB (about 72 MB
// more); below it pango's thread cannot start and glib aborts the process (SIGTRAP), or a
// font lookup crashes. A third more for other systems' fonts.
constexpr double drawing_bytes = 96.0 * 1024 * 1024;
// The graph Graphviz builds from the DOT text and lays out: 12.6 and 12.7 resident bytes per
// byte of text for timeline pictures of 16,384 and 65,536 ops (2.8 and 11.5 MB of DOT).
constexpr double graph_bytes_per_dot_byte = 16;

// One picture at a time: Graphviz keeps global state (its error handler, its plugins' tables),
// and Python threads render with the GIL released.
std::mutex& render_lock() {
    static std::mutex one_at_a_time;
    return one_at_a_time;
}

// A process forked while another thread draws would inherit the lock held by a thread it does
// not have, and its own first picture (simulate's HTML report is drawn in a child) would wait
// for it forever. So a fork waits for the picture in progress and happens between pictures:
// the lock is taken before the fork and released on both sides after it.
void release_render_lock() {
    render_lock().unlock();
}

void hold_render_lock_across_forks() {
    static const int registered =
        ::pthread_atfork([] { render_lock().lock(); }, release_render_lock, release_render_lock);
    (void)registered;
}

}  // namespace

bool graphviz_available() {
    return true;
}

std::string render_dot(std::string_view dot, ImageFormat format) {
    if (format == ImageFormat::dot) return std::string(dot);
    // One context serves all pictures: a context per picture leaked about 3.7 KB each (fonts
    // and plugin state it never frees; 3,000 small pictures grew a process by 11 MB, now by
    // 0.4 MB).
    hold_render_lock_across_forks();
    const std::lock_guard<std::mutex> lock(render_lock());
    // Refused while it can still be said: with too little address space Graphviz's libraries
    // abort or crash the process instead of failing.
    fileio::check_memory(drawing_bytes + graph_bytes_per_dot_byte * static_cast<double>(dot.size()),
                         fileio::memory_budget(),
                         fmt::format("drawing the {} picture", image_format_name(format)));
    graphviz_errors().clear();
    agseterrf(collect_error);
    agseterr(AGERR);
    // Kept for the process's life (freeing it at exit would race the plugins' unloading).
    static GVC_t* const context = gvContext();
    if (!context) fail("start");
    const std::string text(dot);  // agmemread wants a NUL-terminated string
    std::unique_ptr<Agraph_t, GraphDeleter> graph(agmemread(text.c_str()));
    if (!graph) fail("parse the DOT text");
    if (gvLayoutJobs(context, graph.get()) != 0) fail("lay out the graph");
    if (format == ImageFormat::png) GD_drawing(graph.get())->dpi = png_dpi(GD_bb(graph.get()));
    char* data = nullptr;
    unsigned int length = 0;
    const std::string name(image_format_name(format));
    const int rc = gvRenderData(context, graph.get(), name.c_str(), &data, &length);
    std::string bytes = rc == 0 && data ? std::string(data, length) : std::string();
    if (data) gvFreeRenderData(data);
    gvFreeLayout(context, graph.get());
    if (rc != 0 || bytes.empty()) fail(fmt::format("render {}", name));
    return bytes;
}

}  // namespace pipesim::viz
