// Progress of a long command on stderr: a redrawn bar on a terminal, a plain line every few
// seconds in a file, or nothing with --quiet.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace dynamix {

enum class ProgressStyle {
  /// One line redrawn in place with '\r' (for a terminal).
  kBar,
  /// A plain line every `line_interval_s` and a last one at the end (for a file or a pipe).
  kLines,
  /// Nothing (--quiet).
  kQuiet,
};

struct ProgressOptions {
  /// How progress is shown.
  ProgressStyle style = ProgressStyle::kLines;
  /// Seconds between two lines in the kLines style.
  double line_interval_s = 10;
};

/// The style for stderr: kQuiet when `quiet`, else kBar on a terminal and kLines elsewhere.
ProgressStyle stderr_progress_style(bool quiet);

class Progress {
 public:
  Progress(std::ostream& out, ProgressOptions options);

  /// Reports `fraction` (0 to 1) of the work done, with `status` after it.
  void update(double fraction, const std::string& status);
  /// Ends the progress output: the bar's line is kept, and a file gets the latest status.
  void finish();

 private:
  std::string line(double fraction, const std::string& status) const;

  std::ostream& out_;
  ProgressOptions options_;
  std::chrono::steady_clock::time_point last_line_;
  std::string pending_;
  std::size_t drawn_width_ = 0;
  bool finished_ = false;
};

}  // namespace dynamix
