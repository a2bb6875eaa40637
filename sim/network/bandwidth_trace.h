// Background cross-traffic over time on one link: a piecewise-constant trace from a CSV file.
#pragma once

#include <string>
#include <vector>

#include "sim/core/time.h"

namespace dynamix {

/// From `offset` after the trace starts, `background_gbps` of cross traffic (until the next step).
struct BandwidthStep {
  Duration offset{};
  double background_gbps = 0;
};

/// Steps with strictly increasing offsets, the first at 0, every background >= 0. Loaded
/// traces also have rows at least 1 ms apart and no offset above 1e6 s.
struct BandwidthTrace {
  std::vector<BandwidthStep> steps;
  /// Replays the trace in cycles of period(): the last step then only marks the period's end.
  bool repeat = false;

  /// Reads CSV with the header `time_s,background_gbps` (through read_text, so "embedded:/"
  /// paths work); an InputError names the file, line and column of any bad value.
  static BandwidthTrace load(const std::string& path);

  /// The offset of the last step.
  Duration period() const;
  /// The background at `offset` after the start (cycling if the trace repeats).
  double background_gbps_at(Duration offset) const;
};

}  // namespace dynamix
