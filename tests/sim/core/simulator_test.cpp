// Simulator clock, scheduling and independence across threads.
#include "sim/core/simulator.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <thread>
#include <vector>

#include "sim/core/check.h"
#include "sim/core/random.h"

namespace dynamix {
namespace {

TEST_CASE("Simulator advances its clock to each event and runs until a time") {
  Simulator sim;
  std::vector<std::int64_t> seen;
  sim.schedule_after(Duration{30}, [&] { seen.push_back(sim.now().time_since_epoch().count()); });
  sim.schedule_at(TimePoint{Duration{10}}, [&] {
    seen.push_back(sim.now().time_since_epoch().count());
    sim.schedule_after(Duration{5}, [&] { seen.push_back(sim.now().time_since_epoch().count()); });
  });
  sim.run_until(TimePoint{Duration{20}});
  CHECK(seen == std::vector<std::int64_t>{10, 15});
  CHECK(sim.now() == TimePoint{Duration{20}});
  sim.run();
  CHECK(seen == std::vector<std::int64_t>{10, 15, 30});
  CHECK(sim.events_fired() == 3);
}

TEST_CASE("Simulator refuses to run until a time in the past") {
  Simulator sim;
  sim.run_until(TimePoint{Duration{100}});
  CHECK_THROWS_AS(sim.run_until(TimePoint{Duration{50}}), std::invalid_argument);
}

TEST_CASE("Simulator refuses to schedule before now") {
  Simulator sim;
  sim.run_until(TimePoint{Duration{100}});
  CHECK_THROWS_AS(sim.schedule_at(TimePoint{Duration{10}}, [] {}), InvariantError);
}

TEST_CASE("Simulator cancel keeps a cancelled event from firing; stop ends run") {
  Simulator sim;
  int fired = 0;
  const EventId id = sim.schedule_after(Duration{10}, [&] { ++fired; });
  sim.schedule_after(Duration{5}, [&] { sim.stop(); });
  sim.schedule_after(Duration{20}, [&] { ++fired; });
  CHECK(sim.cancel(id));
  sim.run();
  CHECK(fired == 0);
  sim.run();
  CHECK(fired == 1);
}

std::vector<std::int64_t> random_cascade(std::uint64_t seed) {
  Simulator sim;
  Rng rng(seed, 0);
  std::vector<std::int64_t> trace;
  std::function<void()> spawn = [&] {
    trace.push_back(sim.now().time_since_epoch().count());
    if (trace.size() < 2000) {
      sim.schedule_after(Duration{static_cast<std::int64_t>(rng.below(1000))}, spawn);
      if (rng.bernoulli(0.5))
        sim.schedule_after(Duration{static_cast<std::int64_t>(rng.below(50))}, spawn);
    }
  };
  sim.schedule_at(kTimeZero, spawn);
  sim.run();
  return trace;
}

TEST_CASE("Independent simulators on threads give the same results as alone") {
  const auto alone = random_cascade(42);
  std::vector<std::vector<std::int64_t>> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&results, i] { results[i] = random_cascade(42); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) CHECK(result == alone);
  CHECK(random_cascade(43) != alone);
}

}  // namespace
}  // namespace dynamix
