// Preemption: per-worker Poisson notices, a fixed notice period, exponential absences.
#include "sim/cluster/preemption.h"

#include <algorithm>
#include <tuple>

#include "sim/core/check.h"

namespace dynamix {
namespace {

// Beyond ~30 years of simulated time nothing is simulated; capping also keeps the integer
// nanoseconds from overflowing.
constexpr double kNeverSeconds = 1e9;

TimePoint after(TimePoint from, double seconds) {
  if (from == kTimeInfinity || to_seconds(from) + seconds > kNeverSeconds) return kTimeInfinity;
  return from + ceil_seconds(seconds);
}

}  // namespace

PreemptionSchedule::PreemptionSchedule(const PreemptionOptions& options, std::size_t workers,
                                       std::uint64_t seed)
    : options_(options) {
  DYNAMIX_CHECK(options.notice_s >= 0 && options.mean_absence_s > 0,
                "notice_s " << options.notice_s << " mean_absence_s " << options.mean_absence_s);
  cursors_.reserve(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    Cursor cursor{
        Rng(seed, stream_id("preemption", w)),
        {.worker = w, .notice = kTimeZero, .departure = kTimeZero, .comeback = kTimeZero}};
    draw_next(cursor);
    cursors_.push_back(cursor);
  }
}

void PreemptionSchedule::draw_next(Cursor& cursor) const {
  Preemption& absence = cursor.absence;
  if (!options_.enabled() || absence.comeback == kTimeInfinity) {
    absence.notice = absence.departure = absence.comeback = kTimeInfinity;
    return;
  }
  const double gap_s = cursor.rng.exponential(options_.rate_per_hour / 3600);
  const double away_s = cursor.rng.exponential(1 / options_.mean_absence_s);
  absence.notice = after(absence.comeback, gap_s);
  absence.departure = after(absence.notice, options_.notice_s);
  // A worker is away at least one nanosecond, so that every absence is a membership change.
  absence.comeback =
      options_.rejoin ? after(absence.departure, std::max(away_s, 1e-9)) : kTimeInfinity;
}

const Preemption& PreemptionSchedule::current(std::size_t worker, TimePoint now) {
  DYNAMIX_CHECK(worker < cursors_.size(), "worker " << worker << " of " << cursors_.size());
  Cursor& cursor = cursors_[worker];
  while (cursor.absence.comeback <= now) draw_next(cursor);
  return cursor.absence;
}

std::vector<Preemption> PreemptionSchedule::timeline(TimePoint until) const {
  std::vector<Preemption> events;
  for (Cursor cursor : cursors_) {
    while (cursor.absence.notice < until) {
      events.push_back(cursor.absence);
      if (cursor.absence.comeback == kTimeInfinity) break;
      draw_next(cursor);
    }
  }
  std::sort(events.begin(), events.end(), [](const Preemption& a, const Preemption& b) {
    return std::tie(a.notice, a.worker) < std::tie(b.notice, b.worker);
  });
  return events;
}

}  // namespace dynamix
