// PreemptionSchedule: deterministic per seed, notices before departures, returns after them.
#include "sim/cluster/preemption.h"

#include <doctest/doctest.h>

#include <vector>

namespace dynamix {
namespace {

PreemptionOptions often() {
  return {.rate_per_hour = 30, .notice_s = 30, .mean_absence_s = 60, .reconfiguration_s = 10};
}

TimePoint at(double seconds) { return kTimeZero + ceil_seconds(seconds); }

TEST_CASE("The same seed gives the same preemption timeline, another seed another") {
  const PreemptionSchedule a(often(), 8, 7), b(often(), 8, 7), c(often(), 8, 8);
  const std::vector<Preemption> timeline = a.timeline(at(3600));
  CHECK(timeline.size() > 20);
  CHECK(timeline == b.timeline(at(3600)));
  CHECK(timeline != c.timeline(at(3600)));
}

TEST_CASE("A worker leaves notice_s after its notice and returns after it left") {
  const PreemptionSchedule schedule(often(), 4, 1);
  for (const Preemption& absence : schedule.timeline(at(7200))) {
    CHECK(absence.departure - absence.notice == ceil_seconds(30));
    CHECK(absence.comeback > absence.departure);
  }
}

TEST_CASE("A worker's next notice comes after its return") {
  const PreemptionSchedule schedule(often(), 1, 3);
  const std::vector<Preemption> timeline = schedule.timeline(at(36000));
  REQUIRE(timeline.size() > 2);
  for (std::size_t i = 1; i < timeline.size(); ++i)
    CHECK(timeline[i].notice > timeline[i - 1].comeback);
}

TEST_CASE("Querying the schedule walks the same timeline") {
  PreemptionSchedule schedule(often(), 2, 5);
  const std::vector<Preemption> timeline = schedule.timeline(at(3600));
  for (const Preemption& absence : timeline) {
    if (absence.worker != 0) continue;
    CHECK(schedule.current(0, absence.notice) == absence);
    CHECK(schedule.current(0, absence.departure) == absence);
  }
}

TEST_CASE("A rate of 0 preempts nobody and rejoin false keeps a worker away") {
  PreemptionOptions off = often();
  off.rate_per_hour = 0;
  CHECK(PreemptionSchedule(off, 16, 1).timeline(at(1e6)).empty());
  PreemptionOptions gone = often();
  gone.rejoin = false;
  const std::vector<Preemption> timeline = PreemptionSchedule(gone, 4, 1).timeline(at(1e6));
  CHECK(timeline.size() == 4);
  for (const Preemption& absence : timeline) CHECK(absence.comeback == kTimeInfinity);
}

}  // namespace
}  // namespace dynamix
