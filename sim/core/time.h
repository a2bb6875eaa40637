// Simulated time: integer nanoseconds, with seconds only at export edges.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

namespace dynamix {

/// A span of simulated time, in integer nanoseconds.
using Duration = std::chrono::duration<std::int64_t, std::nano>;

/// The clock of a simulation; its epoch is the start of the run.
struct SimClock {
  using rep = std::int64_t;
  using period = std::nano;
  using duration = Duration;
  using time_point = std::chrono::time_point<SimClock, Duration>;
  static constexpr bool is_steady = true;
};

/// A point in simulated time.
using TimePoint = SimClock::time_point;

inline constexpr TimePoint kTimeZero{};
inline constexpr TimePoint kTimeInfinity{Duration{std::numeric_limits<std::int64_t>::max()}};

/// Seconds as a double, for export and for rate arithmetic.
inline constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) * 1e-9; }
inline constexpr double to_seconds(TimePoint t) { return to_seconds(t.time_since_epoch()); }

/// The nearest whole nanosecond to a (finite, non-negative or negative) number of seconds.
inline Duration from_seconds(double seconds) {
  return Duration{static_cast<std::int64_t>(std::llround(seconds * 1e9))};
}

/// Rounds up, so that work that needs `seconds` is never reported done early.
inline Duration ceil_seconds(double seconds) {
  return Duration{static_cast<std::int64_t>(std::ceil(seconds * 1e9))};
}

}  // namespace dynamix
