// The oracle's schedule search and the schedule policy it returns.
#include "studies/oracle.h"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>

#include "gym/env_knobs.h"
#include "gym/scenario_source.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

TEST_CASE("A schedule reads and prints as schedule:B/E:B and refuses what is not one") {
  const SchedulePolicy policy = SchedulePolicy::parse("64/10:128/30.5:256", "--policies");
  REQUIRE(policy.phases().size() == 3);
  CHECK(policy.phases()[2].from_epoch == 30.5);
  CHECK(policy.name() == "schedule:64/10:128/30.5:256");
  CHECK(policy.initial_batch() == 64);
  for (const char* bad : {"", "0", "64/", "10:64", "64/10:128/5:256", "64/nan:128", "64/10:x",
                          "64/10:-5", "64/-1:128"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(SchedulePolicy::parse(bad, "--policies"), InputError);
  }
}

TEST_CASE("parallel_for visits every index once and rethrows the first error by index") {
  std::vector<std::atomic<int>> visits(100);
  parallel_for(100, 3, [&](int i) { ++visits[static_cast<std::size_t>(i)]; });
  for (const auto& v : visits) CHECK(v == 1);
  CHECK_THROWS_WITH(parallel_for(10, 2,
                                 [](int i) {
                                   if (i == 3 || i == 7)
                                     throw std::runtime_error(std::to_string(i));
                                 }),
                    "3");
}

TEST_CASE(
    "The oracle finds a schedule that reaches on every seed, at least as fast as any "
    "constant one, the same whatever the threads") {
  const auto scenario = std::make_shared<const Scenario>(load_scenario(
      kDefaultScenario, {"training.target_accuracy=0.6", "training.budget_epochs=20"}));
  OracleOptions options;
  options.levels = {32, 64, 128, 256};
  options.switch_fractions = {0.3, 0.6};
  options.finalists = 2;
  const OracleResult one = search_schedules(scenario, evaluation_env_options(), 1, 2, options);
  options.jobs = 2;
  const OracleResult two = search_schedules(scenario, evaluation_env_options(), 1, 2, options);
  REQUIRE(one.best);
  REQUIRE(two.best);
  CHECK(one.best->name == two.best->name);
  CHECK(one.best->mean_time_s == two.best->mean_time_s);
  CHECK(one.best->reached == 2);
  CHECK(one.tried.size() == two.tried.size());
  for (const ScheduleOutcome& outcome : one.tried) {
    if (outcome.phases.size() == 1 && outcome.seeds == 2 && outcome.reached == 2) {
      CHECK(one.best->mean_time_s <= outcome.mean_time_s);
    }
  }
  bool three_phase = false;
  for (const ScheduleOutcome& outcome : one.tried) three_phase |= outcome.phases.size() == 3;
  CHECK(three_phase);
}

}  // namespace
}  // namespace dynamix
