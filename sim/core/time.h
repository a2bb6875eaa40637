// Simulated time: integer nanoseconds, with seconds only at export edges.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/core/check.h"

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

/// Nanoseconds as an int64, saturating at the ends of its range (infinities included), so that
/// no conversion is undefined; NaN is a broken invariant, as it can only come from a bug.
inline std::int64_t saturated_nanoseconds(double nanoseconds) {
  constexpr double kLimit = 9.2e18;  // just below 2^63, exactly representable in a double
  DYNAMIX_CHECK(!std::isnan(nanoseconds), "a duration of NaN seconds");
  if (nanoseconds >= kLimit) return std::numeric_limits<std::int64_t>::max();
  if (nanoseconds <= -kLimit) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(nanoseconds);
}

/// The nearest whole nanosecond to a number of seconds, saturated to what int64 can hold.
inline Duration from_seconds(double seconds) {
  return Duration{saturated_nanoseconds(std::round(seconds * 1e9))};
}

/// Rounds up, so that work that needs `seconds` is never reported done early; saturated.
inline Duration ceil_seconds(double seconds) {
  return Duration{saturated_nanoseconds(std::ceil(seconds * 1e9))};
}

}  // namespace dynamix
