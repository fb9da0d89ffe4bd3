#include "progress.hpp"

#include <string>

#include <fmt/format.h>

namespace pipesim::sweep::detail {

namespace {

std::string duration(double seconds) {
    const auto s = static_cast<long>(seconds + 0.5);
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(std::FILE* out, bool enabled, bool bar, int total)
    : out_(out),
      enabled_(enabled && out != nullptr),
      bar_(bar),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {
    if (enabled_ && bar_) print(true);
}

void Progress::job_done(Status status) {
    ++done_;
    if (status != Status::ok) ++failed_;
    print(done_ == total_);
}

void Progress::print(bool force) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    const double since_last = std::chrono::duration<double>(now - last_print_).count();
    if (!force && since_last < (bar_ ? 0.1 : 1.0)) return;
    last_print_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? done_ / elapsed : 0;
    const std::string eta =
        rate > 0 ? duration((total_ - done_) / rate) : std::string(done_ == total_ ? "0:00" : "?");
    const int percent = total_ > 0 ? 100 * done_ / total_ : 100;
    if (bar_) {
        constexpr int width = 30;
        const int filled = total_ > 0 ? width * done_ / total_ : width;
        fmt::print(out_, "\r[{}{}] {}/{} {:3}%  {:.1f} jobs/s  ETA {}  not ok {}\x1b[K",
                   std::string(static_cast<std::size_t>(filled), '#'),
                   std::string(static_cast<std::size_t>(width - filled), '.'), done_, total_,
                   percent, rate, eta, failed_);
    } else {
        fmt::print(out_, "sweep: {}/{} jobs ({}%), {:.1f} jobs/s, ETA {}, not ok {}\n", done_,
                   total_, percent, rate, eta, failed_);
    }
    std::fflush(out_);
}

void Progress::finish() {
    if (!enabled_) return;
    if (bar_) {
        print(true);
        fmt::print(out_, "\n");
    }
    std::fflush(out_);
}

}  // namespace pipesim::sweep::detail
