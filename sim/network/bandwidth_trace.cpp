// CSV loading and lookup of background-traffic traces.
#include "sim/network/bandwidth_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

constexpr std::string_view kTimeColumn = "time_s";
constexpr std::string_view kBackgroundColumn = "background_gbps";
/// Rows closer than this would cost an event per row per cycle of a repeating trace (a 1 ns
/// step made one iteration take 32 s and 2 GB); a trace longer than this is not a trace of
/// cross traffic any more, and keeps offsets far inside int64 nanoseconds.
constexpr Duration kMinStep = std::chrono::milliseconds(1);
constexpr double kMaxTimeSeconds = 1e6;

double parse_number(std::string_view field, const std::string& path, int line,
                    std::string_view column) {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc{} || end != field.data() + field.size() ||
      !std::isfinite(value)) {
    throw InputError(path, line, std::string(column), "a number",
                     field.empty() ? "nothing" : "'" + std::string(field) + "'");
  }
  return value;
}

}  // namespace

BandwidthTrace BandwidthTrace::load(const std::string& path) {
  const std::string text = read_text(path);
  const std::string expected_header =
      std::string(kTimeColumn) + "," + std::string(kBackgroundColumn);
  BandwidthTrace trace;
  bool header_seen = false;
  int line_number = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto newline = text.find('\n', begin);
    const std::string_view line = trim(std::string_view(text).substr(begin, newline - begin));
    begin = newline == std::string::npos ? text.size() : newline + 1;
    ++line_number;
    if (line.empty()) continue;

    const auto fields = split_fields(line);
    if (!header_seen) {
      if (fields.size() != 2 || fields[0] != kTimeColumn || fields[1] != kBackgroundColumn) {
        throw InputError(path, line_number, "header", "'" + expected_header + "'",
                         "'" + std::string(line) + "'");
      }
      header_seen = true;
      continue;
    }
    if (fields.size() != 2) {
      throw InputError(path, line_number, "", "2 columns (" + expected_header + ")",
                       std::to_string(fields.size()));
    }
    const double time_s = parse_number(fields[0], path, line_number, kTimeColumn);
    const double background_gbps = parse_number(fields[1], path, line_number, kBackgroundColumn);
    if (time_s < 0 || time_s > kMaxTimeSeconds) {
      throw InputError(path, line_number, std::string(kTimeColumn),
                       "a time in [0, 1e6] s (about 11.6 days)", std::string(fields[0]));
    }
    const Duration offset = from_seconds(time_s);
    if (trace.steps.empty() && offset.count() != 0) {
      throw InputError(path, line_number, std::string(kTimeColumn), "0 on the first row",
                       std::string(fields[0]));
    }
    if (!trace.steps.empty() && offset < trace.steps.back().offset + kMinStep) {
      throw InputError(path, line_number, std::string(kTimeColumn),
                       "a time after the previous row's " +
                           std::to_string(to_seconds(trace.steps.back().offset)) +
                           " s, by at least 0.001 s",
                       std::string(fields[0]));
    }
    if (background_gbps < 0) {
      throw InputError(path, line_number, std::string(kBackgroundColumn), "a number >= 0",
                       std::string(fields[1]));
    }
    trace.steps.push_back({offset, background_gbps});
  }
  if (!header_seen) {
    throw InputError(path, 1, "", "a trace with header '" + expected_header + "'", "an empty file");
  }
  if (trace.steps.empty()) {
    throw InputError(path, line_number + 1, "", "at least one row after the header", "end of file");
  }
  return trace;
}

Duration BandwidthTrace::period() const {
  DYNAMIX_CHECK(!steps.empty(), "empty bandwidth trace");
  return steps.back().offset;
}

double BandwidthTrace::background_gbps_at(Duration offset) const {
  DYNAMIX_CHECK(!steps.empty(), "empty bandwidth trace");
  if (offset.count() < 0) return steps.front().background_gbps;
  if (repeat && period().count() > 0) offset %= period();
  const auto after = std::upper_bound(
      steps.begin(), steps.end(), offset,
      [](Duration value, const BandwidthStep& step) { return value < step.offset; });
  return std::prev(after)->background_gbps;
}

}  // namespace dynamix
