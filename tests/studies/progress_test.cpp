// Progress: a redrawn bar on a terminal, plain periodic lines in a file, nothing when quiet.
#include "studies/progress.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

namespace dynamix {
namespace {

std::size_t count(const std::string& text, char c) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), c));
}

TEST_CASE("Progress in a file prints plain lines, never a carriage return") {
  std::ostringstream out;
  Progress progress(out, {.style = ProgressStyle::kLines, .line_interval_s = 0});
  progress.update(0.25, "update 1");
  progress.update(0.5, "update 2");
  progress.finish();
  CHECK(out.str() == "[25%] update 1\n[50%] update 2\n");
  CHECK(count(out.str(), '\r') == 0);
}

TEST_CASE("Progress in a file waits its interval between lines and ends with the latest status") {
  std::ostringstream out;
  Progress progress(out, {.style = ProgressStyle::kLines, .line_interval_s = 3600});
  for (int update = 1; update <= 100; ++update)
    progress.update(update / 100.0, "update " + std::to_string(update));
  CHECK(out.str().empty());
  progress.finish();
  progress.finish();
  CHECK(out.str() == "[100%] update 100\n");
}

TEST_CASE("Progress on a terminal redraws one line in place and ends it with a newline") {
  std::ostringstream out;
  Progress progress(out, {.style = ProgressStyle::kBar});
  progress.update(0.5, "a long status");
  progress.update(1.0, "short");
  progress.finish();
  const std::string text = out.str();
  CHECK(count(text, '\r') == 2);
  CHECK(count(text, '\n') == 1);
  CHECK(text.ends_with("\n"));
  CHECK(text.find("[############............] a long status") != std::string::npos);
  // The shorter status covers what remained of the longer one.
  const std::string last = text.substr(text.rfind('\r') + 1);
  CHECK(last.starts_with("[########################] short"));
  CHECK(last.size() == std::string("[############............] a long status\n").size());
}

TEST_CASE("Quiet progress prints nothing, not even at the end") {
  std::ostringstream out;
  Progress progress(out, {.style = ProgressStyle::kQuiet, .line_interval_s = 0});
  progress.update(0.5, "update 1");
  progress.finish();
  CHECK(out.str().empty());
  CHECK(stderr_progress_style(true) == ProgressStyle::kQuiet);
}

}  // namespace
}  // namespace dynamix
