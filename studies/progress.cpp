// Progress: the bar, the periodic lines and the silence behind one update() call.
#include "studies/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace dynamix {

namespace {

constexpr int kBarWidth = 24;

std::string bar(double fraction) {
  const int filled = static_cast<int>(std::lround(fraction * kBarWidth));
  std::string drawn(kBarWidth + 2, '.');
  drawn.front() = '[';
  drawn.back() = ']';
  std::fill_n(drawn.begin() + 1, filled, '#');
  return drawn;
}

}  // namespace

ProgressStyle stderr_progress_style(bool quiet) {
  if (quiet) return ProgressStyle::kQuiet;
  return ::isatty(STDERR_FILENO) ? ProgressStyle::kBar : ProgressStyle::kLines;
}

Progress::Progress(std::ostream& out, ProgressOptions options)
    : out_(out), options_(options), last_line_(std::chrono::steady_clock::now()) {}

std::string Progress::line(double fraction, const std::string& status) const {
  if (options_.style == ProgressStyle::kBar) return bar(fraction) + " " + status;
  std::string text = "[";
  text += std::to_string(static_cast<int>(std::floor(fraction * 100)));
  return text + "%] " + status;
}

void Progress::update(double fraction, const std::string& status) {
  fraction = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  switch (options_.style) {
    case ProgressStyle::kQuiet:
      return;
    case ProgressStyle::kBar: {
      // Spaces cover whatever a longer earlier line left on screen.
      const std::string text = line(fraction, status);
      out_ << '\r' << text
           << std::string(drawn_width_ > text.size() ? drawn_width_ - text.size() : 0, ' ')
           << std::flush;
      drawn_width_ = std::max(drawn_width_, text.size());
      return;
    }
    case ProgressStyle::kLines: {
      pending_ = line(fraction, status);
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_line_).count() >= options_.line_interval_s) {
        out_ << pending_ << '\n' << std::flush;
        pending_.clear();
        last_line_ = now;
      }
      return;
    }
  }
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (options_.style == ProgressStyle::kBar && drawn_width_ > 0) out_ << '\n' << std::flush;
  if (options_.style == ProgressStyle::kLines && !pending_.empty())
    out_ << pending_ << '\n' << std::flush;
}

}  // namespace dynamix
