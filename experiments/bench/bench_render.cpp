// Time to draw a timeline: DOT text, then Graphviz layout and rendering to SVG, PNG and PDF,
// for a large case (p=16, m=64 interleaved 1F1B) and a few others. Prints its figures;
// asserts nothing.
//   bench_render [--quick]
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "bench_timing.hpp"
#include "schedules/heap.hpp"
#include "schedules/metrics.hpp"
#include "schedules/registry.hpp"
#include "sim/replay.hpp"
#include "viz/render.hpp"
#include "viz/timeline_picture.hpp"

using pipesim::bench::seconds_per_run;

namespace {

struct Case {
    const char* schedule;
    int p, m, v;
    bool transfers;
};

}  // namespace

int main(int argc, char** argv) {
    pipesim::tune_heap();  // as pipesim does
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int runs = quick ? 1 : 3;
    const std::vector<Case> cases = {{"1f1b", 4, 8, 1, false},
                                     {"interleaved-1f1b", 16, 64, 2, false},
                                     {"interleaved-1f1b", 16, 64, 2, true},
                                     {"zb-h1", 32, 128, 1, false}};
    if (!pipesim::viz::graphviz_available())
        fmt::print("built without Graphviz: only the DOT column is measured\n");
    fmt::print("{:<18} {:>3} {:>4} {:>2} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "schedule",
               "p", "m", "v", "transfers", "ops", "dot ms", "svg ms", "png ms", "pdf ms",
               "png KiB");
    for (const Case& c : cases) {
        const auto schedule = pipesim::generate_schedule(c.schedule, {c.p, c.m, c.v, 0});
        pipesim::sim::ReplayOptions replay;
        replay.comm_latency = 0.05;
        const auto timeline = pipesim::sim::replay(
            schedule, pipesim::uniform_stage_costs(c.p, schedule.chunks, 1, 1, 1), replay);
        const auto memory = pipesim::unit_memory_model(c.p, schedule.chunks);
        pipesim::viz::TimelinePictureOptions options;
        options.transfers = c.transfers;
        std::string dot;
        const double dot_s = seconds_per_run(
            [&] { dot = pipesim::viz::timeline_dot(timeline, memory, options); }, runs, 0.2);
        double ms[3] = {0, 0, 0};
        std::size_t png_bytes = 0;
        if (pipesim::viz::graphviz_available()) {
            const pipesim::viz::ImageFormat formats[3] = {pipesim::viz::ImageFormat::svg,
                                                          pipesim::viz::ImageFormat::png,
                                                          pipesim::viz::ImageFormat::pdf};
            for (int f = 0; f < 3; ++f) {
                // DOT generation included: this is what `analyze --timeline` costs.
                ms[f] = 1e3 * seconds_per_run(
                                  [&] {
                                      const std::string bytes = pipesim::viz::render_dot(
                                          pipesim::viz::timeline_dot(timeline, memory, options),
                                          formats[f]);
                                      if (f == 1) png_bytes = bytes.size();
                                  },
                                  runs, 0.0);
            }
        }
        fmt::print(
            "{:<18} {:>3} {:>4} {:>2} {:>9} {:>6} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.0f}\n",
            c.schedule, c.p, c.m, schedule.chunks, c.transfers ? "yes" : "no", schedule.op_count(),
            dot_s * 1e3, ms[0], ms[1], ms[2], static_cast<double>(png_bytes) / 1024.0);
    }
    fmt::print(
        "svg/png/pdf include making the DOT; target: p=16 m=64 interleaved under 2000 ms.\n");
    return 0;
}
