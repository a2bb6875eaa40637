// CSV loading and lookup of background-traffic traces.
#include "sim/network/bandwidth_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "sim/core/check.h"
#include "sim/io/csv_table.h"
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

/// The step of one row, after `steps` (the rows before it).
BandwidthStep parse_step(const CsvRow& row, const std::vector<BandwidthStep>& steps) {
  const std::string& path = row.path();
  const int line = row.line();
  const std::string_view time_text = row.field(0);
  const std::string_view background_text = row.field(1);
  const double time_s = parse_number(time_text, path, line, kTimeColumn);
  const double background_gbps = parse_number(background_text, path, line, kBackgroundColumn);
  if (time_s < 0 || time_s > kMaxTimeSeconds) {
    throw InputError(path, line, std::string(kTimeColumn), "a time in [0, 1e6] s (about 11.6 days)",
                     std::string(time_text));
  }
  const Duration offset = from_seconds(time_s);
  if (steps.empty() && offset.count() != 0) {
    throw InputError(path, line, std::string(kTimeColumn), "0 on the first row",
                     std::string(time_text));
  }
  if (!steps.empty() && offset < steps.back().offset + kMinStep) {
    throw InputError(path, line, std::string(kTimeColumn),
                     "a time after the previous row's " +
                         std::to_string(to_seconds(steps.back().offset)) +
                         " s, by at least 0.001 s",
                     std::string(time_text));
  }
  if (background_gbps < 0) {
    throw InputError(path, line, std::string(kBackgroundColumn), "a number >= 0",
                     std::string(background_text));
  }
  return {offset, background_gbps};
}

}  // namespace

BandwidthTrace BandwidthTrace::load(const std::string& path) {
  const std::string expected_header =
      std::string(kTimeColumn) + "," + std::string(kBackgroundColumn);
  BandwidthTrace trace;
  const CsvScan scan = read_csv(
      path,
      [&](const CsvColumns&, std::string_view line, int line_number) {
        const auto fields = split_fields(line);
        if (fields.size() != 2 || fields[0] != kTimeColumn || fields[1] != kBackgroundColumn) {
          throw InputError(path, line_number, "header", "'" + expected_header + "'",
                           "'" + std::string(line) + "'");
        }
      },
      [&](const CsvRow& row) {
        if (row.size() != 2) {
          throw InputError(path, row.line(), "", "2 columns (" + expected_header + ")",
                           std::to_string(row.size()));
        }
        trace.steps.push_back(parse_step(row, trace.steps));
      },
      {.comments = false, .check_width = false});
  if (!scan.header) {
    throw InputError(path, 1, "", "a trace with header '" + expected_header + "'", "an empty file");
  }
  if (trace.steps.empty()) {
    throw InputError(path, scan.lines + 1, "", "at least one row after the header", "end of file");
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
